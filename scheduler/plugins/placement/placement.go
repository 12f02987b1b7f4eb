// Package placement is what the plugins of a profile say about where a
// pod went: the cycle CustomScorePlugin's PreScore leaves in the cycle
// state (state.go), the placement event's message and fallback reasons,
// the notes any plugin leaves on the nodes for that event (notes.go), the
// points KNS-3's plugins gave the nodes and which of them decided
// (points.go), and which nodes a pod could go to as far as KNS-3 can tell without the
// scheduler (candidate.go, with the rule CustomFilterPlugin applies). It
// lives beside the plugins and imports none: CustomBindPlugin, drift and
// kubectl kns3 read placements without linking a plugin.
package placement

import (
	"fmt"
	"math"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"kns3.dev/kns3/scheduler/plugins/internal/text"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/score"
)

// Fallback reasons of a Placement: why a pod was placed without network
// scores. The first five are also the "reason" label of the plugin's
// kns3_simulator_fallbacks_total metric.
const (
	FallbackSimulatorFailed = "simulator_failed"
	FallbackBreakerOpen     = "breaker_open"
	// FallbackStale: Background mode had no simulation younger than
	// maxSimulationAge.
	FallbackStale = "stale"
	// FallbackNoneScored: the simulation scored none of the feasible nodes.
	FallbackNoneScored = "none_scored"
	// FallbackWarmingUp: the simulator is warming up: it has measured too
	// few nodes in full to rank them (the answer's warm_up).
	FallbackWarmingUp = "warming_up"
	// FallbackNodeUnscored: the simulation scored other feasible nodes but
	// not the one the pod went to.
	FallbackNodeUnscored = "node_unscored"
	// FallbackSingleNode: PreScore did not run. The scheduler scores
	// nodes only when more than one is feasible, so the pod's node was the
	// only choice.
	FallbackSingleNode = "single_node"
	// FallbackNoScorePlugin: the profile does not run CustomScorePlugin,
	// so no cycle of it is ranked by network scores.
	FallbackNoScorePlugin = "no_score_plugin"
	// FallbackNominatedNode: PreScore did not run because the pod went to
	// the node it was nominated for (after preempting there), which the
	// scheduler checks first and, when it still fits, takes without
	// evaluating another node.
	FallbackNominatedNode = "nominated_node"
)

// NetworkAwarePrefix starts the message of a placement the simulator's
// scores ranked.
const NetworkAwarePrefix = "Network-aware: "

// MaxMessage bounds Placement.Message: an event's note holds at most 1 kB.
const MaxMessage = 1024

// Cycle is what one scheduling cycle's PreScore knew: the raw scores of
// the simulation it used, the feasible nodes it was given, and, when it
// skipped scoring, why.
type Cycle struct {
	Scores   map[string]int64
	Feasible []string
	Fallback string
	// Reuse is not nil when the cycle holds an earlier cycle's ranking
	// (see Reuse).
	Reuse *Reuse
	// Simulation is the answer the scores come from, nil without one: what
	// else it says (its links) is read from it by the profile's other
	// plugins, which never ask the simulator themselves.
	Simulation *network.Simulation
	// WarmUp is the warming-up answer's warm_up, with Fallback
	// FallbackWarmingUp: how far its measurements are from ranking.
	WarmUp *network.WarmUp
}

// Placement is what the scheduling cycle's network scores said about the
// node a pod went to: its simulator score and rank among the feasible
// nodes and the best other feasible node, or why there were no scores.
type Placement struct {
	Node string
	// Notes are what the profile's plugins found of the node (Notes),
	// each one clause: NetworkCapacity's says what was free on its link.
	Notes []string
	// Decision is what KNS-3's plugins' points say of the node against
	// the runner-up (Decide); nil when the cycle left no points to tell
	// it from (the scheduler scored no node, or the pod took a reused
	// ranking).
	Decision *Decision
	// Fallback is empty when the node was ranked by the simulator's scores.
	Fallback string
	// Score is the node's simulator score × 1000 (Score's raw value).
	Score int64
	// Rank is 1 + the number of feasible nodes scored higher; Feasible is
	// how many nodes passed every filter.
	Rank, Feasible int
	// Alternative is the best-scored other feasible node ("" when none was
	// scored) and AlternativeScore its score × 1000.
	Alternative      string
	AlternativeScore int64
	// Reused is "" when the pod's own cycle ranked the nodes. Otherwise
	// the fields above come from the ranking of an earlier pod's cycle,
	// and Reused says how sure that is: ReusedRanking, or ReusedUnlessOnly
	// when the node may instead have been the only feasible one.
	Reused string
	// WarmUp is how far a warming-up simulator's measurements were from
	// ranking, with Fallback FallbackWarmingUp.
	WarmUp *network.WarmUp
}

// How a Placement's ranking was reused (Placement.Reused).
const (
	// ReusedRanking: the scheduler placed the pod by the ranking of the
	// pod before it (upstream's opportunistic batching).
	ReusedRanking = "reused"
	// ReusedUnlessOnly: it did so, unless the node was the only feasible
	// one.
	ReusedUnlessOnly = "reused_unless_only"
)

