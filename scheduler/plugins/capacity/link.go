package capacity

import (
	"math"

	fwk "k8s.io/kube-scheduler/framework"
)

// ReserveWeight is what a Mbit/s free above the fill target ranks at,
// against one below it.
const ReserveWeight = 0.1

// Room is what a new pod would find free on a link of bandwidth Mbit/s
// that carries useMbps (measured) and countedMbps (the pods placed since
// the measurement): what is left, at least 0, and how much of it lies
// below the fill target (targetPercent of the bandwidth), at least 0.
func Room(bandwidth, useMbps, countedMbps float64, targetPercent int32) (free, belowTarget float64) {
	free = max(bandwidth-useMbps-countedMbps, 0)
	reserve := bandwidth * float64(100-targetPercent) / 100
	return free, max(free-reserve, 0)
}

// RankMbps is what NetworkCapacity ranks a link by: the bandwidth free
// below the target, plus ReserveWeight of what is free in the reserve
// above it. A link filled to its target so ranks as if a tenth of its
// reserve were free, below a link with more room than that under its own
// target, and links all filled to their targets do not tie: a burst goes
// on spreading over their reserves.
func RankMbps(free, belowTarget float64) float64 {
	return belowTarget + ReserveWeight*(free-belowTarget)
}

// RankMilli is NetworkCapacity's raw score of a link ranked at rankMbps:
// kbit/s, clamped to an int64. A bandwidth beyond it (network.MaxMbps
// bounds what an answer gives) must not wrap to a negative score, which
// the framework rejects, failing the cycle.
func RankMilli(rankMbps float64) int64 {
	switch v := math.Round(rankMbps * 1000); {
	case v >= math.MaxInt64: // 2^63, as a float64
		return math.MaxInt64
	case v > 0:
		return int64(v)
	default: // 0, and NaN
		return 0
	}
}

// Normalize is NetworkCapacity's NormalizeScore on raw scores: each in
// proportion to the highest, which scores MaxNodeScore, so that two links
// a few Mbit/s apart score a few points apart and a full link scores 0;
// all 0 when the highest is 0. A node for which asMostFree holds scores
// as the highest: a link known only as at least some bandwidth, on which
// the pod fits even so (two such links differ only in how far the probes
// happened to push them, and noise must not rank nodes). asMostFree may
// be nil.
func Normalize(scores fwk.NodeScoreList, asMostFree func(node string) bool) {
	var most int64
	for _, s := range scores {
		most = max(most, s.Score)
	}
	if asMostFree != nil {
		for i, s := range scores {
			if asMostFree(s.Name) {
				scores[i].Score = most
			}
		}
	}
	for i := range scores {
		if most == 0 {
			scores[i].Score = 0
			continue
		}
		scores[i].Score = int64(math.Round(float64(scores[i].Score) * float64(fwk.MaxNodeScore) / float64(most)))
	}
}
