package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
		{http.MethodGet, "/nope", 404, `{"detail":"Not Found"}` + "\n", ""},
		{http.MethodGet, "/simulate/", 404, `{"detail":"Not Found"}` + "\n", ""},
		{http.MethodPost, "/simulate", 405, `{"detail":"Method Not Allowed"}` + "\n", "GET"},
		{http.MethodDelete, "/healthz", 405, `{"detail":"Method Not Allowed"}` + "\n", "GET"},
		{http.MethodPost, "/nope", 404, `{"detail":"Not Found"}` + "\n", ""},
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
