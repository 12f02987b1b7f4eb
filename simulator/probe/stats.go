package probe

import (
	"math"
)

// z95 is the standard normal quantile of a two-sided 95 % interval.
const z95 = 1.959963984540054

// wilson is the Wilson score interval of a proportion, k of n, at z: it
// stays within [0, 1] and is honest at k = 0, where the share alone would
// claim certainty.
func wilson(k, n int, z float64) (low, high float64) {
	if n == 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	center := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	// Clamped to hold p: in floating point, center-half for k = 0 can come
	// out a hair above 0.
	return math.Min(p, math.Max(0, center-half)), math.Max(p, math.Min(1, center+half))
}

// medianInterval is the median of sorted (ascending, not empty) and a
// distribution-free interval for it at z: the order statistics whose
// ranks bound the median's with that confidence, by the normal
// approximation of the binomial.
func medianInterval(sorted []float64, z float64) (median, low, high float64) {
	n := len(sorted)
	if n%2 == 1 {
		median = sorted[n/2]
	} else {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	nf := float64(n)
	// 1-based ranks, clamped to the sample.
	lo := int(math.Floor((nf - z*math.Sqrt(nf)) / 2))
	hi := int(math.Ceil(1 + (nf+z*math.Sqrt(nf))/2))
	lo = min(max(lo, 1), n)
	hi = min(max(hi, 1), n)
	return median, sorted[lo-1], sorted[hi-1]
}

// roundDown2 is v rounded down to two significant digits: a lower bound
// served without the noise of its last digits, and never more than 10 %
// below what was measured.
func roundDown2(v float64) float64 {
	if v <= 0 || !finite(v) {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-1)
	return math.Floor(v/p*(1+1e-12)) * p
}
