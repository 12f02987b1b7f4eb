package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/api/ties"
	"kns3.dev/kns3/simulator/livescore"
	"kns3.dev/kns3/simulator/scenario"
)

// fakeLive is a live source whose measurements the test sets.
type fakeLive struct {
	mu  sync.Mutex
	seq uint64
	m   scenario.Measured
}

func (f *fakeLive) set(latency float64, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	high := latency
	f.m = scenario.Measured{At: at, WindowSeconds: 15, Rules: livescore.Rules{Targets: livescore.Targets{BandwidthMbps: 100, LatencyMs: 0, PacketLoss: 0}, Differences: ties.DefaultDifferences()},
		Nodes: map[string]api.Measurements{"n1": {
			LatencyMs:     &api.Estimate{Value: latency, Low: latency, High: &high, Samples: 100},
			PacketLoss:    &api.Estimate{Value: 0, Low: 0, High: new(float64), Samples: 100},
			BandwidthMbps: &api.Estimate{Value: 1000, Low: 1000, AtLeast: true, Samples: 2},
		}}}
}

func (f *fakeLive) measured() (uint64, scenario.Measured) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq, f.m
}

// TestLiveServed checks a server with a live source serves the latest
// measurements merged with the scenario, with the measurements' timestamp
// and window, a new ETag when they change and 304 while they do not, and
// the scenario's fault still in force.
func TestLiveServed(t *testing.T) {
	s := New()
	live := &fakeLive{}
	at := time.Date(2026, 12, 1, 10, 0, 7, 0, time.UTC)
	live.set(10, at)
	s.SetLive(live.measured)
	s.SetScenario(mustScenario(t, "source: pins\nnodes: {n2: {score: 0.5}}"))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	decode := func(body string) api.SimulationResponse {
		t.Helper()
		var r api.SimulationResponse
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	resp, body := get(t, srv, http.MethodGet, "/simulate", nil)
	r := decode(body)
	if r.Source != "live+pins" || r.WindowSeconds != 15 || !r.Timestamp.Equal(at) || r.Results["n1"].Score != 0.5 || r.Results["n2"].Score != 0.5 {
		t.Errorf("first answer: %s", body)
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := get(t, srv, http.MethodGet, "/simulate", map[string]string{"If-None-Match": etag}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("same measurements: %d, want 304", resp.StatusCode)
	}
	live.set(30, at.Add(time.Second))
	resp, body = get(t, srv, http.MethodGet, "/simulate", map[string]string{"If-None-Match": etag})
	if r := decode(body); resp.StatusCode != 200 || resp.Header.Get("ETag") == etag || r.Results["n1"].Score != 0.25 || !r.Timestamp.Equal(at.Add(time.Second)) {
		t.Errorf("new measurements: %d %s", resp.StatusCode, body)
	}
	s.SetScenario(mustScenario(t, "fault: {status: 500}\nnodes: {}"))
	if resp, _ := get(t, srv, http.MethodGet, "/simulate", nil); resp.StatusCode != 500 {
		t.Errorf("with the scenario's fault: %d, want 500", resp.StatusCode)
	}
}

// TestLiveServesLinkUse checks a node's measured link use reaches the
// JSON answer as link_use_mbps, beside its other estimates, and is absent
// when not measured.
func TestLiveServesLinkUse(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 7, 0, time.UTC)
	use := 42.5
	for _, tc := range []struct {
		name string
		use  *api.Estimate
		want string // "" for absent
	}{
		{"measured", &api.Estimate{Value: use, Low: use, High: &use, Samples: 16, MeasuredAt: at.Add(-time.Second), AgeSeconds: 1},
			`"link_use_mbps":{"value":42.5,"low":42.5,"high":42.5,"samples":16,"measured_at":"2026-12-01T10:00:06Z","age_seconds":1}`},
		{"not measured", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := &fakeLive{}
			live.set(10, at)
			n1 := live.m.Nodes["n1"]
			n1.LinkUseMbps = tc.use
			live.m.Nodes["n1"] = n1
			s := New()
			s.SetLive(live.measured)
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			_, body := get(t, srv, http.MethodGet, "/simulate", nil)
			if tc.want == "" {
				if strings.Contains(body, "link_use_mbps") {
					t.Errorf("answer %s: want no link_use_mbps", body)
				}
				return
			}
			if !strings.Contains(body, tc.want) {
				t.Errorf("answer %s: want %s", body, tc.want)
			}
			var r api.SimulationResponse
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				t.Fatal(err)
			}
			if m := r.Results["n1"].Measured; m == nil || m.LinkUseMbps == nil || m.LinkUseMbps.Value != use || m.BandwidthMbps == nil {
				t.Errorf("decoded n1: %+v, want link use %g beside the bandwidth", m, use)
			}
		})
	}
}

// TestLiveServesPairs checks what the simulator measured between nodes
// reaches GET /simulate's JSON under "pairs", beside the results.
func TestLiveServesPairs(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 7, 0, time.UTC)
	live := &fakeLive{}
	live.set(1, at)
	high := 0.4
	live.m.Pairs = &api.Pairs{WindowSeconds: 15, Coordinates: map[string]api.Coordinate{"n1": {Vec: make([]float64, 8), Error: 0.2, Samples: 9, MeasuredAt: at}},
		Measured: []api.PairMeasurement{{From: "n1", To: "n2", LatencyMs: &api.Estimate{Value: 0.3, Low: 0.2, High: &high, Samples: 700, MeasuredAt: at}}}}
	s := New()
	s.SetLive(live.measured)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	_, body := get(t, srv, http.MethodGet, "/simulate", nil)
	var r struct {
		Results map[string]json.RawMessage `json:"results"`
		Pairs   *api.Pairs                 `json:"pairs"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Pairs == nil || r.Pairs.Coordinates["n1"].Samples != 9 || len(r.Pairs.Measured) != 1 || r.Pairs.Measured[0].LatencyMs.Samples != 700 || r.Results["n1"] == nil {
		t.Errorf("answer %s: want n1's result and the pairs", body)
	}
}
