package explain

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"k8s.io/cli-runtime/pkg/printers"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/kubectl-kns3/pkg/safetext"
)

// Print writes e for a person, at now: where the pod is (or why it
// waits), its placement event, the simulation, then a table with a row per
// node. Every text from the cluster, the published status and the
// simulator is escaped.
func Print(w io.Writer, e *output.Explanation, now time.Time) error {
	tw := printers.GetNewTabWriter(w)
	where := "is on " + safetext.Line(e.Node)
	if e.Node == "" {
		where = "is pending"
	}
	fmt.Fprintf(tw, "Pod %s/%s (scheduler %s) %s.\n", safetext.Line(e.Namespace), safetext.Line(e.Pod), safetext.Line(e.SchedulerName), where)
	if e.Node == "" {
		msg := e.LastFailedScheduling
		if msg == "" {
			msg = "none yet"
		}
		fmt.Fprintf(tw, "Last FailedScheduling: %s\n", safetext.Line(msg))
	}
	if e.PlacementEvent != "" {
		fmt.Fprintf(tw, "Placement event: %s\n", safetext.Line(e.PlacementEvent))
	} else if e.Node != "" {
		fmt.Fprintf(tw, "Placement event: none found (events expire, by default after an hour)\n")
	}
	switch s := e.Simulation; {
	case s != nil:
		fmt.Fprintf(tw, "Simulation: received by the scheduler %s ago; %s; normalization %s.\n",
			now.Sub(s.Received.Time).Round(time.Second), Describe(s.Source, s.Timestamp.Time, s.WindowSeconds), safetext.Line(e.Normalization))
		if s.Omitted > 0 {
			fmt.Fprintf(tw, "The scheduler's status leaves out the scores of %d lower-ranked nodes.\n", s.Omitted)
		}
	default:
		fmt.Fprintf(tw, "Simulation: none (%s); normalization %s.\n", safetext.Line(e.SimulatorError), safetext.Line(e.Normalization))
	}
	fmt.Fprintln(tw)
	// The metrics behind the scores, when the simulation gave any.
	withMetrics := slices.ContainsFunc(e.Nodes, func(r output.Row) bool {
		return r.LatencyMs != nil || r.BandwidthMbps != nil || r.PacketLoss != nil
	})
	metricsHeader := ""
	if withMetrics {
		metricsHeader = "LATENCY\tBANDWIDTH\tLOSS\t"
	}
	fmt.Fprintln(tw, "NODE\tKNS-3 FILTER\tSIMULATOR SCORE\t"+metricsHeader+"NORMALIZED\tRANK\tPOD\tREASON")
	for _, r := range e.Nodes {
		reason := r.FilterReason
		if r.Other != "" {
			if reason != "" {
				reason += "; "
			}
			reason += r.Other
		}
		score, normalized, rank, pod := "-", "-", "-", "-"
		if r.SimulatorScore != nil {
			score = strconv.FormatFloat(*r.SimulatorScore, 'f', 3, 64)
		}
		if r.NormalizedScore != nil {
			normalized = strconv.FormatInt(*r.NormalizedScore, 10)
		}
		if r.Rank > 0 {
			rank = strconv.Itoa(r.Rank)
		}
		if r.Chosen {
			pod = "here"
		}
		if withMetrics {
			bandwidth := metric(r.BandwidthMbps, "%.1f Mbit/s", 1)
			if r.BandwidthAtLeast && r.BandwidthMbps != nil {
				// A lower bound: the link is at least this fast.
				bandwidth = "≥ " + metric(r.BandwidthMbps, "%.0f Mbit/s", 1)
			}
			score += "\t" + metric(r.LatencyMs, "%.2f ms", 1) + "\t" + bandwidth + "\t" + metric(r.PacketLoss, "%.1f%%", 100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", safetext.Line(r.Node), r.Filter, score, normalized, rank, pod, safetext.Line(reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Resources, affinity and spread are the scheduler's to judge: the
	// placement event and FailedScheduling say what it found.
	_, err := fmt.Fprintln(w, "\nCandidates (normalized, ranked) are the nodes KNS-3's filter, taints and cordons leave; resources,\n"+
		"node and pod affinity and spread are not evaluated here: the placement event says what the scheduler found.")
	return err
}

// metric formats v×scale with format, "-" when unknown.
func metric(v *float64, format string, scale float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v*scale)
}

// Describe says what a simulation's own metadata says of it: where its
// numbers come from, when they were sampled, over what window.
func Describe(source string, sampled time.Time, windowSeconds int) string {
	out := `source "` + safetext.Line(source) + `"`
	if !sampled.IsZero() {
		out += ", sampled " + sampled.UTC().Format(time.RFC3339)
	}
	if windowSeconds > 0 {
		out += fmt.Sprintf(" over a %ds window", windowSeconds)
	}
	return out
}
