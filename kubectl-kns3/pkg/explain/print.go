package explain

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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
	fmt.Fprintf(tw, "Ranked by KNS-3's points, weight × normalized score: %s.\n", scoringLine(e))
	if line := decidedLine(e); line != "" {
		fmt.Fprintln(tw, line)
	}
	if e.Peers != nil {
		fmt.Fprintln(tw, peersLine(e.Peers))
	}
	fmt.Fprintln(tw)
	printTable(tw, e)
	if err := tw.Flush(); err != nil {
		return err
	}
	if slices.ContainsFunc(e.Nodes, func(r output.Row) bool { return r.OwnNeedMbps > 0 }) {
		fmt.Fprintln(w, "* less the pod's own need, which the status counts against its node and the cycle that placed it did not.")
	}
	if len(e.Caveats) > 0 {
		fmt.Fprintf(w, "\n%s, ranked first here, is not the pod's node. It may not be, because:\n", safetext.Line(firstRanked(e)))
		for _, c := range e.Caveats {
			fmt.Fprintf(w, "- %s\n", safetext.Line(c))
		}
	}
	for _, u := range e.Unrecomputed {
		fmt.Fprintf(w, "Not worked out: %s.\n", safetext.Line(u))
	}
	// Resources, pod affinity and spread are the scheduler's to judge:
	// the placement event and FailedScheduling say what it found.
	_, err := fmt.Fprintln(w, "\nCandidates (scored, ranked) are the nodes KNS-3's filter, taints, cordons and the pod's node affinity\n"+
		"leave; resources, pod affinity and spread are not evaluated here: the placement event says what the scheduler found.")
	return err
}

// scoringLine names the profile's KNS-3 plugins and their weights.
func scoringLine(e *output.Explanation) string {
	parts := make([]string, len(e.Scoring))
	for i, p := range e.Scoring {
		parts[i] = fmt.Sprintf("%s (weight %d)", safetext.Line(p.Name), p.Weight)
	}
	line := strings.Join(parts, " + ")
	if e.ScoringAssumed {
		line += ", assumed: the scheduler published none"
	} else {
		line += ", worked out from the status"
	}
	return line
}

// decidedLine says which KNS-3 plugin decided, and where that is read.
func decidedLine(e *output.Explanation) string {
	who := "none of KNS-3's plugins (the profile's other plugins, or the scheduler's pick among equals, chose the node)"
	if e.DecidedBy != "" {
		who = safetext.Line(e.DecidedBy)
	}
	against := ""
	if e.RunnerUp != "" {
		against = "; runner-up here: " + safetext.Line(e.RunnerUp)
	}
	switch e.DecidedFrom {
	case output.DecidedFromEvent:
		return fmt.Sprintf("Decided by %s, as the placement event says%s.", who, against)
	case output.DecidedFromStatus:
		return fmt.Sprintf("Decided by %s, as worked out here (the placement event does not say)%s.", who, against)
	}
	return ""
}

// firstRanked names the candidates ranked first.
func firstRanked(e *output.Explanation) string {
	var first []string
	for _, r := range e.Nodes {
		if r.Rank == 1 {
			first = append(first, r.Node)
		}
	}
	return strings.Join(first, ", ")
}

