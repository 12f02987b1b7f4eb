package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// caveats says why the candidate e ranks first may not be the pod's node,
// when it is not: what the scheduler judged that is not judged here, and
// how the status, read after the placement, differs from what the cycle
// saw. worked is the decision worked out here, nil without one.
func caveats(e *output.Explanation, in Input, worked *placement.Decision) []string {
	if e.Node == "" {
		return nil
	}
	var own *output.Row
	ranked := false
	for i := range e.Nodes {
		r := &e.Nodes[i]
		if r.Chosen {
			own = r
		}
		ranked = ranked || r.Rank > 0
	}
	if !ranked || (own != nil && own.Rank == 1) {
		return nil
	}
	var out []string
	if own == nil || !own.Candidate() {
		out = append(out, "the pod's node is no candidate now (KNS-3's filter, a taint, a cordon or the pod's node affinity refuses it): "+
			"its labels, taints or cordon may have changed since the placement")
	}
	out = append(out, "resources, pod affinity and spread are the scheduler's to judge and are not evaluated here: "+
		"a node ranked above the pod's may not have been feasible for it, and the profile's other score plugins add points not counted here")
	if sim := in.Simulation; sim != nil {
		placed := capacity.PlacedAt(in.Pod, time.Time{})
		if !placed.IsZero() && sim.Timestamp.After(placed) {
			what := "the links and scores"
			if e.Peers != nil && scoresWith(e, status.NetworkPeers) {
				what = "the links, the pairs between nodes and the scores"
			}
			out = append(out, fmt.Sprintf("the status is newer than the placement: the simulation was sampled %s after the pod was placed, "+
				"so %s may have changed since, the pod's own traffic among what changed them", sim.Timestamp.Sub(placed).Round(time.Second), what))
		}
	}
	out = append(out, peersCaveats(e, in)...)
	if scoresWith(e, status.NetworkCapacity) && !countsPods(in) {
		out = append(out, "the status does not say which pods are counted on each link (a scheduler older than this kubectl kns3): "+
			"pods placed since the measurement are not counted here, and the pod's own need cannot be told apart")
	}
	if worked != nil && e.DecidedFrom == output.DecidedFromEvent && worked.DecidedBy != e.DecidedBy {
		now := worked.DecidedBy
		if now == "" {
			now = "none of KNS-3's plugins"
		}
		out = append(out, fmt.Sprintf("worked out from the status now, %s would decide, not what the placement event says", now))
	}
	return out
}

// scoresWith reports whether e's profile scores with plugin.
func scoresWith(e *output.Explanation, plugin string) bool {
	return slices.ContainsFunc(e.Scoring, func(p output.ScoringPlugin) bool { return p.Name == plugin })
}

// countsPods reports whether the status says, of any link, what
// NetworkCapacity counts on it.
func countsPods(in Input) bool {
	if in.Simulation == nil {
		return true // nothing to count on
	}
	for _, m := range in.Simulation.Metrics {
		if m.Capacity != nil {
			return true
		}
	}
	return len(in.Simulation.Metrics) == 0
}

// peersCaveats says how the pod's peers, as NetworkPeers' points are
// worked out here, may differ from those the cycle that placed it saw.
func peersCaveats(e *output.Explanation, in Input) []string {
	p := e.Peers
	if p == nil || !scoresWith(e, status.NetworkPeers) {
		return nil
	}
	var out []string
	if p.PlacedAfterCount > 0 {
		named := strings.Join(p.PlacedAfter, ", ")
		if p.PlacedAfterCount > len(p.PlacedAfter) {
			named += fmt.Sprintf(" and %d more", p.PlacedAfterCount-len(p.PlacedAfter))
		}
		out = append(out, fmt.Sprintf("%d of the pod's peers were placed after it (%s): the cycle that placed it did not see them, "+
			"and they change what reaching its peers costs from each node; peers that have left since are not seen here", p.PlacedAfterCount, named))
	}
	if p.TrafficMbps > 0 && in.Simulation != nil && in.Simulation.MetricsOmitted {
		out = append(out, "the status leaves out the links' metrics: the share of a pair's free bandwidth the pod's traffic would take "+
			"is worked out here without the traffic measured on the links")
	}
	return out
}
