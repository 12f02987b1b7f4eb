package netbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// services are the workload's two servers, each new for one test: the
// netbench server and an in-process Redis.
func services(t *testing.T) map[string]func() Service {
	t.Helper()
	srv := httptest.NewServer(Handler())
	t.Cleanup(srv.Close)
	mr := miniredis.RunT(t)
	return map[string]func() Service{
		"http":  func() Service { return NewHTTP(srv.URL) },
		"redis": func() Service { return NewRedis(mr.Addr()) },
	}
}

func TestClientAgainstServer(t *testing.T) {
	for name, newService := range services(t) {
		t.Run(name, func(t *testing.T) {
			svc := newService()
			defer svc.Close()
			c := Client{Service: svc, ObjectBytes: 100 << 10, ObjectsPerSecond: 20,
				PingInterval: 20 * time.Millisecond, PingTimeout: time.Second, Duration: time.Second}
			if err := c.Ready(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := c.Run(context.Background(), "n1")
			// 20 objects a second for a second, paced: about 20, never many more.
			if r.Objects < 10 || r.Objects > 22 || r.Bytes != int64(r.Objects)*100<<10 {
				t.Errorf("%d objects, %d bytes; want about 20 of 100 KiB", r.Objects, r.Bytes)
			}
			if len(r.PingMs) < 20 || r.PingFailed != 0 || r.Node != "n1" {
				t.Errorf("%d pings, %d failed, node %q; want about 50, none, n1", len(r.PingMs), r.PingFailed, r.Node)
			}
		})
	}
}

// TestRedisObjectMissing checks that a fetch of an object nobody stored
// fails, so a client that skipped Prepare measures no throughput.
func TestRedisObjectMissing(t *testing.T) {
	mr := miniredis.RunT(t)
	svc := NewRedis(mr.Addr())
	defer svc.Close()
	if err := svc.Fetch(context.Background(), 10); err == nil || !strings.Contains(err.Error(), "not prepared") {
		t.Errorf("fetching an object never stored: %v, want not prepared", err)
	}
	if err := svc.Prepare(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if err := svc.Fetch(context.Background(), 10); err != nil {
		t.Errorf("fetching a stored object: %v", err)
	}
	// Someone else's value under the key is not the object.
	mr.Set(objectKey(20), "short")
	if err := svc.Fetch(context.Background(), 20); err == nil {
		t.Error("a 5-byte value passed for a 20-byte object")
	}
}

// TestPingTimeout checks that a small call a server does not answer in
// time counts as failed, not as a long latency.
func TestPingTimeout(t *testing.T) {
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			<-r.Context().Done()
		}
	}))
	defer stuck.Close()
	c := Client{Service: NewHTTP(stuck.URL), ObjectBytes: 10, ObjectsPerSecond: 10,
		PingInterval: 50 * time.Millisecond, PingTimeout: 100 * time.Millisecond, Duration: 700 * time.Millisecond}
	defer c.Service.Close()
	r := c.Run(context.Background(), "n1")
	if r.PingFailed < 2 || len(r.PingMs) != 0 || r.PingLimit != 100 {
		t.Errorf("%d failed, %d answered, limit %g ms; want several failed at 100 ms, none answered", r.PingFailed, len(r.PingMs), r.PingLimit)
	}
}

func TestObjectBounds(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for q, want := range map[string]int{"bytes=10": 200, "bytes=-1": 400, "bytes=99999999999": 400, "": 400} {
		resp, err := http.Get(srv.URL + "/object?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/object?%s: %d, want %d", q, resp.StatusCode, want)
		}
	}
}

