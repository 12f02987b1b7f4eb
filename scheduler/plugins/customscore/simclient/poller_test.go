package simclient

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// hangingServer holds every request until the client gives up, except
// those for which answer returns true, which get simtest.GoodBody. It tracks how
// many requests it holds.
type hangingServer struct {
	answer func(n int32) bool
	n      atomic.Int32

	mu         sync.Mutex
	held, peak int
	heldAtGood int
}

func (s *hangingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.n.Add(1)
	s.mu.Lock()
	if s.answer != nil && s.answer(n) {
		s.heldAtGood = s.held
		s.mu.Unlock()
		_, _ = w.Write([]byte(simtest.GoodBody))
		return
	}
	s.held++
	s.peak = max(s.peak, s.held)
	s.mu.Unlock()
	<-r.Context().Done()
	s.mu.Lock()
	s.held--
	s.mu.Unlock()
}

func (s *hangingServer) stats() (held, peak, heldAtGood int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.peak, s.heldAtGood
}

func startHanging(t *testing.T, s *hangingServer) string {
	t.Helper()
	srv, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) { s.ServeHTTP(w, r) })
	return srv.URL
}

// A request stuck on a hung simulator must not hold up the next one: the
// answer to a later request arrives while the first is still held.
func TestPollerOverlapsStuckRequests(t *testing.T) {
	s := &hangingServer{answer: func(n int32) bool { return n >= 3 }}
	url := startHanging(t, s)
	p := NewPoller(testClient(url, nil), time.Minute, 0, 20*time.Millisecond)
	var results []Result
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.Run(ctx, func(r Result) bool {
		results = append(results, r)
		return r.Err == nil
	}, nil)
	if len(results) != 1 || results[0].Err != nil {
		t.Fatalf("results %+v, want one good answer", results)
	}
	if results[0].Seq != 3 {
		t.Errorf("good answer from request %d, want 3", results[0].Seq)
	}
	if _, _, heldAtGood := s.stats(); heldAtGood != 2 {
		t.Errorf("%d requests held when the good one came, want 2: requests must overlap", heldAtGood)
	}
	// run cancels the requests still out when it returns; the server sees
	// each client go away.
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		held, _, _ := s.stats()
		return held == 0, nil
	})
	if err != nil {
		held, _, _ := s.stats()
		t.Errorf("%d requests still held after run returned", held)
	}
}

func TestPollerBoundsRequestsInFlight(t *testing.T) {
	s := &hangingServer{}
	url := startHanging(t, s)
	p := NewPoller(testClient(url, nil), time.Minute, 0, 10*time.Millisecond)
	if p.maxInFlight != 16 {
		t.Fatalf("maxInFlight = %d for a 1m timeout and 10ms pauses, want the cap 16", p.maxInFlight)
	}
	var peakSeen atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Stop once the poller has gone past its limit.
		for s.n.Load() < int32(p.maxInFlight)+5 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	p.Run(ctx, func(Result) bool { return false }, func(n int) {
		if int32(n) > peakSeen.Load() {
			peakSeen.Store(int32(n))
		}
	})
	// The oldest is abandoned to make room: the server may briefly see it
	// beside the new one.
	if _, peak, _ := s.stats(); peak > p.maxInFlight+1 {
		t.Errorf("peak held %d, want at most %d", peak, p.maxInFlight+1)
	}
	if int(peakSeen.Load()) != p.maxInFlight {
		t.Errorf("peak reported in flight %d, want %d", peakSeen.Load(), p.maxInFlight)
	}
	if n := s.n.Load(); n <= int32(p.maxInFlight) {
		t.Errorf("%d requests made: at the limit, new ones must replace the oldest", n)
	}
}

// The poller keeps asking through failures and stops at the first good
// answer. Requests start on a schedule, not when the last answer is
// handled, so a slow machine may make more requests than the failures
// needed: counts are checked as bounds.
func TestPollerRetriesAfterFailures(t *testing.T) {
	// The simulator fails until the poller has handled three failures.
	var failures atomic.Int32
	srv, calls := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		if failures.Load() < 3 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(simtest.GoodBody))
	})
	p := NewPoller(testClient(srv.URL, nil), time.Second, 0, 5*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var results []Result
	p.Run(ctx, func(r Result) bool {
		results = append(results, r)
		if r.Err != nil {
			failures.Add(1)
		}
		return r.Err == nil
	}, nil)
	if ctx.Err() != nil {
		t.Fatalf("run did not stop at a good answer: %d results, %d failures", len(results), failures.Load())
	}
	if last := results[len(results)-1]; last.Err != nil || last.Sim == nil {
		t.Errorf("last result handled: %+v, want the good answer", last)
	}
	if n := int(failures.Load()); n < 3 || n != len(results)-1 {
		t.Errorf("%d failures in %d results, want at least 3, all before the one good answer", n, len(results))
	}
	if n := calls.Load(); n < 4 {
		t.Errorf("%d calls, want at least 4: 3 failures, then the good answer", n)
	}
}

func TestPollerInFlightLimit(t *testing.T) {
	for _, tt := range []struct {
		timeout, okPause, maxPause time.Duration
		want                       int
	}{
		{5 * time.Second, 0, time.Second, 8},
		{5 * time.Second, time.Second, time.Second, 8},
		{5 * time.Second, 500 * time.Millisecond, time.Second, 13},
		{100 * time.Millisecond, time.Second, time.Second, 3},
		{time.Minute, 0, time.Millisecond, 16},
	} {
		if got := NewPoller(nil, tt.timeout, tt.okPause, tt.maxPause).maxInFlight; got != tt.want {
			t.Errorf("timeout %s, pauses %s/%s: maxInFlight %d, want %d", tt.timeout, tt.okPause, tt.maxPause, got, tt.want)
		}
	}
}
