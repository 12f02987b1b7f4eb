// Package status summarizes a running KNS-3 install for `kubectl kns3
// status`: the scheduler pods its install made, each KNS-3 profile's state
// as its scheduler published it (breaker, cycles, fallbacks, the
// simulator), and the newest placement events. Building and printing are
// pure functions of what the caller fetched.
package status

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/kubectl-kns3/pkg/explain"
	"kns3.dev/kns3/kubectl-kns3/pkg/safetext"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
)

// Status is `kubectl kns3 status`'s answer, also its JSON and YAML output.
type Status struct {
	metav1.TypeMeta `json:",inline"`
	// Install is the install's kind and namespace.
	Install   string `json:"install"`
	Namespace string `json:"namespace"`
	Pods      []Pod  `json:"pods"`
	// PodsError says why the pods could not be listed.
	PodsError string `json:"podsError,omitempty"`
	// Ignored are pods wearing KNS-3's label that its install did not make.
	Ignored []string `json:"ignored,omitempty"`
	// Profiles are as their schedulers published them; StatusError says
	// why there are none.
	Profiles    []Profile `json:"profiles"`
	StatusError string    `json:"statusError,omitempty"`
	// Placements are the newest placement events, newest first.
	Placements []Placement `json:"placements"`
}

// Pod is one scheduler pod.
type Pod struct {
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	Node           string `json:"node"`
	Phase          string `json:"phase"`
	SchedulerReady bool   `json:"schedulerReady"`
	SimulatorReady bool   `json:"simulatorReady"`
	Restarts       int32  `json:"restarts"`
	// Publishing: this pod wrote the published status (the leader).
	Publishing bool `json:"publishing"`
}

// Profile is one profile's CustomScorePlugin.
type Profile struct {
	Name string `json:"name"`
	// Instance published it at Published; Stale when that is longer ago
	// than its heartbeat allows.
	Instance  string    `json:"instance"`
	Published time.Time `json:"published"`
	Stale     bool      `json:"stale"`
	// RefreshMode and Normalization are the plugin's args; Breaker is
	// closed or open (none in Background mode).
	RefreshMode   string `json:"refreshMode"`
	Normalization string `json:"normalization"`
	Breaker       string `json:"breaker,omitempty"`
	// ScoredCycles and Fallbacks count cycles scored with and without a
	// simulation since the plugin started; FallbacksTotal is the sum.
	ScoredCycles   int64            `json:"scoredCycles"`
	Fallbacks      map[string]int64 `json:"fallbacks"`
	FallbacksTotal int64            `json:"fallbacksTotal"`
	Simulator      Simulator        `json:"simulator"`
}

