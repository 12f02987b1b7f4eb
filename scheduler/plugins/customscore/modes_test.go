package customscore

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/customscore/breaker"
	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// switchableServer answers goodBody, 503 or never, as mode says.
type switchableServer struct {
	mode  atomic.Int32 // 0 good, 1 503, 2 hang
	calls atomic.Int32
}

const (
	serveGood int32 = iota
	serveError
	serveHang
)

func (s *switchableServer) start(t *testing.T) string {
	t.Helper()
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		switch s.mode.Load() {
		case serveError:
			http.Error(w, "down", http.StatusServiceUnavailable)
		case serveHang:
			<-r.Context().Done()
		default:
			_, _ = w.Write([]byte(goodBody))
		}
	})
	return srv.URL
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func gauge(t *testing.T) float64 {
	t.Helper()
	g, err := testutil.GetGaugeMetricValue(BreakerState.WithLabelValues(testProfile))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func fallbacks(t *testing.T, reason string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(FallbacksTotal.WithLabelValues(testProfile, reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A hanging simulator costs one cycle's retry budget, then cycles skip it
// while the prober waits for it off the cycle and closes the breaker.
func TestHangingSimulatorCostsOneCycle(t *testing.T) {
	s := &switchableServer{}
	s.mode.Store(serveHang)
	pl := newTestPlugin(t, s.start(t), "timeout: 50ms\nbreakerFailureThreshold: 3\nbreakerCooldown: 20ms")
	t.Cleanup(func() { _ = pl.Close() })
	nodes := nodeInfos("n1", "n2")
	failed, skipped := fallbacks(t, placement.FallbackSimulatorFailed), fallbacks(t, placement.FallbackBreakerOpen)

	// The first cycle waits for its 3 attempts to time out; the breaker
	// opens at once, under its threshold of 3.
	scoreCycle(t, pl, nodes)
	if g := gauge(t); g == float64(breaker.Closed) {
		t.Fatal("breaker still closed after a timed-out cycle")
	}
	for range 5 {
		if raw, _ := scoreCycle(t, pl, nodes); raw["n1"] != 0 {
			t.Fatalf("open breaker scored from the simulator: %v", raw)
		}
	}
	if d := fallbacks(t, placement.FallbackSimulatorFailed) - failed; d != 1 {
		t.Errorf("simulator_failed grew by %v, want 1: only the first cycle may wait", d)
	}
	if d := fallbacks(t, placement.FallbackBreakerOpen) - skipped; d != 5 {
		t.Errorf("breaker_open grew by %v, want 5", d)
	}

	// The prober, not a cycle, sees the simulator answer again.
	before := s.calls.Load()
	eventually(t, "the prober keeps asking", func() bool { return s.calls.Load() > before+2 })
	s.mode.Store(serveGood)
	eventually(t, "the breaker closes", func() bool { return gauge(t) == float64(breaker.Closed) })
	if raw, _ := scoreCycle(t, pl, nodes); raw["n1"] != 900 {
		t.Errorf("after recovery raw scores %v, want n1 900", raw)
	}
}

// Fast failures open the breaker only after the threshold. The prober asks
// as soon as the breaker opens, but the simulator keeps failing, so the
// breaker stays open.
func TestFastFailuresOpenAtThreshold(t *testing.T) {
	s := &switchableServer{}
	s.mode.Store(serveError)
	pl := newTestPlugin(t, s.start(t), "retries: 0\nbreakerFailureThreshold: 2")
	t.Cleanup(func() { _ = pl.Close() })
	nodes := nodeInfos("n1", "n2")
	scoreCycle(t, pl, nodes)
	if g := gauge(t); g != float64(breaker.Closed) {
		t.Fatalf("breaker_state %v after 1 fast failure, want closed", g)
	}
	scoreCycle(t, pl, nodes)
	if g := gauge(t); g == float64(breaker.Closed) {
		t.Fatal("breaker still closed after 2 fast failures")
	}
	eventually(t, "the prober asks", func() bool { return s.calls.Load() > 2 })
	if g := gauge(t); g == float64(breaker.Closed) {
		t.Fatal("a failed probe closed the breaker")
	}
}

// Answers slower than breakerLatencyBudget are used, but count against the
// breaker: in one process every cycle of every profile waits for them. The
// breaker opens at the threshold, no slow probe closes it, and the first
// probe within budget does. (Answers far over the budget open it at once:
// TestFarOverBudgetOpensTheBreakerAtOnce; these stay under twice it.)
func TestSlowAnswersOpenTheBreaker(t *testing.T) {
	var delay atomic.Int64
	delay.Store(int64(250 * time.Millisecond))
	srv, calls := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(time.Duration(delay.Load()))
		_, _ = w.Write([]byte(goodBody))
	})
	pl := newTestPlugin(t, srv.URL, "retries: 0\nbreakerFailureThreshold: 3\nbreakerLatencyBudget: 200ms")
	nodes := nodeInfos("n1", "n2")
	for i := range 3 {
		if g := gauge(t); g != float64(breaker.Closed) {
			t.Fatalf("breaker open after %d slow cycles, want it closed until 3", i)
		}
		if raw, _ := scoreCycle(t, pl, nodes); raw["n1"] != 900 {
			t.Fatalf("slow cycle %d scored n1 %d, want 900: a slow answer is still used", i+1, raw["n1"])
		}
	}
	if g := gauge(t); g != float64(breaker.Open) {
		t.Fatalf("breaker state %v after 3 slow cycles, want open", g)
	}
	open := fallbacks(t, placement.FallbackBreakerOpen)
	if raw, _ := scoreCycle(t, pl, nodes); raw["n1"] != 0 {
		t.Error("with the breaker open the cycle still scored")
	}
	if fallbacks(t, placement.FallbackBreakerOpen) <= open {
		t.Error("breaker_open fallbacks did not grow")
	}
	// Slow probes answer but leave it open.
	asked := calls.Load()
	eventually(t, "the prober asks twice", func() bool { return calls.Load() >= asked+2 })
	if g := gauge(t); g != float64(breaker.Open) {
		t.Fatal("a probe slower than the budget closed the breaker")
	}
	delay.Store(0)
	eventually(t, "a probe within budget closes the breaker", func() bool { return gauge(t) == float64(breaker.Closed) })
}

// Background mode's cycles never wait for the simulator: they rank with the
// newest simulation, skip scoring once it is older than maxSimulationAge,
// and rank again as soon as the simulator answers, however long the
// requests stuck on its hang may still wait.
func TestBackgroundModeNeverWaits(t *testing.T) {
	// The simulator answers body, or holds every request while hang is set.
	var body atomic.Value
	var hang atomic.Bool
	var held atomic.Int32
	body.Store(goodBody)
	srv, calls := countingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			held.Add(1)
			defer held.Add(-1)
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(body.Load().(string)))
	})
	nodes := nodeInfos("n1", "n2")
	ranksN1 := func(pl *CustomScore, want int64) func() bool {
		return func() bool {
			raw, _ := scoreCycle(t, pl, nodes)
			return raw["n1"] == want
		}
	}

	pl := newTestPlugin(t, srv.URL, "timeout: 100ms\nrefreshMode: Background\nrefreshInterval: 10ms\nmaxSimulationAge: 300ms")
	eventually(t, "the first simulation", ranksN1(pl, 900))
	before := calls.Load()
	scoreCycle(t, pl, nodes)
	scoreCycle(t, pl, nodes)
	eventually(t, "the loop refreshes on its own", func() bool { return calls.Load() > before+2 })

	// The simulator hangs: cycles go on with the last simulation, never
	// asking; once it is older than maxSimulationAge scoring is skipped.
	hang.Store(true)
	stale := fallbacks(t, placement.FallbackStale)
	eventually(t, "the simulation goes stale", ranksN1(pl, 0))
	if fallbacks(t, placement.FallbackStale) <= stale {
		t.Error("stale fallbacks did not grow")
	}
	hang.Store(false)
	eventually(t, "ranking resumes", ranksN1(pl, 900))
	_ = pl.Close()

	// Requests that wait up to 10s are stuck on the hang when the simulator
	// comes back with a new answer: cycles rank with it at once, well
	// within that timeout. maxSimulationAge is long enough for the hang.
	pl = newTestPlugin(t, srv.URL, "timeout: 10s\nrefreshMode: Background\nrefreshInterval: 10ms\nmaxSimulationAge: 30s")
	eventually(t, "the first simulation", ranksN1(pl, 900))
	hang.Store(true)
	eventually(t, "a request stuck on the hang", func() bool { return held.Load() > 0 })
	for range 3 {
		start := time.Now()
		if !ranksN1(pl, 900)() {
			t.Fatal("during the hang, cycles do not rank with the last simulation")
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a cycle during the hang took %s", d)
		}
	}
	body.Store(`{"results":{"n1":{"score":0.5},"n2":{"score":0.1}}}`)
	hang.Store(false)
	back := time.Now()
	const recovery = 2 * time.Second
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, recovery, true,
		func(context.Context) (bool, error) { return ranksN1(pl, 500)(), nil })
	if err != nil {
		t.Fatalf("cycles did not rank with the new answer within %s of the simulator's return, with requests stuck for up to 10s: %v", recovery, err)
	}
	t.Logf("ranking resumed %s after the simulator answered again", time.Since(back).Round(time.Millisecond))
}

