package network

import (
	"encoding/json"
	"math"
	"time"

	"github.com/hashicorp/serf/coordinate"
)

// Pairs is what an answer says of the network between nodes, its optional
// "pairs" key: each node's Vivaldi network coordinate, in the units and
// semantics of serf's coordinate package (distances in seconds), and the
// direct measurements of the pairs the simulator was told matter. Readers
// must not change it: an answer is shared by many cycles.
type Pairs struct {
	// Window is the window the measurements average over: the pairs'
	// window_seconds, else the answer's, else DefaultPairsWindow.
	Window time.Duration

	coordinates map[string]*coordinate.Coordinate
	measured    map[pairKey]PairMeasurement
	// inMeasured are the nodes of the measured pairs.
	inMeasured map[string]bool
}

// DefaultPairsWindow is the window of an answer that gives none: the live
// simulator's.
const DefaultPairsWindow = 15 * time.Second

// FreshWindows is how many windows old a direct measurement may be and
// still be taken: the simulator keeps measuring a pair for three windows
// after the last interest in it, so an older one is a pair it dropped.
const FreshWindows = 3

// PairMeasurement is what the simulator measured directly of one pair of
// nodes: nil where it did not measure a metric.
type PairMeasurement struct {
	LatencyMs, PacketLoss, BandwidthMbps *PairEstimate
}

// PairEstimate is one directly measured metric of a pair: its value in
// [Low, High] (the served 95 % interval; both Value where none is served),
// AtLeast for a bandwidth the probes could only bound from below, and how
// long before the answer's timestamp its newest sample was taken (0 when
// the answer does not say).
type PairEstimate struct {
	Value, Low, High float64
	AtLeast          bool
	Samples          int
	Age              time.Duration
}

// CostSource says where a PairCost comes from.
type CostSource int

const (
	// CostUnknown: neither a fresh measurement nor two coordinates.
	CostUnknown CostSource = iota
	// CostSameNode: the two are one node; nothing crosses the network.
	CostSameNode
	// CostMeasured: the round trip was measured directly.
	CostMeasured
	// CostEstimated: the round trip is the distance between the two
	// nodes' coordinates.
	CostEstimated
)

// PairCost is what an answer says of the network between two nodes.
type PairCost struct {
	Source CostSource
	// RTTMs is the round trip, in milliseconds, in [RTTLowMs, RTTHighMs]:
	// a measurement's served interval, or the coordinates' distance give
	// or take the coordinates' error.
	RTTMs, RTTLowMs, RTTHighMs float64
	// Loss is the packet loss, a share in [LossLow, LossHigh], when
	// LossKnown: only a pair measured directly has one.
	Loss, LossLow, LossHigh float64
	LossKnown               bool
	// BandwidthMbps is the pair's measured bandwidth when BandwidthKnown,
	// a lower bound when BandwidthAtLeast.
	BandwidthMbps    float64
	BandwidthKnown   bool
	BandwidthAtLeast bool
}

// Known reports whether c says anything: the pair is one node, measured
// or estimated.
func (c PairCost) Known() bool { return c.Source != CostUnknown }

// pairKey is an unordered pair of nodes, the smaller name first.
type pairKey struct{ a, b string }

func keyOf(a, b string) pairKey {
	if b < a {
		a, b = b, a
	}
	return pairKey{a, b}
}

// Pairs is what the answer says of the network between nodes, nil when it
// says nothing usable (no "pairs" key, or none of its entries readable).
// It reads Body on the first call, then returns the same Pairs.
func (s *Simulation) Pairs() *Pairs {
	s.pairsOnce.Do(func() { s.pairs = pairsOf(s.Body) })
	return s.pairs
}

// Node is one node as p knows it, looked up once for the many pairs a
// ranking asks about.
type Node struct {
	name     string
	coord    *coordinate.Coordinate
	measured bool
}

// Node looks name up; a nil p knows no node but by its name.
func (p *Pairs) Node(name string) Node {
	if p == nil {
		return Node{name: name}
	}
	return Node{name: name, coord: p.coordinates[name], measured: p.inMeasured[name]}
}

