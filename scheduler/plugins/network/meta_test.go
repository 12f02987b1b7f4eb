package network

import (
	"testing"
	"time"
)

func TestMetaOfMetrics(t *testing.T) {
	got := MetaOf([]byte(`{"results":{"a":{"score":1,"latency_ms":0.5,"bandwidth_mbps":20,"packet_loss":0.05},
		"b":{"score":1,"latency_ms":null,"bandwidth_mbps":NaN,"packet_loss":"x"},"c":{"score":0.5,"latency_ms":3}}}`)).Metrics
	a, c := got["a"], got["c"]
	if a.LatencyMs == nil || *a.LatencyMs != 0.5 || *a.BandwidthMbps != 20 || *a.PacketLoss != 0.05 {
		t.Errorf("a: %+v", a)
	}
	if _, ok := got["b"]; ok {
		t.Errorf("b has no finite metric, yet is listed: %+v", got["b"])
	}
	if c.LatencyMs == nil || *c.LatencyMs != 3 || c.BandwidthMbps != nil || c.PacketLoss != nil {
		t.Errorf("c: %+v", c)
	}
	if MetaOf([]byte(`not json`)).Metrics != nil {
		t.Error("metrics from a body that is not JSON")
	}
	// A live answer says how sure each metric is: a bandwidth served as a
	// lower bound is kept as one.
	live := MetaOf([]byte(`{"results":{"fast":{"score":1,"bandwidth_mbps":500,"measured":{"bandwidth_mbps":{"value":500,"low":500,"at_least":true,"samples":7}}},
		"shaped":{"score":0.2,"bandwidth_mbps":19.3,"measured":{"bandwidth_mbps":{"value":19.3,"low":17.4,"high":21.3,"samples":2},"link_use_mbps":{"value":12.5,"samples":5}}},
		"odd":{"score":0.2,"bandwidth_mbps":10,"measured":{"link_use_mbps":{"value":-1}}}}}`)).Metrics
	if f, s := live["fast"], live["shaped"]; !f.BandwidthAtLeast || s.BandwidthAtLeast || s.BandwidthMbps == nil || *s.BandwidthMbps != 19.3 {
		t.Errorf("fast %+v, shaped %+v: want fast's bandwidth a lower bound, shaped's a measurement", f, s)
	}
	// The link's measured use, when there is one that is a use.
	if s := live["shaped"]; s.LinkUseMbps == nil || *s.LinkUseMbps != 12.5 {
		t.Errorf("shaped %+v: want a link use of 12.5", s)
	}
	if f, o := live["fast"], live["odd"]; f.LinkUseMbps != nil || o.LinkUseMbps != nil {
		t.Errorf("fast %+v, odd %+v: want no link use (none measured, and a negative one)", f, o)
	}
}

// The estimates behind a measured node's metrics are read with their
// intervals and times; a node a scenario alone describes has none.
func TestMetaOfEstimates(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	got := MetaOf([]byte(`{"results":{
		"live":{"score":0.2,"latency_ms":0.09,"bandwidth_mbps":500,"packet_loss":0.041,"measured":{
			"latency_ms":{"value":0.09,"low":0.04,"high":0.14,"samples":1643,"measured_at":"2026-11-30T10:15:00Z"},
			"bandwidth_mbps":{"value":500,"low":500,"at_least":true,"samples":3,"measured_at":"2026-11-30T10:14:58Z"},
			"packet_loss":{"value":NaN,"low":0,"high":1},
			"link_use_mbps":{"value":65,"low":65,"high":65,"samples":14,"measured_at":"bad"}}},
		"scenario":{"score":0.9,"latency_ms":2}}}`)).Metrics
	m := got["live"].Measured
	if m == nil || m.LatencyMs == nil || m.BandwidthMbps == nil || m.LinkUseMbps == nil {
		t.Fatalf("live node's estimates: %+v", m)
	}
	if e := m.LatencyMs; e.Value != 0.09 || e.Low == nil || *e.Low != 0.04 || e.High == nil || *e.High != 0.14 || !e.MeasuredAt.Equal(at) {
		t.Errorf("latency estimate %+v, want 0.09 [0.04, 0.14] at %s", e, at)
	}
	if e := m.BandwidthMbps; e.Value != 500 || e.High != nil || !e.MeasuredAt.Equal(at.Add(-2*time.Second)) {
		t.Errorf("bandwidth estimate %+v, want a lower bound of 500 with no high end", e)
	}
	if m.PacketLoss != nil {
		t.Errorf("loss estimate %+v from a value that is not finite", m.PacketLoss)
	}
	if e := m.LinkUseMbps; e.Value != 65 || !e.MeasuredAt.IsZero() {
		t.Errorf("link use estimate %+v, want 65 with no time", e)
	}
	if s := got["scenario"]; s.Measured != nil {
		t.Errorf("a scenario's node has estimates: %+v", s.Measured)
	}
}

// TestMetaOf reads the metadata and the metrics of one body, in both shapes
// of results and with the oddities the contract allows.
func TestMetaOf(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		body        string
		wantSource  string
		wantAt      time.Time
		wantWindow  int
		wantMetrics []string
	}{
		{name: "object results", wantSource: "lab", wantAt: at, wantWindow: 30, wantMetrics: []string{"a"},
			body: `{"results":{"a":{"score":1,"latency_ms":2}},"timestamp":"2026-11-30T10:15:00Z","window_seconds":30,"source":"lab"}`},
		{name: "Python's bare NaN", wantSource: "lab", wantAt: at, wantWindow: 30, wantMetrics: []string{"a"},
			body: `{"results":{"a":{"score":NaN,"latency_ms":2},"b":{"score":1,"packet_loss":NaN}},"timestamp":"2026-11-30T10:15:00Z","window_seconds":30,"source":"lab"}`},
		{name: "array results: metadata, no metrics", wantSource: "lab", wantWindow: 30,
			body: `{"results":[{"node":"a","score":1,"latency_ms":2}],"window_seconds":30,"source":"lab"}`},
		{name: "one odd node entry costs only that node", wantMetrics: []string{"b"},
			body: `{"results":{"a":0.9,"b":{"score":1,"latency_ms":2}}}`},
		{name: "an unreadable timestamp stays zero", wantSource: "x",
			body: `{"results":{},"timestamp":"yesterday","source":"x"}`},
		{name: "a field of another type costs only that field", wantMetrics: []string{"a"}, wantSource: "lab",
			body: `{"results":{"a":{"score":1,"latency_ms":2}},"window_seconds":"30","source":"lab"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := MetaOf([]byte(tc.body))
			if m.Source != tc.wantSource || !m.Timestamp.Equal(tc.wantAt) || m.WindowSeconds != tc.wantWindow {
				t.Errorf("meta %q %s %d, want %q %s %d", m.Source, m.Timestamp, m.WindowSeconds, tc.wantSource, tc.wantAt, tc.wantWindow)
			}
			var nodes []string
			for n := range m.Metrics {
				nodes = append(nodes, n)
			}
			if len(nodes) != len(tc.wantMetrics) || (len(nodes) == 1 && nodes[0] != tc.wantMetrics[0]) {
				t.Errorf("metrics for %v, want %v", nodes, tc.wantMetrics)
			}
		})
	}
}
