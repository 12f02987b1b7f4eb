package scenario

import (
	"testing"
	"time"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/livescore"
)

// est is a measured metric with a narrow interval and many samples.
func est(v float64) *api.Estimate {
	low, high := v*0.99, v*1.01
	return &api.Estimate{Value: v, Low: low, High: &high, Samples: 1000}
}

// TestLiveResponse checks how a scenario pins or overrides measured nodes:
// a scenario's score pins a node, a scenario's metric replaces the
// measured one exactly and leaves its estimate out, a node only the
// scenario names is served from it, and the rest is served as measured,
// with its estimates.
func TestLiveResponse(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 500, time.UTC)
	m := Measured{At: at, WindowSeconds: 15, Rules: livescore.DefaultRules(), Nodes: map[string]api.Measurements{
		"measured": {LatencyMs: est(11), BandwidthMbps: est(50), PacketLoss: est(0.505)},
		"pinned":   {LatencyMs: est(0.2), BandwidthMbps: est(1000), PacketLoss: est(0)},
		"override": {LatencyMs: est(11), BandwidthMbps: est(20), PacketLoss: est(0.055)},
	}}
	s, err := Parse("pins.yaml", []byte(`nodes:
  pinned: {score: 0.25}
  override: {bandwidth_mbps: 1000}
  scenario-only: {score: 0.75}
`))
	if err != nil {
		t.Fatal(err)
	}
	resp := LiveResponse(s, m)
	if resp.Source != "live+pins.yaml" || resp.WindowSeconds != 15 || !resp.Timestamp.Equal(at.Truncate(time.Second)) {
		t.Errorf("source %q, window %d, timestamp %s; want live+pins.yaml, 15, %s", resp.Source, resp.WindowSeconds, resp.Timestamp, at.Truncate(time.Second))
	}
	for name, want := range map[string]float64{
		"measured":      0.5 * 0.5 * 0.5,  // loss, bandwidth, latency factors over their targets
		"pinned":        0.25,             // the scenario's score
		"override":      0.95 * 1.0 * 0.5, // measured loss and latency, the scenario's bandwidth
		"scenario-only": 0.75,
	} {
		r, ok := resp.Results[name]
		if !ok || r.Score < want-1e-9 || r.Score > want+1e-9 {
			t.Errorf("%s: score %v (present %v), want %v", name, r.Score, ok, want)
		}
	}
	r := resp.Results["override"]
	if r.BandwidthMbps == nil || *r.BandwidthMbps != 1000 || r.PacketLoss == nil || *r.PacketLoss != 0.055 {
		t.Errorf("override: bandwidth %v, loss %v; want the scenario's 1000 and the measured 0.055", r.BandwidthMbps, r.PacketLoss)
	}
	if r.Measured == nil || r.Measured.BandwidthMbps != nil || r.Measured.PacketLoss == nil {
		t.Errorf("override: measured %+v, want the measured loss and no measured bandwidth", r.Measured)
	}
	if r := resp.Results["measured"]; r.Measured == nil || r.Measured.LatencyMs.Samples != 1000 {
		t.Errorf("measured: %+v, want its estimates served", r.Measured)
	}
	if r := resp.Results["scenario-only"]; r.Measured != nil {
		t.Errorf("scenario-only: measured %+v, want none", r.Measured)
	}
	if len(resp.Results) != 4 {
		t.Errorf("%d results, want 4", len(resp.Results))
	}
	if got := LiveResponse(nil, m); got.Source != "live" || len(got.Results) != 3 {
		t.Errorf("without a scenario: source %q, %d results; want live, 3", got.Source, len(got.Results))
	}
	// Measurements are not changed by the merge.
	if m.Nodes["override"].BandwidthMbps.Value != 20 {
		t.Error("LiveResponse changed the measurements")
	}
}

// TestLiveUnmeasuredIsNotPerfect serves a measured node without a
// bandwidth (no train has reached it yet) beside a node measured in full
// at 50 Mbit/s: unknown must not outrank measured.
func TestLiveUnmeasuredIsNotPerfect(t *testing.T) {
	m := Measured{At: time.Unix(1000, 0), WindowSeconds: 15, Rules: livescore.DefaultRules(), Nodes: map[string]api.Measurements{
		"no-bandwidth-yet": {LatencyMs: est(0.2), PacketLoss: est(0)},
		"measured":         {LatencyMs: est(0.2), PacketLoss: est(0), BandwidthMbps: est(50)},
	}}
	r := LiveResponse(nil, m)
	if u, k := r.Results["no-bandwidth-yet"].Score, r.Results["measured"].Score; u > k {
		t.Errorf("a node without a bandwidth scores %.3f, above a node measured at 50 Mbit/s (%.3f)", u, k)
	}
}

