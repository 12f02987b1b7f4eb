package customscore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/component-base/metrics/testutil"
)

func TestMain(m *testing.M) {
	// Unregistered component-base metrics record nothing.
	registerMetrics()
	os.Exit(m.Run())
}

const goodBody = `{"results":{"n1":{"score":0.9},"n2":{"score":0.1}}}`

// countingServer answers the i-th request (from 1) with respond(i).
func countingServer(t *testing.T, respond func(i int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond(n.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func testConfig(url string, mutate func(*config)) config {
	cfg := config{simulateURL: url + "/simulate", timeout: time.Second, retries: 2, retryDelay: 10 * time.Millisecond, maxBodyBytes: 1 << 20}
	if mutate != nil {
		mutate(&cfg)
	}
	return cfg
}

// testProfile is the profile label of the series tests record: a plugin
// made without a framework handle has no profile.
const testProfile = ""

func testClient(url string, mutate func(*config)) *simulateClient {
	return newSimulateClient(testConfig(url, mutate), newProfileMetrics(testProfile))
}

func TestFetchRetries(t *testing.T) {
	tests := []struct {
		name         string
		respond      func(i int32, w http.ResponseWriter, r *http.Request)
		mutate       func(*config)
		wantAttempts int32
		wantResult   string
		wantErr      string
	}{
		{
			name:         "first attempt succeeds",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(goodBody)) },
			wantAttempts: 1, wantResult: resultSuccess,
		},
		{
			name: "5xx twice then success",
			respond: func(i int32, w http.ResponseWriter, _ *http.Request) {
				if i < 3 {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
				_, _ = w.Write([]byte(goodBody))
			},
			wantAttempts: 3, wantResult: resultSuccess,
		},
		{
			name: "5xx every time: 1 attempt + 2 retries",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "boom", http.StatusInternalServerError)
			},
			wantAttempts: 3, wantResult: resultHTTPError, wantErr: "500",
		},
		{
			name:         "4xx is a failure too",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
			wantAttempts: 3, wantResult: resultHTTPError, wantErr: "404",
		},
		{
			name:         "not JSON",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>oops</html>")) },
			wantAttempts: 3, wantResult: resultBadBody, wantErr: "decoding",
		},
		{
			name:         "missing results",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"source":"x"}`)) },
			wantAttempts: 3, wantResult: resultBadBody, wantErr: "no results",
		},
		{
			name: "oversized body with content length",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(`{"results":{"n1":{"score":1}},"pad":"` + strings.Repeat("x", 4096) + `"}`))
			},
			mutate:       func(c *config) { c.maxBodyBytes = 1024 },
			wantAttempts: 3, wantResult: resultTooLarge, wantErr: "1024-byte limit",
		},
		{
			name: "oversized body streamed without content length",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				for range 8 {
					_, _ = w.Write([]byte(strings.Repeat(" ", 512)))
					w.(http.Flusher).Flush()
				}
			},
			mutate:       func(c *config) { c.maxBodyBytes = 1024 },
			wantAttempts: 3, wantResult: resultTooLarge, wantErr: "limit",
		},
		{
			name: "each attempt times out",
			respond: func(_ int32, w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			mutate:       func(c *config) { c.timeout = 50 * time.Millisecond },
			wantAttempts: 3, wantResult: resultTimeout, wantErr: "deadline",
		},
		{
			name: "no retries configured",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "boom", http.StatusBadGateway)
			},
			mutate:       func(c *config) { c.retries = 0 },
			wantAttempts: 1, wantResult: resultHTTPError, wantErr: "502",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, count := countingServer(t, tt.respond)
			cfg := testConfig(srv.URL, tt.mutate)
			sim, made, result, err := newSimulateClient(cfg, newProfileMetrics(testProfile)).fetch(context.Background(), cfg.retries+1, cfg.timeout)
			if got := count.Load(); got != tt.wantAttempts || int32(made) != tt.wantAttempts {
				t.Errorf("server saw %d attempts, fetch reported %d, want %d", got, made, tt.wantAttempts)
			}
			if result != tt.wantResult {
				t.Errorf("result = %q, want %q", result, tt.wantResult)
			}
			if tt.wantErr == "" {
				if err != nil || sim.scores["n1"] != 900 {
					t.Fatalf("sim=%+v err=%v", sim, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestFetchWaitsBetweenAttempts(t *testing.T) {
	var times []time.Time
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		times = append(times, time.Now())
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	c := testClient(srv.URL, func(c *config) { c.retryDelay = 100 * time.Millisecond })
	_, _, _, _ = c.fetch(context.Background(), 3, time.Second)
	if len(times) != 3 {
		t.Fatalf("%d attempts, want 3", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 100*time.Millisecond {
			t.Errorf("gap before attempt %d was %v, want at least the 100ms retry delay", i+1, gap)
		}
	}
}

func TestFetchStopsWhenCycleIsCancelled(t *testing.T) {
	srv, count := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	c := testClient(srv.URL, func(c *config) { c.retryDelay = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, made, _, err := c.fetch(ctx, 3, time.Second)
	if err == nil || made != 1 || count.Load() != 1 {
		t.Errorf("made=%d served=%d err=%v: want one attempt and an error", made, count.Load(), err)
	}
}

func TestFetchConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	before, _ := testutil.GetCounterMetricValue(AttemptsTotal.WithLabelValues(testProfile, resultConnError))
	_, made, result, err := testClient(url, nil).fetch(context.Background(), 3, time.Second)
	if err == nil || made != 3 || result != resultConnError {
		t.Fatalf("made=%d result=%q err=%v", made, result, err)
	}
	after, _ := testutil.GetCounterMetricValue(AttemptsTotal.WithLabelValues(testProfile, resultConnError))
	if after-before != 3 {
		t.Errorf("connection_error attempts grew by %v, want 3", after-before)
	}
}

func TestFetchSendsAcceptHeaderAndGET(t *testing.T) {
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/simulate" || r.Header.Get("Accept") != "application/json" {
			http.Error(w, r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(goodBody))
	})
	if _, _, _, err := testClient(srv.URL, nil).fetch(context.Background(), 1, time.Second); err != nil {
		t.Fatal(err)
	}
}
