package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/scenario"
)

func get(t *testing.T, srv *httptest.Server, method, path string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func mustScenario(t *testing.T, doc string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSimulate(t *testing.T) {
	s := New()
	s.now = func() time.Time { return time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC) }
	s.SetScenario(nil)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	resp, body := get(t, srv, http.MethodGet, "/simulate", nil)
	if resp.StatusCode != 200 || body != `{"results":{},"timestamp":"2026-11-29T10:15:00Z","window_seconds":30,"source":"none"}` {
		t.Errorf("without a scenario: %d %s", resp.StatusCode, body)
	}

	s.SetScenario(mustScenario(t, "nodes: {worker-node-1: {score: 0.91, latency_ms: 0.8}}"))
	resp, body = get(t, srv, http.MethodGet, "/simulate", nil)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var got api.SimulationResponse
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	r := got.Results["worker-node-1"]
	if r.Score != 0.91 || *r.LatencyMs != 0.8 || r.BandwidthMbps != nil || got.Source != "test.yaml" {
		t.Errorf("%s", body)
	}
	if !strings.Contains(body, `"bandwidth_mbps":null`) {
		t.Errorf("unknown metrics must be null, as FastAPI writes them: %s", body)
	}
}

func TestConditionalGet(t *testing.T) {
	s := New()
	// One window throughout: the ETag changes with the scenario only.
	s.now = func() time.Time { return windowBase }
	s.SetScenario(mustScenario(t, "nodes: {a: {score: 1}}"))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	resp, _ := get(t, srv, http.MethodGet, "/simulate", nil)
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	resp, body := get(t, srv, http.MethodGet, "/simulate", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("matching If-None-Match: %d %q, want 304 and no body", resp.StatusCode, body)
	}
	s.SetScenario(mustScenario(t, "nodes: {a: {score: 2}}"))
	resp, body = get(t, srv, http.MethodGet, "/simulate", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != 200 || !strings.Contains(body, `"score":2`) || resp.Header.Get("ETag") == etag {
		t.Errorf("after a scenario change: %d %s etag %s", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
}

func TestFault(t *testing.T) {
	s := New()
	s.SetScenario(mustScenario(t, "fault: {status: 503}\nnodes: {a: {score: 1}}"))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, body := get(t, srv, http.MethodGet, "/simulate", nil)
	if resp.StatusCode != 503 || !strings.Contains(body, `"detail"`) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, srv, http.MethodGet, "/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("healthz %d: an injected fault must not make the container unhealthy", resp.StatusCode)
	}
}

func TestRoutes(t *testing.T) {
	srv := httptest.NewServer(New().Handler())
	defer srv.Close()
	tests := []struct {
		method, path string
		status       int
		body         string
		allow        string
	}{
		{http.MethodGet, "/healthz", 200, "ok", ""},
		{http.MethodGet, "/readyz", 200, "ok", ""},
		{http.MethodPost, "/readyz", 405, `{"detail":"Method Not Allowed"}` + "\n", "GET"},
		{http.MethodGet, "/nope", 404, `{"detail":"Not Found"}` + "\n", ""},
		{http.MethodGet, "/simulate/", 404, `{"detail":"Not Found"}` + "\n", ""},
		{http.MethodPost, "/simulate", 405, `{"detail":"Method Not Allowed"}` + "\n", "GET"},
		{http.MethodDelete, "/healthz", 405, `{"detail":"Method Not Allowed"}` + "\n", "GET"},
		{http.MethodPost, "/nope", 404, `{"detail":"Not Found"}` + "\n", ""},
		{http.MethodGet, "/pairs/interest", 405, `{"detail":"Method Not Allowed"}` + "\n", "PUT"},
		{http.MethodPut, "/simulate", 405, `{"detail":"Method Not Allowed"}` + "\n", "GET"},
	}
	for _, tt := range tests {
		resp, body := get(t, srv, tt.method, tt.path, nil)
		if resp.StatusCode != tt.status || body != tt.body || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s = %d %q Allow=%q, want %d %q Allow=%q", tt.method, tt.path, resp.StatusCode, body, resp.Header.Get("Allow"), tt.status, tt.body, tt.allow)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	srv := httptest.NewServer(New().Handler())
	defer srv.Close()
	resp, body := get(t, srv, http.MethodGet, "/openapi.json", nil)
	if resp.StatusCode != 200 || body != string(api.OpenAPIDocument) {
		t.Errorf("%d, body differs from the embedded document", resp.StatusCode)
	}
}

func TestReadyz(t *testing.T) {
	const notReady = `{"detail":"Not ready: the scenario's fault is hang, /simulate does not answer"}` + "\n"
	tests := []struct {
		name       string
		scenarios  []string // set in order; "" is no scenario
		close      bool
		wantStatus int
		wantBody   string
	}{
		{"no scenario", []string{""}, false, 200, "ok"},
		{"no fault", []string{"nodes: {a: {score: 1}}"}, false, 200, "ok"},
		{"status", []string{"nodes: {a: {score: 1}}\nfault: {status: 500}"}, false, 200, "ok"},
		{"error_rate", []string{"nodes: {a: {score: 1}}\nfault: {error_rate: 1}"}, false, 200, "ok"},
		{"delay answers later", []string{"nodes: {a: {score: 1}}\nfault: {delay_ms: 600000}"}, false, 200, "ok"},
		{"exit_code", []string{"nodes: {a: {score: 1}}\nfault: {exit_code: 3}"}, false, 200, "ok"},
		{"hang", []string{"nodes: {a: {score: 1}}\nfault: {hang: true}"}, false, 503, notReady},
		{"hang, then healed", []string{"nodes: {a: {score: 1}}\nfault: {hang: true}", "nodes: {a: {score: 1}}"}, false, 200, "ok"},
		{"healthy, then hang", []string{"nodes: {a: {score: 1}}", "nodes: {a: {score: 1}}\nfault: {hang: true}"}, false, 503, notReady},
		{"closed", []string{"nodes: {a: {score: 1}}"}, true, 503, `{"detail":"Not ready: shutting down"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			for _, doc := range tt.scenarios {
				if doc == "" {
					s.SetScenario(nil)
				} else {
					s.SetScenario(mustScenario(t, doc))
				}
			}
			if tt.close {
				s.Close()
			}
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			resp, body := get(t, srv, http.MethodGet, "/readyz", nil)
			if resp.StatusCode != tt.wantStatus || body != tt.wantBody {
				t.Errorf("readyz %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			if resp, body := get(t, srv, http.MethodGet, "/healthz", nil); resp.StatusCode != 200 || body != "ok" {
				t.Errorf("healthz %d %q, want 200 ok: it is liveness, whatever the fault", resp.StatusCode, body)
			}
		})
	}
}

// fakeClock is the server's clock in tests; requests read it concurrently.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// windowBase is a multiple of 7, 10 and 30 seconds in Unix time.
var windowBase = time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC)

func TestTimestampPerWindow(t *testing.T) {
	type step struct {
		at        time.Duration // after windowBase
		wantStamp time.Duration // after windowBase
		wantNew   bool          // a new ETag and 200, not 304
	}
	tests := []struct {
		name     string
		scenario string // "" is no scenario
		loadAt   time.Duration
		steps    []step
	}{
		{"window_seconds 10", "window_seconds: 10\nnodes: {a: {score: 1}}", 3 * time.Second, []step{
			{3 * time.Second, 0, true},
			{9*time.Second + 999*time.Millisecond, 0, false},
			{10 * time.Second, 10 * time.Second, true},
			{19 * time.Second, 10 * time.Second, false},
			{45 * time.Second, 40 * time.Second, true},
			{45*time.Second + 500*time.Millisecond, 40 * time.Second, false},
		}},
		{"default window is 30 s", "nodes: {a: {score: 1}}", time.Second, []step{
			{time.Second, 0, true},
			{29*time.Second + 500*time.Millisecond, 0, false},
			{30 * time.Second, 30 * time.Second, true},
			{61 * time.Second, 60 * time.Second, true},
		}},
		{"no scenario: 30 s", "", 0, []step{
			{0, 0, true},
			{29 * time.Second, 0, false},
			{95 * time.Second, 90 * time.Second, true},
		}},
		// 7 s does not divide the time from year 1 to 1970: boundaries are
		// multiples in Unix time, not time.Time.Truncate's.
		{"window_seconds 7", "window_seconds: 7\nnodes: {a: {score: 1}}", 0, []step{
			{0, 0, true},
			{6 * time.Second, 0, false},
			{7 * time.Second, 7 * time.Second, true},
			{22 * time.Second, 21 * time.Second, true},
		}},
		{"loaded mid-window, asked in the next", "window_seconds: 10\nnodes: {a: {score: 1}}", 8 * time.Second, []step{
			{12 * time.Second, 10 * time.Second, true},
		}},
		{"a clock stepping back keeps the stamp", "window_seconds: 10\nnodes: {a: {score: 1}}", 0, []step{
			{25 * time.Second, 20 * time.Second, true},
			{15 * time.Second, 20 * time.Second, false},
			{30 * time.Second, 30 * time.Second, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: windowBase.Add(tt.loadAt)}
			s := New()
			s.now = clock.Now
			if tt.scenario == "" {
				s.SetScenario(nil)
			} else {
				s.SetScenario(mustScenario(t, tt.scenario))
			}
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			var etag string
			for i, st := range tt.steps {
				clock.Set(windowBase.Add(st.at))
				resp, body := get(t, srv, http.MethodGet, "/simulate", map[string]string{"If-None-Match": etag})
				gotNew := resp.Header.Get("ETag") != etag
				switch {
				case gotNew != st.wantNew:
					t.Errorf("step %d at +%v: ETag %s after %s, want a new one: %v", i+1, st.at, resp.Header.Get("ETag"), etag, st.wantNew)
				case st.wantNew && resp.StatusCode != 200, !st.wantNew && resp.StatusCode != http.StatusNotModified:
					t.Errorf("step %d at +%v: status %d", i+1, st.at, resp.StatusCode)
				}
				etag = resp.Header.Get("ETag")
				if resp.StatusCode != 200 {
					continue
				}
				var got api.SimulationResponse
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatal(err)
				}
				if want := windowBase.Add(st.wantStamp); !got.Timestamp.Equal(want) {
					t.Errorf("step %d at +%v: timestamp %v, want %v", i+1, st.at, got.Timestamp, want)
				}
			}
		})
	}
}

// TestDelayedAnswerStampedWhenAnswered: a delayed answer carries the window
// it is answered in, not the one its request arrived in.
func TestDelayedAnswerStampedWhenAnswered(t *testing.T) {
	clock := &fakeClock{t: windowBase.Add(5 * time.Second)}
	s := New()
	s.now = clock.Now
	s.SetScenario(mustScenario(t, "window_seconds: 10\nnodes: {a: {score: 1}}\nfault: {delay_ms: 500}"))
	entered := make(chan struct{})
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer s.Close()
	type answer struct {
		status int
		body   string
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL + "/simulate")
		if err != nil {
			t.Error(err)
			answered <- answer{}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, string(body)}
	}()
	waitFor(t, entered, "the request")
	clock.Set(windowBase.Add(12 * time.Second)) // within the 500 ms delay
	a := <-answered
	var got api.SimulationResponse
	if err := json.Unmarshal([]byte(a.body), &got); err != nil {
		t.Fatalf("%d %s: %v", a.status, a.body, err)
	}
	if want := windowBase.Add(10 * time.Second); !got.Timestamp.Equal(want) {
		t.Errorf("timestamp %v, want %v", got.Timestamp, want)
	}
}

// TestConcurrentRequestsAcrossWindows runs requests while the clock crosses
// window boundaries: each answer's ETag is the one of its body, and each
// timestamp is a window boundary.
func TestConcurrentRequestsAcrossWindows(t *testing.T) {
	clock := &fakeClock{t: windowBase}
	s := New()
	s.now = clock.Now
	s.SetScenario(mustScenario(t, "window_seconds: 1\nnodes: {a: {score: 1}}"))
	h := s.Handler()
	var wg sync.WaitGroup
	bodies := make(chan [2]string, 800)
	for range 8 {
		wg.Go(func() {
			for range 100 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/simulate", nil))
				bodies <- [2]string{rec.Header().Get("ETag"), rec.Body.String()}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			clock.Set(windowBase.Add(time.Duration(i) * 300 * time.Millisecond))
			if i == 25 {
				s.SetScenario(mustScenario(t, "window_seconds: 1\nnodes: {a: {score: 2}}"))
			}
		}
	})
	wg.Wait()
	close(bodies)
	byETag := map[string]string{}
	for eb := range bodies {
		etag, body := eb[0], eb[1]
		if prev, ok := byETag[etag]; ok && prev != body {
			t.Fatalf("ETag %s for two bodies:\n%s\n%s", etag, prev, body)
		}
		byETag[etag] = body
		var got api.SimulationResponse
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Timestamp.Nanosecond() != 0 || got.Timestamp.Before(windowBase) || got.Timestamp.After(windowBase.Add(15*time.Second)) {
			t.Errorf("timestamp %v is not a boundary the clock reached", got.Timestamp)
		}
	}
}