// Cost is what p says of the network between nodes a and b: nothing to
// cross on one node; the direct measurement while it is fresh (no older
// than FreshWindows windows); else the distance between their
// coordinates, with an interval from the coordinates' errors; else
// unknown. Loss and bandwidth come from a fresh direct measurement only.
// A nil p knows only that a node is itself.
func (p *Pairs) Cost(a, b string) PairCost { return p.CostBetween(p.Node(a), p.Node(b)) }

// CostBetween is Cost for two nodes looked up with Node.
func (p *Pairs) CostBetween(a, b Node) PairCost {
	if a.name == b.name {
		return PairCost{Source: CostSameNode}
	}
	if p == nil {
		return PairCost{}
	}
	var c PairCost
	var m PairMeasurement
	if a.measured && b.measured {
		m = p.measured[keyOf(a.name, b.name)]
	}
	if lat := p.fresh(m.LatencyMs); lat != nil {
		c.Source, c.RTTMs, c.RTTLowMs, c.RTTHighMs = CostMeasured, lat.Value, lat.Low, lat.High
	} else if ca, cb := a.coord, b.coord; ca != nil && cb != nil && ca.IsCompatibleWith(cb) {
		c.Source = CostEstimated
		c.RTTMs = float64(ca.DistanceTo(cb)) / float64(time.Millisecond)
		// A coordinate's error is the relative error of the distances it
		// predicted (serf's Vivaldi); a pair's is taken as their mean.
		e := min((ca.Error+cb.Error)/2, 1)
		c.RTTLowMs, c.RTTHighMs = c.RTTMs*(1-e), c.RTTMs*(1+e)
	} else {
		return PairCost{}
	}
	if loss := p.fresh(m.PacketLoss); loss != nil {
		c.Loss, c.LossLow, c.LossHigh, c.LossKnown = loss.Value, loss.Low, loss.High, true
	}
	if bw := p.fresh(m.BandwidthMbps); bw != nil {
		c.BandwidthMbps, c.BandwidthKnown, c.BandwidthAtLeast = bw.Value, true, bw.AtLeast
	}
	return c
}

// Coordinates is how many nodes have a usable coordinate.
func (p *Pairs) Coordinates() int {
	if p == nil {
		return 0
	}
	return len(p.coordinates)
}

// Measured is how many pairs the simulator measured directly.
func (p *Pairs) Measured() int {
	if p == nil {
		return 0
	}
	return len(p.measured)
}

// fresh returns e when it is no older than FreshWindows windows.
func (p *Pairs) fresh(e *PairEstimate) *PairEstimate {
	if e == nil || e.Age > FreshWindows*p.Window {
		return nil
	}
	return e
}

// The pairs key as the wire has it. Each entry is decoded on its own, so
// that one odd entry costs only itself.
type wirePairsAnswer struct {
	Timestamp     string     `json:"timestamp"`
	WindowSeconds float64    `json:"window_seconds"`
	Pairs         *wirePairs `json:"pairs"`
}

type wirePairs struct {
	WindowSeconds float64                    `json:"window_seconds"`
	Coordinates   map[string]json.RawMessage `json:"coordinates"`
	Measured      []json.RawMessage          `json:"measured"`
}

type wireCoordinate struct {
	Vec        []float64 `json:"vec"`
	Error      float64   `json:"error"`
	Adjustment float64   `json:"adjustment"`
	Height     float64   `json:"height"`
	Samples    int       `json:"samples"`
}

type wirePair struct {
	From          string            `json:"from"`
	To            string            `json:"to"`
	LatencyMs     *wirePairEstimate `json:"latency_ms"`
	PacketLoss    *wirePairEstimate `json:"packet_loss"`
	BandwidthMbps *wirePairEstimate `json:"bandwidth_mbps"`
}

type wirePairEstimate struct {
	Value      *float64 `json:"value"`
	Low        *float64 `json:"low"`
	High       *float64 `json:"high"`
	AtLeast    bool     `json:"at_least"`
	Samples    int      `json:"samples"`
	MeasuredAt string   `json:"measured_at"`
	AgeSeconds *float64 `json:"age_seconds"`
}

