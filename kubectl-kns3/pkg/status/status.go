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
	"k8s.io/cli-runtime/pkg/printers"

	"kns3.dev/kns3/installclient"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/kubectl-kns3/pkg/explain"
	"kns3.dev/kns3/kubectl-kns3/pkg/safetext"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/score"
)

// Build summarizes in, at now, with its placement events.
func Build(in *installclient.Install, events []v1.Event, now time.Time) *output.Status {
	s := &output.Status{Install: string(in.Kind), Namespace: in.Namespace, PodsError: errText(in.PodsErr), Ignored: in.Ignored, StatusError: errText(in.StatusErr)}
	for _, p := range in.Pods {
		s.Pods = append(s.Pods, output.SchedulerPod{
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

func profileOf(doc schedstatus.ProfileStatus, now time.Time) output.Profile {
	p := output.Profile{
		Name: doc.Profile, Instance: doc.Instance, Published: metav1.NewTime(doc.Published), Stale: installclient.Stale(doc, now),
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
	p.Simulator = output.SimulatorStatus{Down: sim.Down(), LastSuccess: metav1.NewTime(sim.LastSuccess), LastFailure: metav1.NewTime(sim.LastFailure), LastError: sim.LastError}
	if s := sim.Simulation; s != nil {
		p.Simulator.Received, p.Simulator.Source, p.Simulator.Timestamp, p.Simulator.WindowSeconds = metav1.NewTime(s.Received), s.Source, metav1.NewTime(s.Timestamp), s.WindowSeconds
		p.Simulator.Nodes = len(s.MilliScores) + s.Omitted
	}
	for _, d := range doc.Drift {
		p.Drift = append(p.Drift, output.DriftedPod{
			Namespace: d.Namespace, Name: d.Name, Node: d.Node,
			ScoreThen: score.Float(d.MilliThen), ScoreNow: score.Float(d.MilliNow),
			Best: d.Best, BestScore: score.Float(d.MilliBest), Since: metav1.NewTime(d.Since),
		})
	}
	p.DriftOmitted = doc.DriftOmitted
	return p
}

// Placements turns placement events into placements, newest first.
func Placements(events []v1.Event) []output.Placement {
	out := make([]output.Placement, 0, len(events))
	for _, e := range events {
		out = append(out, output.Placement{Time: metav1.NewTime(installclient.EventTime(&e)), Namespace: e.InvolvedObject.Namespace, Pod: e.InvolvedObject.Name, Message: e.Message})
	}
	slices.SortStableFunc(out, func(a, b output.Placement) int { return b.Time.Compare(a.Time.Time) })
	return out
}

// Print writes s for a person, at now: a table per part, each aligned on
// its own. Every text from the cluster, the published status and the
// simulator is escaped.
func Print(w io.Writer, s *output.Status, now time.Time) error {
	ago := func(t metav1.Time) string { return now.Sub(t.Time).Round(time.Second).String() + " ago" }
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
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%d\t%s\n", safetext.Line(p.Namespace), safetext.Line(p.Name), safetext.Line(p.Node),
				readiness(p.SchedulerReady), readiness(p.SimulatorReady), p.Restarts, yes(p.Publishing))
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", safetext.Line(p.Name), safetext.Line(p.RefreshMode), safetext.Line(breaker),
				p.ScoredCycles, p.FallbacksTotal, reasons(p.Fallbacks), published)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, p := range s.Profiles {
			fmt.Fprintf(w, "Simulator (%s): %s\n", safetext.Line(p.Name), simulatorLine(p.Simulator, ago))
		}
		if err := printDrift(w, s.Profiles, ago); err != nil {
			return err
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
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", safetext.Line(p.Namespace), safetext.Line(p.Pod), now.Sub(p.Time.Time).Round(time.Second), safetext.Line(p.Message))
	}
	return tw.Flush()
}

// printDrift lists the drifted pods of every profile, or says there are none.
func printDrift(w io.Writer, profiles []output.Profile, ago func(metav1.Time) string) error {
	fmt.Fprintln(w)
	n := 0
	for _, p := range profiles {
		n += len(p.Drift) + p.DriftOmitted
	}
	if n == 0 {
		fmt.Fprintln(w, "Drifted pods: none (a running pod is listed once its node has scored below the best node it could run on, by the profile's margin, for longer than a window; KNS-3 never evicts).")
		return nil
	}
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "DRIFTED POD\tPROFILE\tNODE\tSCORE THEN\tSCORE NOW\tBEST NODE NOW\tSINCE")
	for _, p := range profiles {
		for _, d := range p.Drift {
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%.3f\t%.3f\t%s (%.3f)\t%s\n", safetext.Line(d.Namespace), safetext.Line(d.Name), safetext.Line(p.Name),
				safetext.Line(d.Node), d.ScoreThen, d.ScoreNow, safetext.Line(d.Best), d.BestScore, ago(d.Since))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range profiles {
		if p.DriftOmitted > 0 {
			fmt.Fprintf(w, "(%s: %d more drifted pods not listed)\n", safetext.Line(p.Name), p.DriftOmitted)
		}
	}
	fmt.Fprintln(w, "Advisory: KNS-3 never evicts; stale or missing measurements never count as drift.")
	return nil
}

func simulatorLine(s output.SimulatorStatus, ago func(metav1.Time) string) string {
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
		explain.Describe(s.Source, s.Timestamp.Time, s.WindowSeconds), s.Nodes)
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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
