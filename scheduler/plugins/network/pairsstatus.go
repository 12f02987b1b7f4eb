package network

import (
	"cmp"
	"slices"

	"github.com/hashicorp/serf/coordinate"

	"kns3.dev/kns3/scheduler/apis/status"
)

// Status is p as the published status holds it (status.Pairs), for the
// nodes keep holds: their coordinates, and the pairs between two of them
// with the metrics fresh when the answer was sampled. What a ranking
// takes of p is what PairsFromStatus gives back: the same cost for any
// two nodes kept. Empty, not nil, for a nil p.
func (p *Pairs) Status(keep func(node string) bool) *status.Pairs {
	out := &status.Pairs{}
	if p == nil {
		return out
	}
	for node, c := range p.coordinates {
		if !keep(node) {
			continue
		}
		if out.Coordinates == nil {
			out.Coordinates = make(map[string]status.Coordinate, len(p.coordinates))
		}
		out.Coordinates[node] = status.Coordinate{Vec: slices.Clone(c.Vec), Error: c.Error, Adjustment: c.Adjustment, Height: c.Height}
	}
	for k, m := range p.measured {
		if !keep(k.a) || !keep(k.b) {
			continue
		}
		pair := status.MeasuredPair{From: k.a, To: k.b,
			LatencyMs: p.freshStatus(m.LatencyMs), PacketLoss: p.freshStatus(m.PacketLoss), BandwidthMbps: p.freshStatus(m.BandwidthMbps)}
		if pair.LatencyMs != nil || pair.PacketLoss != nil || pair.BandwidthMbps != nil {
			out.Measured = append(out.Measured, pair)
		}
	}
	// Sorted, so that an unchanged answer publishes unchanged bytes.
	slices.SortFunc(out.Measured, func(a, b status.MeasuredPair) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out
}

// freshStatus is e as the status holds it, nil when it is not fresh.
func (p *Pairs) freshStatus(e *PairEstimate) *status.PairEstimate {
	if e = p.fresh(e); e == nil {
		return nil
	}
	return &status.PairEstimate{Value: e.Value, Low: e.Low, High: e.High, AtLeast: e.AtLeast}
}

// PairsFromStatus is the Pairs a published status holds (Status), every
// metric there fresh, as it was when the status was written. A coordinate
// or a pair that could not come from an answer (one that is not finite, a
// pair of one node) is left out; nil when nothing is left.
func PairsFromStatus(s *status.Pairs) *Pairs {
	if s == nil {
		return nil
	}
	p := &Pairs{Window: DefaultPairsWindow}
	for node, sc := range s.Coordinates {
		c := &coordinate.Coordinate{Vec: slices.Clone(sc.Vec), Error: sc.Error, Adjustment: sc.Adjustment, Height: sc.Height}
		if len(c.Vec) == 0 || c.Error < 0 || c.Height < 0 || !c.IsValid() {
			continue
		}
		if p.coordinates == nil {
			p.coordinates = make(map[string]*coordinate.Coordinate, len(s.Coordinates))
		}
		p.coordinates[node] = c
	}
	for _, sp := range s.Measured {
		m := PairMeasurement{LatencyMs: estimateOf(sp.LatencyMs), PacketLoss: estimateOf(sp.PacketLoss), BandwidthMbps: estimateOf(sp.BandwidthMbps)}
		if sp.From == "" || sp.To == "" || sp.From == sp.To || (m.LatencyMs == nil && m.PacketLoss == nil && m.BandwidthMbps == nil) {
			continue
		}
		if p.measured == nil {
			p.measured, p.inMeasured = map[pairKey]PairMeasurement{}, map[string]bool{}
		}
		p.measured[keyOf(sp.From, sp.To)] = m
		p.inMeasured[sp.From], p.inMeasured[sp.To] = true, true
	}
	if p.coordinates == nil && p.measured == nil {
		return nil
	}
	return p
}

// estimateOf is a status's estimate as a fresh PairEstimate; nil for none.
func estimateOf(e *status.PairEstimate) *PairEstimate {
	if e == nil {
		return nil
	}
	return &PairEstimate{Value: e.Value, Low: e.Low, High: e.High, AtLeast: e.AtLeast}
}