func TestBackgroundKeepsTheNewestAnswer(t *testing.T) {
	now := time.Unix(1000, 0)
	r := &background{maxAge: time.Second, now: func() time.Time { return now }}
	if sim, age := r.newest(); sim != nil || age != -1 {
		t.Fatalf("newest() before any answer = %v, %v", sim, age)
	}
	older, newer := &network.Simulation{}, &network.Simulation{}
	r.take(simclient.Result{Seq: 2, Sim: newer})
	r.take(simclient.Result{Seq: 1, Sim: older}) // late answer to an earlier request
	r.take(simclient.Result{Seq: 3, Err: context.DeadlineExceeded})
	now = now.Add(time.Second)
	if sim, age := r.newest(); sim != newer || age != time.Second {
		t.Errorf("newest() = %p, %v; want the answer to request 2 (%p), 1s", sim, age, newer)
	}
	now = now.Add(time.Millisecond)
	if sim, age := r.newest(); sim != nil || age != time.Second+time.Millisecond {
		t.Errorf("newest() past maxAge = %p, %v; want none, 1.001s", sim, age)
	}
}

// Close returns well within the request timeout, even with requests stuck
// on a hung simulator: the prober's (PerCycle, breaker open) or the
// refresh loop's (Background). It bounds Close as T2 bounds recovery.
func TestCloseStopsThePluginGoroutine(t *testing.T) {
	const timeout, bound = 9 * time.Second, 2 * time.Second
	for _, mode := range []string{"PerCycle", "Background"} {
		t.Run(mode, func(t *testing.T) {
			s := &switchableServer{}
			s.mode.Store(serveError)
			pl := newTestPlugin(t, s.start(t), "timeout: 9s\nretries: 0\nbreakerFailureThreshold: 1\nmaxSimulationAge: 20s\nrefreshMode: "+mode)
			if mode == "PerCycle" {
				scoreCycle(t, pl, nodeInfos("n1", "n2")) // fails fast: the breaker opens
			}
			s.mode.Store(serveHang)
			before := s.calls.Load()
			eventually(t, "a request stuck on the hang", func() bool { return s.calls.Load() > before })
			start := time.Now()
			done := make(chan struct{})
			go func() { _ = pl.Close(); close(done) }()
			select {
			case <-done:
				t.Logf("Close returned in %s", time.Since(start).Round(time.Millisecond))
			case <-time.After(bound):
				t.Fatalf("Close did not return within %s, with requests that may wait %s", bound, timeout)
			}
		})
	}
}