// Simulator is what the profile's plugin knows of its simulator.
type Simulator struct {
	Down        bool      `json:"down"`
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	LastFailure time.Time `json:"lastFailure,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	// The newest simulation's metadata and size; Received is zero
	// without one.
	Received      time.Time `json:"received,omitzero"`
	Source        string    `json:"source,omitempty"`
	Timestamp     time.Time `json:"timestamp,omitzero"`
	WindowSeconds int       `json:"windowSeconds,omitempty"`
	Nodes         int       `json:"nodes"`
}

// Placement is one placement event.
type Placement struct {
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Message   string    `json:"message"`
}

// Build summarizes in, at now, with its placement events.
func Build(in *installclient.Install, events []v1.Event, now time.Time) *Status {
	s := &Status{Install: string(in.Kind), Namespace: in.Namespace, PodsError: in.PodsError, Ignored: in.Ignored, StatusError: in.StatusError}
	for _, p := range in.Pods {
		s.Pods = append(s.Pods, Pod{
			Namespace: p.Pod.Namespace, Name: p.Pod.Name, Node: p.Pod.Spec.NodeName, Phase: string(p.Pod.Status.Phase),
			SchedulerReady: p.SchedulerReady, SimulatorReady: p.SimulatorReady, Restarts: p.Restarts, Publishing: p.Publishing,
		})
	}
	for _, doc := range in.Profiles {
		s.Profiles = append(s.Profiles, profileOf(doc, now))
	}
	s.Placements = Placements(events)
	return s
}

func profileOf(doc schedstatus.ProfileStatus, now time.Time) Profile {
	p := Profile{
		Name: doc.Profile, Instance: doc.Instance, Published: doc.Published, Stale: installclient.Stale(doc, now),
		RefreshMode: doc.RefreshMode, Normalization: doc.Normalization, Breaker: doc.Breaker,
		ScoredCycles: doc.ScoredCycles, Fallbacks: maps.Clone(doc.Fallbacks),
	}
	if p.Fallbacks == nil {
		p.Fallbacks = map[string]int64{}
	}
	for _, v := range p.Fallbacks {
		p.FallbacksTotal += v
	}
	sim := doc.Simulator
	p.Simulator = Simulator{Down: sim.Down(), LastSuccess: sim.LastSuccess, LastFailure: sim.LastFailure, LastError: sim.LastError}
	if s := sim.Simulation; s != nil {
		p.Simulator.Received, p.Simulator.Source, p.Simulator.Timestamp, p.Simulator.WindowSeconds = s.Received, s.Source, s.Timestamp, s.WindowSeconds
		p.Simulator.Nodes = len(s.MilliScores) + s.Omitted
	}
	return p
}

// Placements turns placement events into placements, newest first.
func Placements(events []v1.Event) []Placement {
	out := make([]Placement, 0, len(events))
	for _, e := range events {
		out = append(out, Placement{Time: installclient.EventTime(&e), Namespace: e.InvolvedObject.Namespace, Pod: e.InvolvedObject.Name, Message: e.Message})
	}
	slices.SortStableFunc(out, func(a, b Placement) int { return b.Time.Compare(a.Time) })
	return out
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
	out.Ignored = slices.Clone(s.Ignored)
	out.Placements = slices.Clone(s.Placements)
	out.Profiles = make([]Profile, len(s.Profiles))
	for i, p := range s.Profiles {
		p.Fallbacks = maps.Clone(p.Fallbacks)
		out.Profiles[i] = p
	}
	return &out
}

// Print writes s for a person, at now: a table per part, each aligned on
// its own. Text from the cluster and the simulator is escaped.
func Print(w io.Writer, s *Status, now time.Time) error {
	ago := func(t time.Time) string { return now.Sub(t).Round(time.Second).String() + " ago" }
	fmt.Fprintf(w, "KNS-3 install: %s, namespace %s.\n\n", s.Install, s.Namespace)
	switch {
	case s.PodsError != "":
		fmt.Fprintf(w, "Scheduler pods: unknown (%s).\n", safetext.Line(s.PodsError))
	case len(s.Pods) == 0:
		fmt.Fprintln(w, "Scheduler pods: none.")
	default:
		tw := printers.GetNewTabWriter(w)
		fmt.Fprintln(tw, "SCHEDULER POD\tNODE\tSCHEDULER\tSIMULATOR\tRESTARTS\tPUBLISHING")
		for _, p := range s.Pods {
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%d\t%s\n", p.Namespace, p.Name, p.Node, readiness(p.SchedulerReady), readiness(p.SimulatorReady), p.Restarts, yes(p.Publishing))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if len(s.Profiles) == 0 {
		fmt.Fprintf(w, "Profiles: none published (%s).\n", safetext.Line(s.StatusError))
	} else {
		tw := printers.GetNewTabWriter(w)
		fmt.Fprintln(tw, "PROFILE\tMODE\tBREAKER\tSCORED CYCLES\tFALLBACKS\tBY REASON\tPUBLISHED")
		for _, p := range s.Profiles {
			breaker := p.Breaker
			if breaker == "" {
				breaker = "-"
			}
			published := ago(p.Published) + " by " + safetext.Line(p.Instance)
			if p.Stale {
				published += " (stale: the scheduler stopped publishing)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", safetext.Line(p.Name), p.RefreshMode, breaker, p.ScoredCycles, p.FallbacksTotal, reasons(p.Fallbacks), published)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, p := range s.Profiles {
			fmt.Fprintf(w, "Simulator (%s): %s\n", safetext.Line(p.Name), simulatorLine(p.Simulator, ago))
		}
	}
	fmt.Fprintln(w)
	if len(s.Placements) == 0 {
		fmt.Fprintln(w, "Last placements: none (events expire, by default after an hour)")
		return nil
	}
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "LAST PLACEMENTS\tAGE\tPLACEMENT")
	for _, p := range s.Placements {
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", p.Namespace, p.Pod, now.Sub(p.Time).Round(time.Second), safetext.Line(p.Message))
	}
	return tw.Flush()
}

func simulatorLine(s Simulator, ago func(time.Time) string) string {
	var out string
	switch {
	case s.Down:
		out = fmt.Sprintf("down: the last request, %s, failed: %s", ago(s.LastFailure), safetext.Line(s.LastError))
	case !s.LastSuccess.IsZero():
		out = "answered " + ago(s.LastSuccess)
	default:
		out = "not asked yet"
	}
	if s.Received.IsZero() {
		return out + "; no simulation yet."
	}
	return fmt.Sprintf("%s; newest simulation received %s: %s, %d nodes scored.", out, ago(s.Received),
		explain.Describe(s.Source, s.Timestamp, s.WindowSeconds), s.Nodes)
}

func readiness(ready bool) string {
	if ready {
		return "ready"
	}
	return "not ready"
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

func reasons(m map[string]int64) string {
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
		parts[i] = fmt.Sprintf("%s=%d", safetext.Line(k), m[k])
	}
	return strings.Join(parts, ",")
}