// printTable writes the header and a row per node.
func printTable(tw io.Writer, e *output.Explanation) {
	// The metrics behind the scores, and the links, when the simulation
	// gave any.
	withMetrics := slices.ContainsFunc(e.Nodes, func(r output.Row) bool {
		return r.LatencyMs != nil || r.BandwidthMbps != nil || r.PacketLoss != nil
	})
	withLinks := slices.ContainsFunc(e.Nodes, func(r output.Row) bool { return r.LinkUseMbps != nil || r.FreeMbps != nil })
	withPeers := slices.ContainsFunc(e.Nodes, func(r output.Row) bool { return r.PeersCost != nil })
	header := "NODE\tKNS-3 FILTER\tSIMULATOR SCORE\t"
	if withMetrics {
		header += "LATENCY\tBANDWIDTH\tLOSS\t"
	}
	if withLinks {
		header += "LINK USE\tFREE\t"
	}
	if withPeers {
		header += "PEERS COST\t"
	}
	for _, p := range e.Scoring {
		header += fmt.Sprintf("%s ×%d\t", strings.ToUpper(safetext.Line(p.Name)), p.Weight)
	}
	fmt.Fprintln(tw, header+"POINTS\tRANK\tPOD\tREASON")
	for _, r := range e.Nodes {
		reason := r.FilterReason
		if r.Other != "" {
			if reason != "" {
				reason += "; "
			}
			reason += r.Other
		}
		cells := []string{safetext.Line(r.Node), r.Filter, "-"}
		if r.SimulatorScore != nil {
			cells[2] = strconv.FormatFloat(*r.SimulatorScore, 'f', 3, 64)
		}
		if withMetrics {
			bandwidth := metric(r.BandwidthMbps, "%.1f Mbit/s", 1)
			if r.BandwidthAtLeast && r.BandwidthMbps != nil {
				// A lower bound: the link is at least this fast.
				bandwidth = "≥ " + metric(r.BandwidthMbps, "%.0f Mbit/s", 1)
			}
			cells = append(cells, metric(r.LatencyMs, "%.2f ms", 1), bandwidth, metric(r.PacketLoss, "%.1f%%", 100))
		}
		if withLinks {
			free := metric(r.FreeMbps, "%.1f Mbit/s", 1)
			if r.OwnNeedMbps > 0 {
				// The pod's own need, counted in the status, taken off.
				free += "*"
			}
			cells = append(cells, metric(r.LinkUseMbps, "%.1f Mbit/s", 1), free)
		}
		if withPeers {
			cells = append(cells, peersCost(r.PeersCost))
		}
		for _, p := range e.Scoring {
			cell := "-"
			for _, s := range r.Scores {
				if s.Plugin == p.Name {
					cell = strconv.FormatInt(s.Normalized, 10)
				}
			}
			cells = append(cells, cell)
		}
		points, rank, pod := "-", "-", "-"
		if r.Points != nil {
			points = strconv.FormatInt(*r.Points, 10)
		}
		if r.Rank > 0 {
			rank = strconv.Itoa(r.Rank)
		}
		if r.Chosen {
			pod = "here"
		}
		cells = append(cells, points, rank, pod, safetext.Line(reason))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
}

// peersLine says what the pod declares of its peers, where they are, and
// why NetworkPeers gives no points when it gives none.
func peersLine(p *output.Peers) string {
	line := fmt.Sprintf("Peers (%s)", strconv.Quote(safetext.Line(p.Selectors)))
	if p.TrafficMbps > 0 {
		line = fmt.Sprintf("Peers (%s, %s Mbit/s)", strconv.Quote(safetext.Line(p.Selectors)), strconv.FormatFloat(p.TrafficMbps, 'g', 4, 64))
	}
	switch {
	case p.Invalid != "":
		line += ": the annotations cannot be read (" + safetext.Line(p.Invalid) + ")"
	case len(p.Hosts) == 0:
		line += ": none placed"
	default:
		parts := make([]string, len(p.Hosts))
		for i, h := range p.Hosts {
			parts[i] = fmt.Sprintf("%d on %s", h.Pods, safetext.Line(h.Node))
		}
		line += ": " + strings.Join(parts, ", ")
	}
	if p.Skipped != "" {
		line += "; NetworkPeers gives no points: " + safetext.Line(p.Skipped)
	}
	return line + "."
}

// peersCost is a row's PEERS COST cell: the cost in ms, and what it
// ranks at when a tie moved it; "?" when unknown, "-" when not costed.
func peersCost(c *output.PeersCost) string {
	switch {
	case c == nil:
		return "-"
	case !c.Known:
		return "?"
	case c.RankedMs != c.Ms:
		return fmt.Sprintf("%s ms (as %s)", ms(c.Ms), ms(c.RankedMs))
	}
	return ms(c.Ms) + " ms"
}

// ms writes a duration in milliseconds to two significant digits, as the
// placement event's note does.
func ms(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
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