// TestLiveLinkUseIsServedNotScored serves two nodes measured alike but
// for the traffic already on their links: each is served its link use,
// also when a scenario overrides a metric, and both score the same.
func TestLiveLinkUseIsServedNotScored(t *testing.T) {
	use := func(v float64) *api.Estimate { return &api.Estimate{Value: v, Low: v, High: &v, Samples: 16} }
	for _, tc := range []struct {
		name     string
		scenario string
	}{
		{"measured only", ""},
		{"a metric overridden", "nodes: {idle: {latency_ms: 11}, busy: {latency_ms: 11}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Measured{At: time.Unix(1000, 0), Rules: livescore.DefaultRules(), Nodes: map[string]api.Measurements{
				"idle": {LatencyMs: est(11), BandwidthMbps: est(1000), PacketLoss: est(0), LinkUseMbps: use(0)},
				"busy": {LatencyMs: est(11), BandwidthMbps: est(1000), PacketLoss: est(0), LinkUseMbps: use(900)},
			}}
			var s *Scenario
			if tc.scenario != "" {
				var err error
				if s, err = Parse("s.yaml", []byte(tc.scenario)); err != nil {
					t.Fatal(err)
				}
			}
			resp := LiveResponse(s, m)
			idle, busy := resp.Results["idle"], resp.Results["busy"]
			if idle.Score != busy.Score || idle.Score == 0 {
				t.Errorf("scores %v (idle) and %v (busy): want the same, link use takes no part", idle.Score, busy.Score)
			}
			for name, want := range map[string]float64{"idle": 0, "busy": 900} {
				r := resp.Results[name]
				if r.Measured == nil || r.Measured.LinkUseMbps == nil || r.Measured.LinkUseMbps.Value != want {
					t.Errorf("%s: measured %+v, want link use %g served", name, r.Measured, want)
				}
			}
		})
	}
}

// A node the scenario pins by score is not measured for ranking: it
// counts neither way towards the warm-up's quorum, so three nodes measured
// in full beside a fourth that is pinned rank, and a node found but not
// yet measured still holds the ranking back.
func TestLiveResponseWarmUpLeavesPinsOut(t *testing.T) {
	full := func() api.Measurements {
		return api.Measurements{LatencyMs: est(0.1), BandwidthMbps: est(1000), PacketLoss: est(0)}
	}
	s, err := Parse("s.yaml", []byte("nodes: {pinned: {score: 0.4}, overridden: {latency_ms: 4, bandwidth_mbps: 1000, packet_loss: 0.01}}"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		known int
		warm  bool
	}{
		{"every agent answered", 4, false},
		{"a fifth agent found, not yet measured", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Measured{At: time.Unix(1000, 0), Rules: livescore.DefaultRules(), Known: tc.known, Nodes: map[string]api.Measurements{
				"a": full(), "b": full(), "overridden": full(), "pinned": full(),
			}}
			resp := LiveResponse(s, m)
			if (resp.WarmUp != nil) != tc.warm {
				t.Fatalf("warm-up %+v, want warming up %v", resp.WarmUp, tc.warm)
			}
			if got := resp.Results["pinned"].Score; got != 0.4 {
				t.Errorf("the pinned node scores %v, want its pin 0.4", got)
			}
			if over := resp.Results["overridden"].Score; tc.warm != (over == 0) {
				t.Errorf("the node with overridden metrics scores %v while warming up %v", over, tc.warm)
			}
		})
	}
}

// TestLiveResponseServesPairs: what was measured between nodes reaches
// the answer as it is, and an answer without it has none.
func TestLiveResponseServesPairs(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	pairs := &api.Pairs{WindowSeconds: 15, Coordinates: map[string]api.Coordinate{"a": {Vec: make([]float64, 8), Samples: 3, MeasuredAt: at}},
		Measured: []api.PairMeasurement{{From: "a", To: "b", LatencyMs: est(0.3), PacketLoss: est(0)}}}
	m := Measured{At: at, WindowSeconds: 15, Rules: livescore.DefaultRules(), Nodes: map[string]api.Measurements{"a": {LatencyMs: est(1)}}, Pairs: pairs}
	if resp := LiveResponse(nil, m); resp.Pairs != pairs {
		t.Errorf("pairs served as %+v, want %+v", resp.Pairs, pairs)
	}
	m.Pairs = nil
	if resp := LiveResponse(nil, m); resp.Pairs != nil {
		t.Errorf("pairs served as %+v without any measured", resp.Pairs)
	}
}
