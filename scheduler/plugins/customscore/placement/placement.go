// Package placement is what a scheduling cycle of CustomScorePlugin says
// about where a pod went, and how the plugin turns simulator scores into
// node scores: the raw score (× 1000), NormalizeScore's two
// normalizations, the rank among the feasible nodes, and the placement
// event's message and fallback reasons. It holds no plugin machinery, so
// readers of placements (CustomBindPlugin, kubectl kns3) link nothing of
// the scheduler's configuration.
package placement

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Fallback reasons of a Placement: why a pod was placed without network
// scores. The first four are also the "reason" label of the plugin's
// kns3_simulator_fallbacks_total metric.
const (
	FallbackSimulatorFailed = "simulator_failed"
	FallbackBreakerOpen     = "breaker_open"
	// FallbackStale: Background mode had no simulation younger than
	// maxSimulationAge.
	FallbackStale = "stale"
	// FallbackNoneScored: the simulation scored none of the feasible nodes.
	FallbackNoneScored = "none_scored"
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

// MaxMessage bounds Placement.Message: an event's note holds at most 1 kB.
const MaxMessage = 1024

// MilliScale is the factor between a simulator score and the plugin's raw
// score: Score returns score × 1000, keeping three decimals.
const MilliScale = 1000

// Cycle is what one scheduling cycle's PreScore knew: the raw scores of
// the simulation it used, the feasible nodes it was given, and, when it
// skipped scoring, why.
type Cycle struct {
	Scores   map[string]int64
	Feasible []string
	Fallback string
}

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
	p.Feasible = len(cycle.Feasible)
	if cycle.Fallback != "" {
		p.Fallback = cycle.Fallback
		return p
	}
	if score, scored := cycle.Scores[node]; scored {
		p.Fallback, p.Score, p.Rank = "", score, Rank(cycle.Scores, cycle.Feasible, node)
	} else {
		p.Fallback = FallbackNodeUnscored
	}
	// The best-scored other feasible node, the first name among equals.
	found := false
	for _, name := range cycle.Feasible {
		other, ok := cycle.Scores[name]
		if !ok || name == node {
			continue
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
		msg = fmt.Sprintf(NetworkAwarePrefix+"%s has simulator score %s, rank %d of %d feasible nodes", p.Node, formatMilli(p.Score), p.Rank, p.Feasible)
		if p.Alternative != "" {
			msg += fmt.Sprintf("; best alternative %s (%s)", p.Alternative, formatMilli(p.AlternativeScore))
		} else {
			msg += "; no other feasible node was scored"
		}
	case FallbackNodeUnscored:
		msg = fmt.Sprintf("Fallback (%s): the simulator has no score for %s, chosen by the other plugins; best scored alternative %s (%s)",
			p.Fallback, p.Node, p.Alternative, formatMilli(p.AlternativeScore))
	case FallbackSingleNode:
		msg = fmt.Sprintf("Not ranked (%s): %s was the only feasible node, so the scheduler scored no node", p.Fallback, p.Node)
	case FallbackNominatedNode:
		msg = fmt.Sprintf("Not ranked (%s): %s, the node the pod was nominated for, still fits it, so the scheduler evaluated no other node", p.Fallback, p.Node)
	default:
		msg = fmt.Sprintf("Fallback (%s): %s chosen without network scores: %s", p.Fallback, p.Node, fallbackText(p))
	}
	return truncate(msg, MaxMessage)
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

// formatMilli writes a raw score as the simulator's score, three decimals.
func formatMilli(v int64) string {
	return strconv.FormatFloat(float64(v)/MilliScale, 'f', 3, 64)
}

// MilliScore is a simulator score as the plugin's raw score: int64(score ×
// 1000), clamped to the int64 range; false for a NaN or infinite score,
// which the plugin treats as unscored.
func MilliScore(score float64) (int64, bool) {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return 0, false
	}
	v := score * MilliScale
	switch {
	// float64(math.MaxInt64) rounds up to 2^63, which does not fit: compare with it.
	case v >= math.MaxInt64:
		return math.MaxInt64, true
	case v <= math.MinInt64:
		return math.MinInt64, true
	}
	return int64(v), true
}

// Rank is node's place by raw score among the candidates that have one: 1
// + the number scored higher (ties share a rank); 0 when node has none.
func Rank(scores map[string]int64, candidates []string, node string) int {
	score, ok := scores[node]
	if !ok {
		return 0
	}
	rank := 1
	for _, c := range candidates {
		if other, ok := scores[c]; ok && c != node && other > score {
			rank++
		}
	}
	return rank
}

// Normalize is NormalizeScore on raw scores. MinMax (absolute false, the
// specification's) rescales them linearly: (score − lowest) × 100 /
// (highest − lowest), and when every score is equal (all 0 included) every
// node gets MaxNodeScore, leaving the choice to the other plugins.
// Absolute keeps the simulator's scale: the simulator score × 100, clamped.
func Normalize(scores fwk.NodeScoreList, absolute bool) {
	if absolute {
		absoluteScores(scores)
		return
	}
	minMax(scores)
}

// absoluteScores turns scores (the simulator's × 1000) into the simulator
// score × MaxNodeScore, clamped to [0, MaxNodeScore]: 0.90 and 0.89 become
// 90 and 89, a difference the other plugins' preferences can outweigh.
func absoluteScores(scores fwk.NodeScoreList) {
	for i := range scores {
		scores[i].Score = min(max(scores[i].Score/(MilliScale/fwk.MaxNodeScore), 0), fwk.MaxNodeScore)
	}
}

func minMax(scores fwk.NodeScoreList) {
	if len(scores) == 0 {
		return
	}
	lowest, highest := scores[0].Score, scores[0].Score
	for _, s := range scores[1:] {
		lowest = min(lowest, s.Score)
		highest = max(highest, s.Score)
	}
	if lowest == highest {
		for i := range scores {
			scores[i].Score = fwk.MaxNodeScore
		}
		return
	}
	// highest − lowest may not fit int64 but fits uint64. In float64,
	// (score − lowest) × 100 rounds past 2^53 (spans above ~9e13) and the
	// best node could get 99; in 128 bits it is exact, and score − lowest ≤
	// span keeps the quotient at most MaxNodeScore, so Div64 cannot overflow.
	span := uint64(highest) - uint64(lowest)
	for i := range scores {
		hi, lo := bits.Mul64(uint64(scores[i].Score)-uint64(lowest), uint64(fwk.MaxNodeScore))
		q, _ := bits.Div64(hi, lo, span)
		scores[i].Score = int64(q)
	}
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
