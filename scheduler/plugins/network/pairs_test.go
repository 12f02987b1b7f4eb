package network

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// pairsAnswer is an answer with three nodes' coordinates on a line (a at
// 0, b at 1 ms, c at 3 ms, each 10 µs high) and, unless the test replaces
// it, one measured pair.
const pairsAnswer = `{
  "results": {"a": {"score": 1}, "b": {"score": 1}, "c": {"score": 1}},
  "timestamp": "2026-01-02T03:04:05Z",
  "window_seconds": 15,
  "pairs": {
    "window_seconds": 10,
    "coordinates": {
      "a": {"vec": [0, 0], "error": 0.2, "adjustment": 0, "height": 0.00001, "samples": 40},
      "b": {"vec": [0.001, 0], "error": 0.4, "adjustment": 0, "height": 0.00001, "samples": 40},
      "c": {"vec": [0.003, 0], "error": 0.2, "adjustment": 0, "height": 0.00001, "samples": 40},
      "fresh": {"vec": [0, 0], "error": 1.5, "adjustment": 0, "height": 0.00001, "samples": 0},
      "odd": {"vec": [NaN, 0], "error": 0.2, "adjustment": 0, "height": 0.00001, "samples": 3},
      "flat": {"vec": [0, 0, 0], "error": 0.2, "adjustment": 0, "height": 0.00001, "samples": 3}
    },
    "measured": [
      {"from": "c", "to": "a",
       "latency_ms": {"value": 5.0, "low": 4.5, "high": 5.6, "samples": 30, "measured_at": "2026-01-02T03:04:03Z", "age_seconds": 2},
       "packet_loss": {"value": 0.04, "low": 0.03, "high": 0.05, "samples": 30, "measured_at": "2026-01-02T03:04:03Z"},
       "bandwidth_mbps": {"value": 90, "low": 80, "high": 100, "samples": 4, "measured_at": "2026-01-02T03:03:00Z", "age_seconds": 65}},
      {"from": "b", "to": "c",
       "latency_ms": {"value": 9.0, "low": 8, "high": 10, "samples": 30, "age_seconds": 31},
       "bandwidth_mbps": {"value": 500, "low": 500, "samples": 3, "at_least": true, "age_seconds": 1}}
    ]
  }
}`

func TestPairsCost(t *testing.T) {
	p := (&Simulation{Body: []byte(pairsAnswer)}).Pairs()
	if p == nil {
		t.Fatal("Pairs() = nil for an answer with pairs")
	}
	if p.Window != 10*time.Second {
		t.Errorf("Window = %s, want the pairs' own 10s", p.Window)
	}
	for _, tc := range []struct {
		name string
		a, b string
		want PairCost
	}{
		{"one node crosses nothing", "a", "a", PairCost{Source: CostSameNode}},
		{"a node unknown to the answer is still itself", "zz", "zz", PairCost{Source: CostSameNode}},
		// 1 ms apart plus both heights; the mean error (0.3) either side.
		{"estimated from the coordinates", "a", "b", PairCost{Source: CostEstimated, RTTMs: 1.02, RTTLowMs: 1.02 * 0.7, RTTHighMs: 1.02 * 1.3}},
		// The bandwidth is 65 s old, over three 10 s windows: stale, unlike
		// the latency and the loss (whose age comes from measured_at).
		{"measured, in either order", "a", "c", PairCost{Source: CostMeasured, RTTMs: 5, RTTLowMs: 4.5, RTTHighMs: 5.6,
			Loss: 0.04, LossLow: 0.03, LossHigh: 0.05, LossKnown: true}},
		{"measured, the other order", "c", "a", PairCost{Source: CostMeasured, RTTMs: 5, RTTLowMs: 4.5, RTTHighMs: 5.6,
			Loss: 0.04, LossLow: 0.03, LossHigh: 0.05, LossKnown: true}},
		// The latency is 31 s old: the coordinates estimate the round
		// trip, and the fresh bandwidth bound is still the pair's.
		{"a stale latency falls back to the coordinates", "b", "c", PairCost{Source: CostEstimated, RTTMs: 2.02, RTTLowMs: 2.02 * 0.7,
			RTTHighMs: 2.02 * 1.3, BandwidthMbps: 500, BandwidthKnown: true, BandwidthAtLeast: true}},
		{"no coordinate", "a", "zz", PairCost{}},
		{"a coordinate no round trip updated", "a", "fresh", PairCost{}},
		{"a coordinate that is not finite", "a", "odd", PairCost{}},
		{"coordinates of other dimensions", "a", "flat", PairCost{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Cost(tc.a, tc.b)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Cost(%q, %q) (-want +got):\n%s", tc.a, tc.b, diff)
			}
			if got.Known() != (tc.want.Source != CostUnknown) {
				t.Errorf("Known() = %t for %v", got.Known(), got.Source)
			}
		})
	}
	if got, want := p.Coordinates(), 4; got != want {
		t.Errorf("Coordinates() = %d, want %d (a, b, c and flat)", got, want)
	}
	if got, want := p.Measured(), 2; got != want {
		t.Errorf("Measured() = %d, want %d", got, want)
	}
}

func TestPairsOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		body       string
		wantNil    bool
		wantWindow time.Duration
	}{
		{"no pairs key", `{"results": {"a": {"score": 1}}}`, true, 0},
		{"pairs null", `{"results": {}, "pairs": null}`, true, 0},
		{"nothing readable", `{"results": {}, "pairs": {"coordinates": {"a": {"vec": "x"}}, "measured": [{"from": "a", "to": "a"}, 3]}}`, true, 0},
		{"not JSON", `{"results": `, true, 0},
		{"the answer's window", `{"window_seconds": 20, "pairs": {"measured": [{"from": "a", "to": "b", "latency_ms": {"value": 1}}]}}`, false, 20 * time.Second},
		{"no window at all", `{"pairs": {"measured": [{"from": "a", "to": "b", "latency_ms": {"value": 1}}]}}`, false, DefaultPairsWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pairsOf([]byte(tc.body))
			if (p == nil) != tc.wantNil {
				t.Fatalf("pairsOf = %+v, want nil: %t", p, tc.wantNil)
			}
			if p != nil && p.Window != tc.wantWindow {
				t.Errorf("Window = %s, want %s", p.Window, tc.wantWindow)
			}
		})
	}
}

func TestPairEstimate(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   *wirePairEstimate
		want *PairEstimate
	}{
		{"none", nil, nil},
		{"no value", &wirePairEstimate{Low: f(1)}, nil},
		{"not finite", &wirePairEstimate{Value: f(math.Inf(1))}, nil},
		{"below the metric's range", &wirePairEstimate{Value: f(-1)}, nil},
		{"ends on the wrong side are no interval", &wirePairEstimate{Value: f(2), Low: f(3), High: f(1)}, &PairEstimate{Value: 2, Low: 2, High: 2}},
		{"a lower bound has no high end", &wirePairEstimate{Value: f(2), Low: f(2), High: f(9), AtLeast: true}, &PairEstimate{Value: 2, Low: 2, High: 2, AtLeast: true}},
		{"age served", &wirePairEstimate{Value: f(2), AgeSeconds: f(1.5), MeasuredAt: "2026-01-02T03:00:00Z"}, &PairEstimate{Value: 2, Low: 2, High: 2, Age: 1500 * time.Millisecond}},
		{"age from the time", &wirePairEstimate{Value: f(2), MeasuredAt: "2026-01-02T03:04:00Z"}, &PairEstimate{Value: 2, Low: 2, High: 2, Age: 5 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.in.estimate(stamp, 0, math.Inf(1))); diff != "" {
				t.Errorf("estimate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPairsNil(t *testing.T) {
	var p *Pairs
	if got := p.Cost("a", "b"); got.Known() {
		t.Errorf("nil Pairs: Cost(a, b) = %+v, want unknown", got)
	}
	if got := p.Cost("a", "a"); got.Source != CostSameNode {
		t.Errorf("nil Pairs: Cost(a, a) = %+v, want the same node", got)
	}
}