// A cycle whose context ends while it pauses between attempts says
// nothing about the simulator: the breaker stays closed, and the next
// cycle asks the simulator again.
func TestCancelledCycleLeavesTheBreakerClosed(t *testing.T) {
	s := &switchableServer{}
	s.mode.Store(serveError)
	pl := newTestPlugin(t, s.start(t), "retries: 1\nretryDelay: 1s\nbreakerFailureThreshold: 5")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel) // during the 1s pause after the first attempt
	pl.PreScore(ctx, framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodeInfos("n1", "n2"))
	if g := gauge(t); g != float64(breaker.Closed) {
		t.Fatalf("breaker_state %v after a cycle cancelled in its retry pause, want closed", g)
	}
	s.mode.Store(serveGood)
	if raw, _ := scoreCycle(t, pl, nodeInfos("n1", "n2")); raw["n1"] != 900 {
		t.Errorf("the next cycle scored n1 %d, want 900 from the simulator", raw["n1"])
	}
}

// Background mode ages a simulation by what it describes too: an answer
// that arrives fresh but whose own timestamp, plus its window, is older
// than maxSimulationAge is not used.
func TestBackgroundAgesByTheSimulatorsTimestamp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sampled time.Duration // before now
		window  int
		want    int64 // n1's raw score
	}{
		{"sampled an hour ago", time.Hour, 30, 0},
		{"sampled now", 0, 30, 900},
		{"stamped at the start of the current window", 25 * time.Second, 30, 900},
		{"no window given: 30s assumed", 25 * time.Second, 0, 900},
		{"stamped two windows ago", 61 * time.Second, 30, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stamp := time.Now().Add(-tc.sampled).UTC().Format(time.RFC3339)
			body := fmt.Sprintf(`{"results":{"n1":{"score":0.9},"n2":{"score":0.1}},"timestamp":%q,"window_seconds":%d}`, stamp, tc.window)
			srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) })
			pl := newTestPlugin(t, srv.URL, "timeout: 100ms\nrefreshMode: Background\nrefreshInterval: 10ms\nmaxSimulationAge: 2s")
			eventually(t, "an answer taken", func() bool {
				pl.source.(*background).mu.Lock()
				defer pl.source.(*background).mu.Unlock()
				return pl.source.(*background).latest != nil
			})
			stale := fallbacks(t, placement.FallbackStale)
			if raw, _ := scoreCycle(t, pl, nodeInfos("n1", "n2")); raw["n1"] != tc.want {
				t.Errorf("n1 scored %d, want %d", raw["n1"], tc.want)
			}
			if grew := fallbacks(t, placement.FallbackStale) > stale; grew != (tc.want == 0) {
				t.Errorf("stale fallbacks grew: %t, want %t", grew, tc.want == 0)
			}
		})
	}
}