// Of places pod on node after cycle; a nil cycle means PreScore did not
// run. The binding cycle calls it once per pod, so its cost (one pass over
// the feasible nodes) is off the scheduling cycle.
func Of(cycle *Cycle, pod *v1.Pod, node string) Placement {
	p := Placement{Node: node, Fallback: FallbackSingleNode}
	if pod != nil && pod.Status.NominatedNodeName == node {
		// Without a simulation, this is why: the nominated node came first.
		p.Fallback = FallbackNominatedNode
	}
	if cycle == nil {
		return p
	}
	if cycle.Reuse != nil {
		switch {
		case cycle.Reuse.Confirmed():
			p.Reused = ReusedRanking
		case p.Fallback == FallbackNominatedNode:
			// The scheduler never batches a nominated pod.
			return p
		default:
			p.Reused = ReusedUnlessOnly
		}
	}
	p.Feasible = len(cycle.Feasible)
	if cycle.Fallback != "" {
		p.Fallback, p.WarmUp = cycle.Fallback, cycle.WarmUp
		return p
	}
	own, scored := cycle.Scores[node]
	if scored {
		p.Fallback, p.Score, p.Rank = "", own, 1
	} else {
		p.Fallback = FallbackNodeUnscored
	}
	// One pass over the feasible nodes: the rank (score.Rank's: 1 + the
	// scored nodes above, ties sharing a rank) and the best-scored other
	// node, the first name among equals. At 5,000 nodes a cycle has 500
	// feasible nodes: one lookup each in the simulation's map, not two.
	found := false
	for _, name := range cycle.Feasible {
		if name == node {
			continue
		}
		other, ok := cycle.Scores[name]
		if !ok {
			continue
		}
		if scored && other > own {
			p.Rank++
		}
		if !found || other > p.AlternativeScore || (other == p.AlternativeScore && name < p.Alternative) {
			p.Alternative, p.AlternativeScore, found = name, other, true
		}
	}
	return p
}

// Message is the placement as one bounded line for an event's note.
func (p Placement) Message() string {
	var msg string
	switch p.Fallback {
	case "":
		msg = fmt.Sprintf(NetworkAwarePrefix+"%s has simulator score %s, rank %d of %d feasible nodes", p.Node, score.Format(p.Score), p.Rank, p.Feasible)
		if p.Alternative != "" {
			msg += fmt.Sprintf("; best alternative %s (%s)", p.Alternative, score.Format(p.AlternativeScore))
		} else {
			msg += "; no other feasible node was scored"
		}
	case FallbackNodeUnscored:
		msg = fmt.Sprintf("Fallback (%s): the simulator has no score for %s, chosen by the other plugins; best scored alternative %s (%s)",
			p.Fallback, p.Node, p.Alternative, score.Format(p.AlternativeScore))
	case FallbackSingleNode:
		msg = fmt.Sprintf("Not ranked (%s): %s was the only feasible node, so the scheduler scored no node", p.Fallback, p.Node)
	case FallbackNoScorePlugin:
		msg = fmt.Sprintf("Not ranked (%s): %s chosen by a profile that does not score with %s", p.Fallback, p.Node, ScorePlugin)
	case FallbackNominatedNode:
		msg = fmt.Sprintf("Not ranked (%s): %s, the node the pod was nominated for, still fits it, so the scheduler evaluated no other node", p.Fallback, p.Node)
	default:
		msg = fmt.Sprintf("Fallback (%s): %s chosen without network scores: %s", p.Fallback, p.Node, fallbackText(p))
	}
	if p.Decision != nil {
		msg += "; " + p.Decision.Clause()
	}
	for _, note := range p.Notes {
		msg += "; " + note
	}
	switch p.Reused {
	case ReusedRanking:
		msg += "; ranking reused from the pod scheduled before it (opportunistic batching)"
	case ReusedUnlessOnly:
		msg += "; ranking reused from the pod scheduled before it (opportunistic batching), unless the node was the only feasible one"
	}
	return text.Truncate(msg, MaxMessage)
}

func fallbackText(p Placement) string {
	switch p.Fallback {
	case FallbackSimulatorFailed:
		return "the simulator did not answer"
	case FallbackBreakerOpen:
		return "the simulator's circuit breaker is open"
	case FallbackStale:
		return "no simulation younger than maxSimulationAge"
	case FallbackWarmingUp:
		return warmingUpText(p.WarmUp)
	default:
		return fmt.Sprintf("the simulation scores none of the %d feasible nodes", p.Feasible)
	}
}

// warmingUpText says how far a warming-up simulator's measurements were
// from ranking, e.g. "live measurements cover 3 of 100 nodes in full,
// under the 90 % needed to rank".
func warmingUpText(w *network.WarmUp) string {
	if w == nil {
		return "the simulator is warming up: too few nodes are measured in full to rank them"
	}
	return fmt.Sprintf("live measurements cover %d of %d nodes in full, under the %s %% needed to rank",
		w.MeasuredInFull, w.Nodes, strconv.FormatFloat(math.Round(w.Quorum*1000)/10, 'f', -1, 64))
}
