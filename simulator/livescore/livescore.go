// Package livescore derives the score of each node the simulator
// measured, so that scores differ only where the network does, by enough
// to matter.
//
// Four rules:
//
//   - Good enough saturates. A node scores fully on bandwidth at or above
//     Targets.BandwidthMbps, on latency at or below Targets.LatencyMs and
//     on loss at or below Targets.PacketLoss. Below (or above) its target
//     a metric scores as the scenario formula does: bandwidth ×
//     min(bw/target, 1), latency × 10/(10 + ms over the target), loss ×
//     (1 − loss over the target).
//
//   - Only a difference that is resolved and large enough ranks (package
//     ties). Each metric's served 95 % interval is narrowed so that two
//     narrowed intervals that do not overlap mean a 95 % test tells the
//     nodes apart, and widened towards worse by the smallest difference
//     that counts (Rules.Differences). Nodes are taken best first; every
//     node whose interval reaches the best remaining node's gets that
//     node's score. A lower bound on a bandwidth is ranked at its bound.
//
//   - Unknown is not perfect. A node with a metric unmeasured (a
//     bandwidth not yet measured, or too old to serve) ranks below every
//     node measured in full: nodes without a metric rank among themselves
//     by what they have, scaled to at most half the lowest full score.
//     Were it to tie with the lowest, a burst would split evenly between a
//     measured link and one the probes could not reach, whenever every
//     measured link scored the same.
//
//   - No ranking from a partial picture. Until Rules.Quorum of the nodes
//     the prober knows are measured in full (after a restart, while the
//     first trains go out), every node scores 0, as the specification's
//     fallback scores them, and the answer says it is warming up:
//     otherwise the nodes measured first would take every pod.
package livescore

import (
	"fmt"
	"math"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/api/ties"
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

func (t Targets) bandwidth(mbps float64) float64 {
	return math.Min(mbps/t.BandwidthMbps, 1)
}

func (t Targets) latency(ms float64) float64 {
	return 10 / (10 + math.Max(0, ms-t.LatencyMs))
}

func (t Targets) loss(share float64) float64 {
	return 1 - math.Max(0, share-t.PacketLoss)
}

// Rules are how the live score is made from the measurements.
type Rules struct {
	Targets
	// Differences are the smallest differences that rank two nodes.
	Differences ties.Differences
	// Quorum is the share of the nodes the prober knows that must be
	// measured in full before the scores rank; 0 ranks from the first
	// node measured.
	Quorum float64
}

// DefaultQuorum: nine nodes in ten measured in full.
const DefaultQuorum = 0.9

// DefaultRules returns the default rules.
func DefaultRules() Rules {
	return Rules{Targets: DefaultTargets(), Differences: ties.DefaultDifferences(), Quorum: DefaultQuorum}
}

// Validate says what is wrong with r, naming the field.
func (r Rules) Validate() error {
	if err := r.Targets.Validate(); err != nil {
		return err
	}
	if err := r.Differences.Validate(); err != nil {
		return fmt.Errorf("smallest difference, %w", err)
	}
	if math.IsNaN(r.Quorum) || r.Quorum < 0 || r.Quorum > 1 {
		return fmt.Errorf("quorum: %g, want a share from 0 to 1", r.Quorum)
	}
	return nil
}

// Result is the live score of every node measured.
type Result struct {
	Scores map[string]float64
	// WarmUp is set while too few nodes are measured in full to rank:
	// every score is then 0.
	WarmUp *api.WarmUp
}

// span is a score and the ends between which another node's score counts
// as alike.
func (r Rules) span(m api.Measurements) (s ties.Span, complete bool) {
	s = ties.Span{Value: 1, Low: 1, High: 1}
	mul := func(point, low, high float64) {
		s.Value *= point
		s.Low *= low
		s.High *= high
	}
	if e := m.BandwidthMbps; e != nil {
		b := r.Differences.BandwidthSpan(e.Value, e.Low, highOf(e), e.AtLeast)
		mul(r.bandwidth(b.Value), r.bandwidth(b.Low), r.bandwidth(b.High))
	}
	if e := m.LatencyMs; e != nil {
		l := r.Differences.LatencySpan(e.Value, e.Low, highOf(e))
		mul(r.latency(l.Value), r.latency(l.High), r.latency(l.Low))
	}
	if e := m.PacketLoss; e != nil {
		l := r.Differences.LossSpan(e.Value, e.Low, highOf(e))
		mul(r.loss(l.Value), r.loss(l.High), r.loss(l.Low))
	}
	return s, m.BandwidthMbps != nil && m.LatencyMs != nil && m.PacketLoss != nil
}

// highOf is e's high end: its value where none is served.
func highOf(e *api.Estimate) float64 {
	if e.High == nil || e.AtLeast {
		return e.Value
	}
	return *e.High
}

// Scores derives the score of every node in nodes (see the package
// comment); known is how many nodes the prober knows, measured or not.
func (r Rules) Scores(nodes map[string]api.Measurements, known int) Result {
	var complete, partial []string
	var completeSpans, partialSpans []ties.Span
	for name, m := range nodes {
		s, ok := r.span(m)
		if ok {
			complete, completeSpans = append(complete, name), append(completeSpans, s)
		} else {
			partial, partialSpans = append(partial, name), append(partialSpans, s)
		}
	}
	out := make(map[string]float64, len(nodes))
	known = max(known, len(nodes))
	if float64(len(complete)) < r.Quorum*float64(known) {
		for name := range nodes {
			out[name] = 0
		}
		return Result{Scores: out, WarmUp: &api.WarmUp{MeasuredInFull: len(complete), Nodes: known, Quorum: r.Quorum}}
	}
	lowest := math.Inf(1)
	for i, score := range ties.Rank(complete, completeSpans) {
		out[complete[i]] = score
		lowest = math.Min(lowest, score)
	}
	for i, score := range ties.Rank(partial, partialSpans) {
		if len(complete) > 0 {
			score *= partialScale * lowest
		}
		out[partial[i]] = score
	}
	return Result{Scores: out}
}

// partialScale puts every node without a metric below every node
// measured in full, keeping their order among themselves.
const partialScale = 0.5
