// Package score is the arithmetic of CustomScorePlugin's scores, shared by
// everything that reads them: decoding an answer (network.Decode) turns
// each simulator score into a raw score (MilliScore: × MilliScale, clamped
// to int64), the plugin's NormalizeScore maps raw scores onto 0–100
// (Normalize), the placement event and kubectl kns3 rank them (Rank) and
// print them (Float, Format). It imports nothing of the plugins.
package score

import (
	"math"
	"math/bits"
	"strconv"

	fwk "k8s.io/kube-scheduler/framework"
)

// MilliScale is the factor between a simulator score and the plugin's raw
// score: Score returns score × 1000, keeping three decimals.
const MilliScale = 1000

// Float is the simulator's score a raw score stands for.
func Float(milli int64) float64 {
	return float64(milli) / MilliScale
}

// Format writes a raw score as the simulator's score, three decimals.
func Format(milli int64) string {
	return strconv.FormatFloat(Float(milli), 'f', 3, 64)
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
