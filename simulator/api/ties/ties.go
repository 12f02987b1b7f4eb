// Package ties is the one rule by which two measured nodes count as alike:
// the simulator ties the scores it serves by it, and the scheduler's
// plugins tie the bandwidths they rank by it. A difference ranks two
// nodes only when it is both resolved and large enough to matter:
//
//   - Resolved: each measurement's served 95 % interval is narrowed by
//     Narrowing, so that two narrowed intervals that do not overlap mean a
//     95 % test tells the two apart. Overlapping, they are noise.
//   - Large enough: each metric has a smallest difference that counts
//     (Differences). A node closer than that to the best node is as good,
//     however many samples resolve the gap: 1.2 ms against 1.1 ms, or
//     0.3 % loss against none, is no reason to move a pod.
//
// A lower bound on a bandwidth (a link faster than the prober could push)
// is ranked at its bound: what was measured, never more. A bound that
// reaches what a ranking counts as enough (the live score's bandwidth
// target, where scores saturate; NetworkCapacity's room for the pod) ties
// with the best, since more than enough would change nothing.
package ties

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Narrowing narrows a served 95 % interval to the width at which two
// intervals of equal width that do not overlap mean a 95 % test tells
// them apart: 1.386/1.960, the z of an 83.4 % interval.
const Narrowing = 1.3859 / 1.9600

// Differences are the smallest differences between two nodes'
// measurements that count.
type Differences struct {
	// LatencyRatio and LatencyMs: a round trip counts as longer when it is
	// longer by both this share of the shorter one and this many
	// milliseconds (the larger of the two).
	LatencyRatio float64
	LatencyMs    float64
	// Loss is the packet loss, a share, by which a link counts as
	// lossier.
	Loss float64
	// BandwidthRatio is the share of the faster link's bandwidth by which
	// a link counts as slower.
	BandwidthRatio float64
}

// The default smallest differences: 10 % or 0.2 ms of latency, half a
// point of loss, a fifth of the bandwidth.
const (
	DefaultLatencyRatio   = 0.10
	DefaultLatencyMs      = 0.2
	DefaultLoss           = 0.005
	DefaultBandwidthRatio = 0.20
)

// DefaultDifferences returns the default smallest differences.
func DefaultDifferences() Differences {
	return Differences{LatencyRatio: DefaultLatencyRatio, LatencyMs: DefaultLatencyMs, Loss: DefaultLoss, BandwidthRatio: DefaultBandwidthRatio}
}

// Validate says what is wrong with d, naming the field.
func (d Differences) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(d.LatencyRatio) || d.LatencyRatio < 0:
		return fmt.Errorf("latency ratio: %g, want a number of at least 0", d.LatencyRatio)
	case !finite(d.LatencyMs) || d.LatencyMs < 0:
		return fmt.Errorf("latency: %g ms, want a number of at least 0", d.LatencyMs)
	case !finite(d.Loss) || d.Loss < 0 || d.Loss >= 1:
		return fmt.Errorf("loss: %g, want at least 0 and below 1", d.Loss)
	case !finite(d.BandwidthRatio) || d.BandwidthRatio < 0 || d.BandwidthRatio >= 1:
		return fmt.Errorf("bandwidth ratio: %g, want at least 0 and below 1", d.BandwidthRatio)
	}
	return nil
}

// Span is a measurement as a ranking reads it: its value, and the ends
// between which another node's value counts as alike, in the metric's
// own unit. The end towards better is the narrowed interval's; the end
// towards worse reaches at least the smallest difference that counts.
type Span struct {
	Value, Low, High float64
}

// narrow narrows a served interval about value.
func narrow(value, low, high float64) (float64, float64) {
	return value - Narrowing*(value-low), value + Narrowing*(high-value)
}

// BandwidthSpan is the span of a bandwidth served as value in [low, high]
// (higher is better). A lower bound (atLeast) is ranked at its bound: its
// span ends there.
func (d Differences) BandwidthSpan(value, low, high float64, atLeast bool) Span {
	if atLeast {
		low, high = value, value
	}
	low, high = narrow(value, low, high)
	return Span{Value: value, Low: math.Min(low, (1-d.BandwidthRatio)*value), High: high}
}

// LatencySpan is the span of a round trip served as value ms in [low, high]
// (lower is better).
func (d Differences) LatencySpan(value, low, high float64) Span {
	low, high = narrow(value, low, high)
	return Span{Value: value, Low: math.Max(low, 0), High: math.Max(high, value+math.Max(d.LatencyRatio*value, d.LatencyMs))}
}

// LossSpan is the span of a packet loss served as value in [low, high], a
// share (lower is better).
func (d Differences) LossSpan(value, low, high float64) Span {
	low, high = narrow(value, low, high)
	return Span{Value: value, Low: math.Max(low, 0), High: math.Min(math.Max(high, value+d.Loss), 1)}
}

// Rank gives each item of spans, in which higher is better, the value it
// ranks at: items are taken best first (by value, then by name), and every
// remaining item whose high end reaches the best one's low end ranks at
// the best one's value. Items that cannot be told apart, or whose
// difference is too small to count, so rank alike. names names the items,
// for a deterministic order among equals.
func Rank(names []string, spans []Span) []float64 {
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(spans[b].Value, spans[a].Value); c != 0 {
			return c
		}
		return cmp.Compare(names[a], names[b])
	})
	out := make([]float64, len(spans))
	for i := 0; i < len(order); {
		best := spans[order[i]]
		out[order[i]] = best.Value
		for i++; i < len(order) && spans[order[i]].High >= best.Low; i++ {
			out[order[i]] = best.Value
		}
	}
	return out
}
