// Package status summarizes a running KNS-3 install for `kubectl kns3
// status`: the scheduler pod, each KNS-3 profile's breaker and fallbacks
// from the scheduler's metrics, the simulator's current answer, and the
// newest placement events. Parsing and printing are pure functions of what
// the caller fetched.
package status

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
)

// Status is `kubectl kns3 status`'s answer, also its JSON and YAML output.
type Status struct {
	metav1.TypeMeta `json:",inline"`
	Pods            []Pod `json:"pods"`
	// Profiles is empty when the metrics could not be read (MetricsError).
	Profiles     []Profile `json:"profiles"`
	MetricsError string    `json:"metricsError,omitempty"`
	// Simulator is nil when the simulator gave no answer (SimulatorError).
	Simulator      *Simulator `json:"simulator,omitempty"`
	SimulatorError string     `json:"simulatorError,omitempty"`
	// Placements are the newest placement events, newest first.
	Placements []Placement `json:"placements"`
}

// Pod is one KNS-3 pod.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Phase     string `json:"phase"`
	Ready     bool   `json:"ready"`
	Restarts  int32  `json:"restarts"`
}

// Profile is one profile's CustomScorePlugin, from the kns3_simulator_*
// series of the scheduler's metrics.
type Profile struct {
	Name string `json:"name"`
	// Breaker is "closed" or "open" (kns3_simulator_breaker_state).
	Breaker string `json:"breaker"`
	// Fallbacks counts cycles scored without the simulator since the
	// scheduler started, by reason; FallbacksTotal is their sum.
	Fallbacks      map[string]float64 `json:"fallbacks"`
	FallbacksTotal float64            `json:"fallbacksTotal"`
	// ScoredCycles counts cycles scored with a simulation.
	ScoredCycles float64 `json:"scoredCycles"`
}

// Simulator is the simulator's current answer.
type Simulator struct {
	Source        string    `json:"source"`
	Timestamp     time.Time `json:"timestamp"`
	WindowSeconds int       `json:"windowSeconds"`
	Nodes         int       `json:"nodes"`
}

// Placement is one placement event.
type Placement struct {
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Message   string    `json:"message"`
}

// PodOf summarizes a KNS-3 pod.
func PodOf(p *v1.Pod, ready bool) Pod {
	out := Pod{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, Phase: string(p.Status.Phase), Ready: ready}
	for _, c := range p.Status.ContainerStatuses {
		out.Restarts += c.RestartCount
	}
	return out
}

// ParseMetrics reads each profile's CustomScorePlugin series from a
// Prometheus text exposition (the scheduler's /metrics).
func ParseMetrics(r io.Reader) ([]Profile, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing the scheduler's metrics: %w", err)
	}
	byName := map[string]*Profile{}
	profile := func(m *dto.Metric) *Profile {
		name := label(m, "profile")
		p, ok := byName[name]
		if !ok {
			p = &Profile{Name: name, Breaker: "closed", Fallbacks: map[string]float64{}}
			byName[name] = p
		}
		return p
	}
	for _, m := range metrics(families, "kns3_simulator_breaker_state") {
		if m.GetGauge().GetValue() != 0 {
			profile(m).Breaker = "open"
		} else {
			profile(m)
		}
	}
	for _, m := range metrics(families, "kns3_simulator_fallbacks_total") {
		p := profile(m)
		v := m.GetCounter().GetValue()
		p.Fallbacks[label(m, "reason")] += v
		p.FallbacksTotal += v
	}
	for _, m := range metrics(families, "kns3_simulator_scored_cycles_total") {
		profile(m).ScoredCycles += m.GetCounter().GetValue()
	}
	out := make([]Profile, 0, len(byName))
	for _, p := range byName {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func metrics(families map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if f, ok := families[name]; ok {
		return f.GetMetric()
	}
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Placements turns placement events into the newest n, newest first.
func Placements(events []v1.Event, n int) []Placement {
	out := make([]Placement, 0, len(events))
	for _, e := range events {
		out = append(out, Placement{Time: EventTime(&e), Namespace: e.InvolvedObject.Namespace, Pod: e.InvolvedObject.Name, Message: e.Message})
	}
	slices.SortStableFunc(out, func(a, b Placement) int { return b.Time.Compare(a.Time) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// EventTime is when an event last happened, whichever API wrote it: an
// events.k8s.io writer (the scheduler) sets eventTime and series, a core
// one lastTimestamp.
func EventTime(e *v1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.EventTime.Time, e.LastTimestamp.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}

// GroupVersion is the group and version -o json|yaml name the output with.
var GroupVersion = schema.GroupVersion{Group: "kns3.dev", Version: "v1alpha1"}

// SetKind names s for -o json|yaml: kubectl's printers want a kind.
func (s *Status) SetKind() *Status {
	s.TypeMeta.SetGroupVersionKind(GroupVersion.WithKind("Status"))
	return s
}

// DeepCopyObject copies s, making it a runtime.Object for kubectl's printers.
func (s *Status) DeepCopyObject() runtime.Object {
	out := *s
	out.Pods = slices.Clone(s.Pods)
	out.Placements = slices.Clone(s.Placements)
	out.Profiles = make([]Profile, len(s.Profiles))
	for i, p := range s.Profiles {
		p.Fallbacks = make(map[string]float64, len(s.Profiles[i].Fallbacks))
		for k, v := range s.Profiles[i].Fallbacks {
			p.Fallbacks[k] = v
		}
		out.Profiles[i] = p
	}
	if s.Simulator != nil {
		sim := *s.Simulator
		out.Simulator = &sim
	}
	return &out
}

// Print writes s for a person: a table per part, each aligned on its own.
func Print(w io.Writer, s *Status, now time.Time) error {
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "SCHEDULER POD\tNODE\tREADY\tRESTARTS")
	for _, p := range s.Pods {
		fmt.Fprintf(tw, "%s/%s\t%s\t%t\t%d\n", p.Namespace, p.Name, p.Node, p.Ready, p.Restarts)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if s.MetricsError != "" {
		fmt.Fprintf(w, "Metrics: unavailable: %s\n", s.MetricsError)
	} else {
		tw = printers.GetNewTabWriter(w)
		fmt.Fprintln(tw, "PROFILE\tBREAKER\tSCORED CYCLES\tFALLBACKS\tBY REASON")
		for _, p := range s.Profiles {
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\n", p.Name, p.Breaker, p.ScoredCycles, p.FallbacksTotal, reasons(p.Fallbacks))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if s.Simulator != nil {
		fmt.Fprintf(w, "Simulator: source %q, sampled %s (%s ago) over a %ds window, %d nodes scored.\n",
			s.Simulator.Source, s.Simulator.Timestamp.UTC().Format(time.RFC3339), now.Sub(s.Simulator.Timestamp).Round(time.Second),
			s.Simulator.WindowSeconds, s.Simulator.Nodes)
	} else {
		fmt.Fprintf(w, "Simulator: down: %s\n", s.SimulatorError)
	}
	fmt.Fprintln(w)
	if len(s.Placements) == 0 {
		fmt.Fprintln(w, "Last placements: none (events expire, by default after an hour)")
		return nil
	}
	tw = printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "LAST PLACEMENTS\tAGE\tPLACEMENT")
	for _, p := range s.Placements {
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", p.Namespace, p.Pod, now.Sub(p.Time).Round(time.Second), p.Message)
	}
	return tw.Flush()
}

func reasons(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "-"
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%.0f", k, m[k])
	}
	return strings.Join(parts, ",")
}
