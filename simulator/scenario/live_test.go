package scenario

import (
	"testing"
	"time"
)

// TestLiveResponse checks how a scenario pins or overrides measured nodes:
// a scenario's score pins a node, a scenario's metric replaces the
// measured one and the score is derived from the result, a node only the
// scenario names is served from it, and the rest is served as measured.
func TestLiveResponse(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	at := time.Date(2026, 12, 1, 10, 0, 0, 500, time.UTC)
	m := Measured{At: at, WindowSeconds: 15, Nodes: map[string]Node{
		"measured": {LatencyMs: f(10), BandwidthMbps: f(500), PacketLoss: f(0.5)},
		"pinned":   {LatencyMs: f(1), BandwidthMbps: f(1000), PacketLoss: f(0)},
		"override": {LatencyMs: f(10), BandwidthMbps: f(20), PacketLoss: f(0.05)},
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
		"measured":      0.5 * 0.5 * 0.5, // loss, bandwidth, latency factors
		"pinned":        0.25,            // the scenario's score
		"override":      0.95 * 1 * 0.5,  // measured loss and latency, the scenario's bandwidth
		"scenario-only": 0.75,
	} {
		r, ok := resp.Results[name]
		if !ok || r.Score < want-1e-9 || r.Score > want+1e-9 {
			t.Errorf("%s: score %v (present %v), want %v", name, r.Score, ok, want)
		}
	}
	if r := resp.Results["override"]; r.BandwidthMbps == nil || *r.BandwidthMbps != 1000 || r.PacketLoss == nil || *r.PacketLoss != 0.05 {
		t.Errorf("override: bandwidth %v, loss %v; want the scenario's 1000 and the measured 0.05", r.BandwidthMbps, r.PacketLoss)
	}
	if len(resp.Results) != 4 {
		t.Errorf("%d results, want 4", len(resp.Results))
	}
	if got := LiveResponse(nil, m); got.Source != "live" || len(got.Results) != 3 {
		t.Errorf("without a scenario: source %q, %d results; want live, 3", got.Source, len(got.Results))
	}
	// Measurements are not changed by the merge.
	if *m.Nodes["override"].BandwidthMbps != 20 {
		t.Error("LiveResponse changed the measurements")
	}
}
