package network

import (
	"testing"
	"time"
)

// linksBody is an answer with each kind of link entry.
var linksBody = []byte(`{"timestamp": "2026-12-03T12:00:00Z", "window_seconds": 5, "results": {
		"used": {"score": 1, "bandwidth_mbps": 100, "measured": {
			"bandwidth_mbps": {"value": 100, "low": 90, "high": 110, "samples": 3, "measured_at": "2026-12-03T12:00:03Z", "age_seconds": 2},
			"link_use_mbps": {"value": 30, "low": 30, "high": 30, "samples": 5, "measured_at": "2026-12-03T12:00:04Z", "age_seconds": 1}}},
		"bound": {"score": 1, "bandwidth_mbps": 500, "measured": {
			"bandwidth_mbps": {"value": 500, "low": 500, "at_least": true, "samples": 3, "measured_at": "2026-12-03T12:00:02Z", "age_seconds": 3}}},
		"static": {"score": 0.5, "bandwidth_mbps": 50},
		"near": {"score": 1, "bandwidth_mbps": 96, "measured": {
			"bandwidth_mbps": {"value": 96, "low": 86, "high": 106, "samples": 3, "measured_at": "2026-12-03T12:00:03Z"}}},
		"inverted": {"score": 1, "bandwidth_mbps": 80, "measured": {
			"bandwidth_mbps": {"value": 80, "low": 85, "high": 75, "samples": 3, "measured_at": "2026-12-03T12:00:03Z"}}},
		"overfull": {"score": 0.1, "bandwidth_mbps": 10, "measured": {"link_use_mbps": {"value": 40, "measured_at": "2026-12-03T12:00:04Z"}}},
		"none": {"score": 1, "bandwidth_mbps": null},
		"negative": {"score": 1, "bandwidth_mbps": -5}}}`)

func TestLinks(t *testing.T) {
	body := linksBody
	if _, ok := fastLinkReadings(body); !ok {
		t.Errorf("fastLinkReadings declined the common shape: the test would check only encoding/json's reading")
	}
	// A window of 5 s before the newest reading.
	at := func(s int) time.Time { return time.Date(2026, 12, 3, 12, 0, s, 0, time.UTC) }
	want := map[string]struct {
		link Link
		free float64
	}{
		"used": {Link{BandwidthMbps: 100, BandwidthLowMbps: 90, BandwidthHighMbps: 110, RankedBandwidthMbps: 100,
			UseMbps: 30, UseMeasured: true, WindowStart: at(-1)}, 70},
		"bound": {Link{BandwidthMbps: 500, BandwidthLowMbps: 500, BandwidthHighMbps: 500, RankedBandwidthMbps: 500,
			BandwidthAtLeast: true, WindowStart: at(-3)}, 500},
		// Within the noise of "used": ranked at its bandwidth.
		"near": {Link{BandwidthMbps: 96, BandwidthLowMbps: 86, BandwidthHighMbps: 106, RankedBandwidthMbps: 100,
			WindowStart: at(-2)}, 96},
		// Served without an interval, or with one on the wrong side of
		// its value: the value alone. 80 is within a fifth of "used"'s
		// 100, too little a difference to count: ranked at its bandwidth.
		"static":   {Link{BandwidthMbps: 50, BandwidthLowMbps: 50, BandwidthHighMbps: 50, RankedBandwidthMbps: 50, WindowStart: at(0)}, 50},
		"inverted": {Link{BandwidthMbps: 80, BandwidthLowMbps: 80, BandwidthHighMbps: 80, RankedBandwidthMbps: 100, WindowStart: at(-2)}, 80},
		"overfull": {Link{BandwidthMbps: 10, BandwidthLowMbps: 10, BandwidthHighMbps: 10, RankedBandwidthMbps: 10,
			UseMbps: 40, UseMeasured: true, WindowStart: at(-1)}, 0},
	}
	sim := &Simulation{Body: body}
	got := sim.Links()
	if len(got) != len(want) {
		t.Errorf("Links() has %d nodes, want %d: %+v", len(got), len(want), got)
	}
	for node, w := range want {
		l, ok := got[node]
		if !ok {
			t.Errorf("%s: no link", node)
			continue
		}
		if !l.WindowStart.Equal(w.link.WindowStart) {
			t.Errorf("%s: described until %s, want %s", node, l.WindowStart, w.link.WindowStart)
		}
		l.WindowStart = w.link.WindowStart
		if l != w.link {
			t.Errorf("%s: %+v, want %+v", node, l, w.link)
		}
		if f := l.FreeMbps(); f != w.free {
			t.Errorf("%s: free %g, want %g", node, f, w.free)
		}
	}
}

// A number no link reads (above MaxMbps, 1 Pbit/s) is no measurement: a
// bandwidth beyond it describes no link, a use beyond it is not measured,
// and an interval's end beyond it is no end. Both readers agree.
func TestLinksBounded(t *testing.T) {
	body := []byte(`{"timestamp": "2026-12-03T12:00:00Z", "window_seconds": 5, "results": {
		"huge": {"score": 1, "bandwidth_mbps": 2e16},
		"huge-use": {"score": 1, "bandwidth_mbps": 100, "measured": {"link_use_mbps": {"value": 2e16, "measured_at": "2026-12-03T12:00:04Z"}}},
		"huge-high": {"score": 1, "bandwidth_mbps": 100, "measured": {
			"bandwidth_mbps": {"value": 100, "low": 90, "high": 2e16, "samples": 3, "measured_at": "2026-12-03T12:00:03Z"}}},
		"fastest": {"score": 1, "bandwidth_mbps": 1e9}}}`)
	fast, ok := fastLinkReadings(body)
	if !ok {
		t.Fatal("fastLinkReadings declined the common shape")
	}
	for reader, r := range map[string]linkReadings{"fast": fast, "slow": slowLinkReadings(body)} {
		links := map[string]Link{}
		for node, nr := range r.nodes {
			if l, ok := nr.link(time.Time{}, 0); ok {
				links[node] = l
			}
		}
		if _, ok := links["huge"]; ok {
			t.Errorf("%s: a link of 2e16 Mbit/s is described", reader)
		}
		if l := links["huge-use"]; l.UseMeasured || l.BandwidthMbps != 100 {
			t.Errorf("%s: huge-use = %+v, want 100 Mbit/s, use not measured", reader, l)
		}
		if l := links["huge-high"]; l.BandwidthHighMbps != 100 || l.BandwidthLowMbps != 90 {
			t.Errorf("%s: huge-high = %+v, want the interval's high end dropped", reader, l)
		}
		if l, ok := links["fastest"]; !ok || l.BandwidthMbps != MaxMbps {
			t.Errorf("%s: a link of exactly MaxMbps = %+v, %t, want it described", reader, l, ok)
		}
	}
}