// pairsOf reads the pairs an answer describes, with encoding/json: once
// per answer, and only for a profile whose plugins ask.
func pairsOf(body []byte) *Pairs {
	w, err := unmarshalLenient[wirePairsAnswer](body)
	if err != nil || w.Pairs == nil {
		return nil
	}
	p := &Pairs{Window: DefaultPairsWindow}
	for _, s := range []float64{w.Pairs.WindowSeconds, w.WindowSeconds} {
		if s >= 1 && !math.IsInf(s, 0) {
			p.Window = time.Duration(s * float64(time.Second))
			break
		}
	}
	stamp, _ := parseTime(w.Timestamp)
	for node, raw := range w.Pairs.Coordinates {
		if c, ok := coordinateOf(raw); ok {
			if p.coordinates == nil {
				p.coordinates = make(map[string]*coordinate.Coordinate, len(w.Pairs.Coordinates))
			}
			p.coordinates[node] = c
		}
	}
	for _, raw := range w.Pairs.Measured {
		var wp wirePair
		if json.Unmarshal(raw, &wp) != nil || wp.From == "" || wp.To == "" || wp.From == wp.To {
			continue
		}
		m := PairMeasurement{
			LatencyMs:     wp.LatencyMs.estimate(stamp, 0, math.Inf(1)),
			PacketLoss:    wp.PacketLoss.estimate(stamp, 0, 1),
			BandwidthMbps: wp.BandwidthMbps.estimate(stamp, 0, math.Inf(1)),
		}
		if m.LatencyMs == nil && m.PacketLoss == nil && m.BandwidthMbps == nil {
			continue
		}
		if p.measured == nil {
			p.measured, p.inMeasured = map[pairKey]PairMeasurement{}, map[string]bool{}
		}
		p.measured[keyOf(wp.From, wp.To)] = m
		p.inMeasured[wp.From], p.inMeasured[wp.To] = true, true
	}
	if p.coordinates == nil && p.measured == nil {
		return nil
	}
	return p
}

// coordinateOf reads one node's coordinate: false for one that is not
// finite, or that no round trip has updated yet (it sits at the origin
// and says nothing of the node).
func coordinateOf(raw json.RawMessage) (*coordinate.Coordinate, bool) {
	var wc wireCoordinate
	if json.Unmarshal(raw, &wc) != nil || len(wc.Vec) == 0 || wc.Samples <= 0 || wc.Error < 0 || wc.Height < 0 {
		return nil, false
	}
	c := &coordinate.Coordinate{Vec: wc.Vec, Error: wc.Error, Adjustment: wc.Adjustment, Height: wc.Height}
	return c, c.IsValid()
}

// estimate judges e, a metric whose values lie in [lowest, highest]: nil
// without a finite value there. An end on the wrong side of the value is
// no interval, and is taken as the value.
func (e *wirePairEstimate) estimate(stamp time.Time, lowest, highest float64) *PairEstimate {
	if e == nil || e.Value == nil || !finiteIn(*e.Value, lowest, highest) {
		return nil
	}
	v := *e.Value
	out := &PairEstimate{Value: v, Low: v, High: v, AtLeast: e.AtLeast, Samples: e.Samples}
	if e.Low != nil && finiteIn(*e.Low, lowest, v) {
		out.Low = *e.Low
	}
	if e.High != nil && finiteIn(*e.High, v, highest) && !e.AtLeast {
		out.High = *e.High
	}
	switch at, ok := parseTime(e.MeasuredAt); {
	case e.AgeSeconds != nil && finiteIn(*e.AgeSeconds, 0, math.MaxFloat64):
		out.Age = time.Duration(*e.AgeSeconds * float64(time.Second))
	case ok && !stamp.IsZero() && stamp.After(at):
		out.Age = stamp.Sub(at)
	}
	return out
}

func finiteIn(v, lowest, highest float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= lowest && v <= highest
}
