// Package livescore derives the score of each node the simulator
// measured, so that scores differ only where the network does.
//
// Three rules:
//
//   - Good enough saturates. A node scores fully on bandwidth at or above
//     Targets.BandwidthMbps, on latency at or below Targets.LatencyMs and
//     on loss at or below Targets.PacketLoss. Below (or above) its target
//     a metric scores as the scenario formula does: bandwidth ×
//     min(bw/target, 1), latency × 10/(10 + ms over the target), loss ×
//     (1 − loss over the target).
//
//   - Noise does not rank. Each node's score has an interval, from its
//     metrics' served 95 % intervals, narrowed so that two intervals that
//     do not overlap mean a 95 % test tells the two nodes apart. Nodes are
//     taken best first; every node whose interval reaches the best
//     remaining node's gets that node's score. Nodes that cannot be told
//     apart therefore score the same, and MinMax normalization then gives
//     them the same points.
//
//   - Unknown is not perfect. A node with a metric unmeasured (a
//     bandwidth not yet measured, or too old to serve) ranks below every
//     node measured in full: nodes without a metric rank among themselves
//     by what they have, scaled to at most half the lowest full score.
//     Were it to tie with the lowest, a burst would split evenly between a
//     measured link and one the probes could not reach, whenever every
//     measured link scored the same. A bandwidth known only as a lower
//     bound is measured, with no upper end: it ties with any faster node,
//     since how fast this host sent its trains is not the network.
package livescore

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"kns3.dev/kns3/simulator/api"
)

// Targets are where each metric is good enough.
type Targets struct {
	// BandwidthMbps is the bandwidth at and above which a node scores
	// fully on bandwidth.
	BandwidthMbps float64
	// LatencyMs is the latency at and below which a node scores fully on
	// latency.
	LatencyMs float64
	// PacketLoss is the loss at and below which a node scores fully on
	// loss.
	PacketLoss float64
}

// Defaults: 100 Mbit/s, 1 ms (a round trip within a zone) and 0.5 %.
const (
	DefaultBandwidthMbps = 100
	DefaultLatencyMs     = 1
	DefaultPacketLoss    = 0.005
)

// DefaultTargets returns the default targets.
func DefaultTargets() Targets {
	return Targets{BandwidthMbps: DefaultBandwidthMbps, LatencyMs: DefaultLatencyMs, PacketLoss: DefaultPacketLoss}
}

// Validate says what is wrong with t, naming the field.
func (t Targets) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(t.BandwidthMbps) || t.BandwidthMbps <= 0:
		return fmt.Errorf("bandwidth target: %g Mbit/s, want a number above 0", t.BandwidthMbps)
	case !finite(t.LatencyMs) || t.LatencyMs < 0:
		return fmt.Errorf("latency target: %g ms, want a number of at least 0", t.LatencyMs)
	case !finite(t.PacketLoss) || t.PacketLoss < 0 || t.PacketLoss >= 1:
		return fmt.Errorf("loss target: %g, want at least 0 and below 1", t.PacketLoss)
	}
	return nil
}

// tieNarrowing narrows a 95 % interval to the width at which two
// non-overlapping intervals of equal width mean a 95 % test of the
// difference: 1.386/1.960, the z of an 83.4 % interval.
const tieNarrowing = 1.3859 / 1.9600

func (t Targets) bandwidth(mbps float64) float64 {
	return math.Min(mbps/t.BandwidthMbps, 1)
}

func (t Targets) latency(ms float64) float64 {
	return 10 / (10 + math.Max(0, ms-t.LatencyMs))
}

func (t Targets) loss(share float64) float64 {
	return 1 - math.Max(0, share-t.PacketLoss)
}

// interval is a score's point and the ends of its narrowed interval.
type interval struct {
	point, low, high float64
}

// narrowed returns e's narrowed interval; its high end is +Inf for a
// lower bound.
func narrowed(e *api.Estimate) (low, high float64) {
	low = e.Value - tieNarrowing*(e.Value-e.Low)
	high = math.Inf(1)
	if e.High != nil && !e.AtLeast {
		high = e.Value + tieNarrowing*(*e.High-e.Value)
	}
	return low, high
}

// score is m's score and interval; complete says every metric was there.
// A missing metric scores 1: the caller caps such a node.
func (t Targets) score(m api.Measurements) (iv interval, complete bool) {
	iv = interval{1, 1, 1}
	mul := func(point, low, high float64) {
		iv.point *= point
		iv.low *= low
		iv.high *= high
	}
	if e := m.BandwidthMbps; e != nil {
		low, high := narrowed(e)
		mul(t.bandwidth(e.Value), t.bandwidth(low), t.bandwidth(high))
	}
	if e := m.LatencyMs; e != nil {
		low, high := narrowed(e)
		mul(t.latency(e.Value), t.latency(high), t.latency(low))
	}
	if e := m.PacketLoss; e != nil {
		low, high := narrowed(e)
		mul(t.loss(e.Value), t.loss(high), t.loss(low))
	}
	return iv, m.BandwidthMbps != nil && m.LatencyMs != nil && m.PacketLoss != nil
}

// Scores derives the score of every node in nodes (see the package
// comment).
func (t Targets) Scores(nodes map[string]api.Measurements) map[string]float64 {
	complete, partial := map[string]interval{}, map[string]interval{}
	for name, m := range nodes {
		iv, ok := t.score(m)
		if ok {
			complete[name] = iv
		} else {
			partial[name] = iv
		}
	}
	out := make(map[string]float64, len(nodes))
	tie(complete, out)
	lowest := math.Inf(1)
	for name := range complete {
		lowest = math.Min(lowest, out[name])
	}
	tie(partial, out)
	if len(complete) > 0 {
		for name := range partial {
			out[name] *= partialScale * lowest
		}
	}
	return out
}

// partialScale puts every node without a metric below every node
// measured in full, keeping their order among themselves.
const partialScale = 0.5

// tie gives each node of ivs its score in out: nodes taken best first,
// each with every node whose interval reaches its low end.
func tie(ivs map[string]interval, out map[string]float64) {
	names := make([]string, 0, len(ivs))
	for name := range ivs {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := -cmpFloat(ivs[a].point, ivs[b].point); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for i := 0; i < len(names); {
		best := ivs[names[i]]
		j := i
		for j < len(names) && ivs[names[j]].high >= best.low {
			out[names[j]] = best.point
			j++
		}
		i = j
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
