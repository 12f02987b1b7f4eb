package customscore

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Fallback reasons of a Placement: why a pod was placed without network
// scores. The first four are also the "reason" label of FallbacksTotal.
const (
	FallbackSimulatorFailed = fallbackFailed
	FallbackBreakerOpen     = fallbackBreakerOpen
	FallbackStale           = fallbackStale
	// FallbackNoneScored: the simulation scored none of the feasible nodes.
	FallbackNoneScored = fallbackNoneScored
	// FallbackNodeUnscored: the simulation scored other feasible nodes but
	// not the one the pod went to.
	FallbackNodeUnscored = "node_unscored"
	// FallbackSingleNode: PreScore did not run. The scheduler scores
	// nodes only when more than one is feasible, so the pod's node was the
	// only choice (or the profile does not score with CustomScorePlugin).
	FallbackSingleNode = "single_node"
	// FallbackNominatedNode: PreScore did not run because the pod went to
	// the node it was nominated for (after preempting there), which the
	// scheduler checks first and, when it still fits, takes without
	// evaluating another node.
	FallbackNominatedNode = "nominated_node"
)

// NetworkAwarePrefix starts the message of a placement the simulator's
// scores ranked.
const NetworkAwarePrefix = "Network-aware: "

// MaxPlacementMessage bounds Placement.Message: an event's note holds at
// most 1 kB.
const MaxPlacementMessage = 1024

// Placement is what the scheduling cycle's network scores said about the
// node a pod went to: its simulator score and rank among the feasible
// nodes and the best other feasible node, or why there were no scores.
type Placement struct {
	Node string
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
}

// PlacementOf reads the cycle's simulation from state (written by
// PreScore) and places pod on node. The binding cycle calls it with the
// scheduling cycle's state, once per pod, so its cost (one pass over the
// feasible nodes) is off the scheduling cycle.
func PlacementOf(state fwk.CycleState, pod *v1.Pod, node string) Placement {
	p := Placement{Node: node, Fallback: FallbackSingleNode}
	if pod != nil && pod.Status.NominatedNodeName == node {
		// Without a simulation, this is why: the nominated node came first.
		p.Fallback = FallbackNominatedNode
	}
	if state == nil {
		return p
	}
	data, err := state.Read(stateKey)
	if err != nil {
		return p
	}
	s, ok := data.(*simulationState)
	if !ok {
		return p
	}
	p.Feasible = len(s.feasible)
	if s.fallback != "" {
		p.Fallback = s.fallback
		return p
	}
	score, scored := s.scores[node]
	p.Score = score
	p.Rank = 1
	found := false
	for _, name := range s.feasible {
		other, ok := s.scores[name]
		if !ok || name == node {
			continue
		}
		if scored && other > score {
			p.Rank++
		}
		if !found || other > p.AlternativeScore || (other == p.AlternativeScore && name < p.Alternative) {
			p.Alternative, p.AlternativeScore, found = name, other, true
		}
	}
	if scored {
		p.Fallback = ""
	} else {
		p.Fallback, p.Score, p.Rank = FallbackNodeUnscored, 0, 0
	}
	return p
}

// Message is the placement as one bounded line for an event's note.
func (p Placement) Message() string {
	var msg string
	switch p.Fallback {
	case "":
		msg = fmt.Sprintf(NetworkAwarePrefix+"%s has simulator score %s, rank %d of %d feasible nodes", p.Node, FormatMilli(p.Score), p.Rank, p.Feasible)
		if p.Alternative != "" {
			msg += fmt.Sprintf("; best alternative %s (%s)", p.Alternative, FormatMilli(p.AlternativeScore))
		} else {
			msg += "; no other feasible node was scored"
		}
	case FallbackNodeUnscored:
		msg = fmt.Sprintf("Fallback (%s): the simulator has no score for %s, chosen by the other plugins; best scored alternative %s (%s)",
			p.Fallback, p.Node, p.Alternative, FormatMilli(p.AlternativeScore))
	case FallbackSingleNode:
		msg = fmt.Sprintf("Not ranked (%s): %s was the only feasible node, so the scheduler scored no node", p.Fallback, p.Node)
	case FallbackNominatedNode:
		msg = fmt.Sprintf("Not ranked (%s): %s, the node the pod was nominated for, still fits it, so the scheduler evaluated no other node", p.Fallback, p.Node)
	default:
		msg = fmt.Sprintf("Fallback (%s): %s chosen without network scores: %s", p.Fallback, p.Node, fallbackText(p))
	}
	return truncate(msg, MaxPlacementMessage)
}

func fallbackText(p Placement) string {
	switch p.Fallback {
	case FallbackSimulatorFailed:
		return "the simulator did not answer"
	case FallbackBreakerOpen:
		return "the simulator's circuit breaker is open"
	case FallbackStale:
		return "no simulation younger than maxSimulationAge"
	default:
		return fmt.Sprintf("the simulation scores none of the %d feasible nodes", p.Feasible)
	}
}

// FormatMilli writes a score × 1000 as the simulator's score, three decimals.
func FormatMilli(v int64) string {
	return strconv.FormatFloat(float64(v)/milliScale, 'f', 3, 64)
}

// MilliScore is a simulator score as the plugin's raw score (× 1000), false
// for a NaN or infinite score, which the plugin treats as unscored.
func MilliScore(score float64) (int64, bool) {
	return milliScore(wireScore{value: score, set: true})
}

// Normalize is NormalizeScore on raw scores: MinMax unless absolute.
func Normalize(scores fwk.NodeScoreList, absolute bool) {
	if absolute {
		absoluteScores(scores)
		return
	}
	normalizeScores(scores)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
