package simclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// recorder counts attempts by result, as the plugin's metrics do.
type recorder struct {
	mu     sync.Mutex
	counts map[string]int
}

func (r *recorder) Attempt(result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[result]++
}

func (r *recorder) count(result string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[result]
}

// testOptions are a client's options for url, changed by mutate; attempts
// (1 + retries) and timeout are Fetch's.
type testOptions struct {
	Options
	attempts int
	timeout  time.Duration
}

func newTestOptions(url string, mutate func(*testOptions)) testOptions {
	o := testOptions{Options: Options{URL: url + "/simulate", ShownURL: url + "/simulate", Timeout: time.Second, RetryDelay: 10 * time.Millisecond, MaxBodyBytes: 1 << 20}, attempts: 3, timeout: time.Second}
	if mutate != nil {
		mutate(&o)
	}
	return o
}

func testClient(url string, mutate func(*testOptions)) *Client {
	return New(newTestOptions(url, mutate).Options, &recorder{})
}

func TestFetchRetries(t *testing.T) {
	tests := []struct {
		name         string
		respond      func(i int32, w http.ResponseWriter, r *http.Request)
		mutate       func(*testOptions)
		wantAttempts int32
		wantResult   string
		wantErr      string
	}{
		{
			name:         "first attempt succeeds",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(simtest.GoodBody)) },
			wantAttempts: 1, wantResult: ResultSuccess,
		},
		{
			name: "5xx twice then success",
			respond: func(i int32, w http.ResponseWriter, _ *http.Request) {
				if i < 3 {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
				_, _ = w.Write([]byte(simtest.GoodBody))
			},
			wantAttempts: 3, wantResult: ResultSuccess,
		},
		{
			name: "5xx every time: 1 attempt + 2 retries",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "boom", http.StatusInternalServerError)
			},
			wantAttempts: 3, wantResult: ResultHTTPError, wantErr: "500",
		},
		{
			name:         "4xx is a failure too",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
			wantAttempts: 3, wantResult: ResultHTTPError, wantErr: "404",
		},
		{
			name:         "not JSON",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>oops</html>")) },
			wantAttempts: 3, wantResult: ResultBadBody, wantErr: "decoding",
		},
		{
			name:         "missing results",
			respond:      func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"source":"x"}`)) },
			wantAttempts: 3, wantResult: ResultBadBody, wantErr: "no results",
		},
		{
			name: "oversized body with content length",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(`{"results":{"n1":{"score":1}},"pad":"` + strings.Repeat("x", 4096) + `"}`))
			},
			mutate:       func(o *testOptions) { o.MaxBodyBytes = 1024 },
			wantAttempts: 3, wantResult: ResultTooLarge, wantErr: "1024-byte limit",
		},
		{
			name: "oversized body streamed without content length",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				for range 8 {
					_, _ = w.Write([]byte(strings.Repeat(" ", 512)))
					w.(http.Flusher).Flush()
				}
			},
			mutate:       func(o *testOptions) { o.MaxBodyBytes = 1024 },
			wantAttempts: 3, wantResult: ResultTooLarge, wantErr: "limit",
		},
		{
			name: "each attempt times out",
			respond: func(_ int32, w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			mutate:       func(o *testOptions) { o.timeout = 50 * time.Millisecond },
			wantAttempts: 3, wantResult: ResultTimeout, wantErr: "deadline",
		},
		{
			name: "no retries configured",
			respond: func(_ int32, w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "boom", http.StatusBadGateway)
			},
			mutate:       func(o *testOptions) { o.attempts = 1 },
			wantAttempts: 1, wantResult: ResultHTTPError, wantErr: "502",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, count := simtest.CountingServer(t, tt.respond)
			o := newTestOptions(srv.URL, tt.mutate)
			sim, out, err := New(o.Options, &recorder{}).Fetch(context.Background(), o.attempts, o.timeout)
			made, result := out.Attempts, out.Result
			if got := count.Load(); got != tt.wantAttempts || int32(made) != tt.wantAttempts {
				t.Errorf("server saw %d attempts, fetch reported %d, want %d", got, made, tt.wantAttempts)
			}
			if result != tt.wantResult {
				t.Errorf("result = %q, want %q", result, tt.wantResult)
			}
			if tt.wantErr == "" {
				if err != nil || sim.Scores["n1"] != 900 {
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
	srv, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		times = append(times, time.Now())
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	c := testClient(srv.URL, func(o *testOptions) { o.RetryDelay = 100 * time.Millisecond })
	_, _, _ = c.Fetch(context.Background(), 3, time.Second)
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
	srv, count := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	c := testClient(srv.URL, func(o *testOptions) { o.RetryDelay = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, out, err := c.Fetch(ctx, 3, time.Second)
	made := out.Attempts
	if err == nil || made != 1 || count.Load() != 1 {
		t.Errorf("made=%d served=%d err=%v: want one attempt and an error", made, count.Load(), err)
	}
	// The caller stopped waiting: that is no timeout of the simulator's.
	if out.Result != ResultCanceled {
		t.Errorf("result %q, want %q", out.Result, ResultCanceled)
	}
}

// An attempt cut short by its caller is counted as canceled, not as a
// connection error or a timeout.
func TestFetchCancelledInAnAttempt(t *testing.T) {
	srv, _ := simtest.CountingServer(t, func(_ int32, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, out, err := New(newTestOptions(srv.URL, nil).Options, rec).Fetch(ctx, 3, 5*time.Second)
	if err == nil || out.Attempts != 1 || out.Result != ResultCanceled || rec.count(ResultCanceled) != 1 {
		t.Errorf("outcome %+v, err %v, %d canceled attempts recorded; want 1 attempt, canceled", out, err, rec.count(ResultCanceled))
	}
}

func TestFetchConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rec := &recorder{}
	_, out, err := New(newTestOptions(url, nil).Options, rec).Fetch(context.Background(), 3, time.Second)
	made, result := out.Attempts, out.Result
	if err == nil || made != 3 || result != ResultConnError {
		t.Fatalf("made=%d result=%q err=%v", made, result, err)
	}
	if got := rec.count(ResultConnError); got != 3 {
		t.Errorf("%d connection_error attempts recorded, want 3", got)
	}
}

func TestFetchSendsAcceptHeaderAndGET(t *testing.T) {
	srv, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/simulate" || r.Header.Get("Accept") != "application/json" {
			http.Error(w, r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(simtest.GoodBody))
	})
	if _, _, err := testClient(srv.URL, nil).Fetch(context.Background(), 1, time.Second); err != nil {
		t.Fatal(err)
	}
}
