package schedulerpod

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestGetSimulate(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/ok/simulate", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"results":{"n1":{"score":0.9,"latency_ms":1.5,"bandwidth_mbps":null,"packet_loss":null}},"window_seconds":30,"source":"s1"}`))
	})
	mux.HandleFunc("/fault/simulate", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"detail":"injected"}`, http.StatusInternalServerError)
	})
	mux.HandleFunc("/hang/simulate", func(http.ResponseWriter, *http.Request) { <-release })
	mux.HandleFunc("/garbage/simulate", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("not json")) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	ctx := context.Background()

	status, resp, err := GetSimulate(ctx, srv.URL+"/ok", time.Second)
	if err != nil || status != http.StatusOK || resp == nil {
		t.Fatalf("ok: %d, %v, %v", status, resp, err)
	}
	if r := resp.Results["n1"]; resp.Source != "s1" || resp.WindowSeconds != 30 || r.Score != 0.9 ||
		r.LatencyMs == nil || *r.LatencyMs != 1.5 || r.BandwidthMbps != nil {
		t.Errorf("ok: decoded %+v", resp)
	}

	if status, resp, err := GetSimulate(ctx, srv.URL+"/fault", time.Second); err != nil || status != http.StatusInternalServerError || resp != nil {
		t.Errorf("fault: %d, %v, %v; want 500, nil, nil", status, resp, err)
	}

	start := time.Now()
	_, _, err = GetSimulate(ctx, srv.URL+"/hang", 200*time.Millisecond)
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("hang: error %v, want a net.Error timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("hang: returned after %s, want about the 200ms timeout", d)
	}

	if status, _, err := GetSimulate(ctx, srv.URL+"/garbage", time.Second); err == nil || status != http.StatusOK {
		t.Errorf("garbage: %d, %v; want 200 and a decoding error", status, err)
	}
}