// TestBarrier checks, on both servers, that the clients at a barrier start
// only once all of them are there, together, and that another barrier's
// clients count for nothing.
func TestBarrier(t *testing.T) {
	for name, newService := range services(t) {
		t.Run(name, func(t *testing.T) {
			const size = 3
			await := func(ctx context.Context, barrier string) error {
				svc := newService()
				defer svc.Close()
				return Client{Service: svc, Barrier: barrier, BarrierSize: size}.Ready(ctx)
			}
			released := make(chan error, size)
			for range size - 1 {
				go func() { released <- await(context.Background(), "run-1") }()
			}
			select {
			case err := <-released:
				t.Fatalf("a client passed the barrier with %d of %d there: %v", size-1, size, err)
			case <-time.After(200 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			if err := await(ctx, "run-2"); err == nil {
				t.Error("a client passed barrier run-2 alone")
			}
			cancel()
			if err := await(context.Background(), "run-1"); err != nil {
				t.Fatalf("the last client: %v", err)
			}
			for range size - 1 {
				select {
				case err := <-released:
					if err != nil {
						t.Errorf("a waiting client: %v", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the waiting clients were not released when the last came")
				}
			}
		})
	}
}

// TestBarrierBounds checks that the netbench server refuses a bad barrier.
func TestBarrierBounds(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for q, want := range map[string]int{"name=a&size=0": 400, "size=2": 400, "name=a&size=1001": 400, "name=a&size=1": 200} {
		resp, err := http.Get(srv.URL + "/barrier?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/barrier?%s: %d, want %d", q, resp.StatusCode, want)
		}
	}
}

// instantService answers every call at once.
type instantService struct{}

func (instantService) Prepare(context.Context, int) error       { return nil }
func (instantService) Await(context.Context, string, int) error { return nil }
func (instantService) Fetch(context.Context, int) error         { return nil }
func (instantService) Ping(context.Context) error               { return nil }
func (instantService) Close() error                             { return nil }

// stallingService holds the small calls that come in the stall window
// that opens at its first call after from, and answers the rest at once.
type stallingService struct {
	instantService
	started     time.Time
	from, stall time.Duration
	mu          sync.Mutex
	opened      time.Time
}

func (s *stallingService) Ping(ctx context.Context) error {
	s.mu.Lock()
	now := time.Now()
	if s.opened.IsZero() && now.Sub(s.started) >= s.from {
		s.opened = now
	}
	opened := s.opened
	s.mu.Unlock()
	if opened.IsZero() || now.After(opened.Add(s.stall)) {
		return nil
	}
	return sleep(ctx, time.Until(opened.Add(s.stall)))
}

// slowEveryService answers every every-th small call after slow, the rest
// at once.
type slowEveryService struct {
	instantService
	every int32
	slow  time.Duration
	calls atomic.Int32
}

func (s *slowEveryService) Ping(ctx context.Context) error {
	if s.calls.Add(1)%s.every != 0 {
		return nil
	}
	return sleep(ctx, s.slow)
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// slowCalls counts r's small calls that took ms or more.
func slowCalls(r Result, ms float64) int {
	n := 0
	for _, took := range r.PingMs {
		if took >= ms {
			n++
		}
	}
	return n
}

// TestPingStallCountsForEveryCallDue checks that a stall counts in the
// latency of every small call due while it lasted, not once: a 300 ms
// stall with a call due every 20 ms holds up about 15 calls, 11 of them by
// 100 ms or more.
func TestPingStallCountsForEveryCallDue(t *testing.T) {
	c := Client{Service: &stallingService{started: time.Now(), from: 200 * time.Millisecond, stall: 300 * time.Millisecond},
		ObjectBytes: 10, ObjectsPerSecond: 10, PingInterval: 20 * time.Millisecond, PingTimeout: 5 * time.Second, Duration: time.Second}
	r := c.Run(context.Background(), "n1")
	if slow := slowCalls(r, 100); slow < 8 || slow > 14 || r.PingFailed != 0 {
		t.Errorf("%d of %d calls at 100 ms or more, %d failed; want about 11 held up by the stall, none failed: %v",
			slow, len(r.PingMs), r.PingFailed, r.PingMs)
	}
	// Every call due in the run is counted: 1 s / 20 ms, less the one
	// due at its end.
	if n := len(r.PingMs); n != 49 {
		t.Errorf("%d calls counted, want 49", n)
	}
}

// TestPingSlowCallHoldsUpNoOther checks that the small calls do not wait
// for each other: with every tenth call answered after 200 ms, a tenth of
// them is slow, not the calls due behind each.
func TestPingSlowCallHoldsUpNoOther(t *testing.T) {
	c := Client{Service: &slowEveryService{every: 10, slow: 200 * time.Millisecond},
		ObjectBytes: 10, ObjectsPerSecond: 10, PingInterval: 20 * time.Millisecond, PingTimeout: 5 * time.Second, Duration: time.Second}
	r := c.Run(context.Background(), "n1")
	if slow := slowCalls(r, 100); slow < 3 || slow > 6 || r.PingFailed != 0 {
		t.Errorf("%d of %d calls at 100 ms or more, %d failed; want the 4 or 5 answered slowly alone: %v",
			slow, len(r.PingMs), r.PingFailed, r.PingMs)
	}
}
