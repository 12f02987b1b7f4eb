package customscore

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/customscore/breaker"
	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// source is where PreScore gets each cycle's simulation: asked in the
// cycle (perCycle, the specification's refresh mode) or kept by a loop off
// the cycle (background).
type source interface {
	// simulation returns the cycle's simulation, or nil and why not (a
	// placement.Fallback* reason), having logged it.
	simulation(ctx context.Context, pod *v1.Pod) (*network.Simulation, string)
	// held returns, without asking the simulator, the simulation the
	// source holds at now for the cycle's Filter plugins, which run before
	// PreScore; nil when it holds none young enough.
	held(now time.Time) *network.Simulation
	// run is the source's own goroutine until ctx ends: the prober of an
	// open breaker, or the refresh loop.
	run(ctx context.Context)
}

// newClient returns the client of {args.SimulatorURL}/simulate, whose new
// answers, asked by a cycle or by a loop, onNewAnswer hears when set.
func newClient(args *apiconfig.CustomScorePluginArgs, m *profileMetrics, onNewAnswer func(*network.Simulation)) *simclient.Client {
	base, _ := url.Parse(args.SimulatorURL) // validated
	simulate := base.JoinPath("simulate")
	return simclient.New(simclient.Options{
		URL: simulate.String(), ShownURL: simulate.Redacted(), Timeout: args.Timeout.Duration,
		RetryDelay: args.RetryDelay.Duration, MaxBodyBytes: args.MaxBodyBytes, OnNewAnswer: onNewAnswer,
	}, m)
}

// newSource returns the source args.RefreshMode names, asking through
// client. idle, when not 0, is how long a PerCycle simulator may go
// unasked while the status is published (a cycle asks only when more than
// one node is feasible); Background mode asks every refresh interval
// anyway.
func newSource(args *apiconfig.CustomScorePluginArgs, client *simclient.Client, m *profileMetrics, logger klog.Logger, idle time.Duration) source {
	if args.RefreshMode == apiconfig.RefreshBackground {
		interval := args.RefreshInterval.Duration
		return &background{
			poller: simclient.NewPoller(client, args.Timeout.Duration, interval, interval),
			maxAge: args.MaxSimulationAge.Duration,
			now:    time.Now,
		}
	}
	shown := client.ShownURL()
	cb := breaker.New(int(args.BreakerFailureThreshold), func(from, to breaker.State, failures int) {
		m.breakerState(to)
		switch {
		case to == breaker.Open && from == breaker.Closed:
			logger.Info("Simulator circuit breaker opened: scoring is skipped without calling the simulator, which is probed in the background",
				"url", shown, "failedCycles", failures, "maxProbePause", args.BreakerCooldown.Duration)
		case to == breaker.Closed:
			logger.Info("Simulator circuit breaker closed: simulator answers again", "url", shown)
		}
	})
	return &perCycle{
		client:        client,
		metrics:       m,
		attempts:      int(args.Retries) + 1,
		timeout:       args.Timeout.Duration,
		latencyBudget: args.BreakerLatencyBudget.Duration,
		cb:            cb,
		prober:        simclient.NewPoller(client, args.Timeout.Duration, 0, args.BreakerCooldown.Duration),
		idle:          idle,
		maxAge:        args.MaxSimulationAge.Duration,
	}
}

// farOverBudget is how many latency budgets a cycle's call may take before
// it opens the breaker at once, as a timeout does: in one process with
// other profiles, their pods queued behind the cycle would wait as long
// again for each further such cycle.
const farOverBudget = 2

// perCycle asks the simulator in every scheduling cycle, behind a circuit
// breaker whose prober asks off the cycle while it is open.
type perCycle struct {
	client        *simclient.Client
	metrics       *profileMetrics
	attempts      int
	timeout       time.Duration
	latencyBudget time.Duration
	cb            *breaker.Breaker
	prober        *simclient.Poller
	// idle, when not 0, is how long the simulator may go unasked: the
	// published status should say how it is now.
	idle time.Duration
	// maxAge bounds the age of the answer held gives.
	maxAge time.Duration
	// stamped is the last answer held read the end of (DescribedUntil
	// parses the body: once per answer, not per cycle).
	stamped atomic.Pointer[stampedAnswer]
}

type stampedAnswer struct {
	sim   *network.Simulation
	until time.Time
}

// held is the newest answer the simulator gave, whoever asked (a cycle,
// the keeper, the prober), when it is at most maxAge old: since it
// arrived, and since the end of what it describes, as Background mode ages
// its simulation. PreScore asks anew in every cycle; a Filter plugin that
// reads the network runs before it, and judges by this.
func (s *perCycle) held(now time.Time) *network.Simulation {
	seen := s.client.Observed()
	if seen.Newest == nil {
		return nil
	}
	st := s.stamped.Load()
	if st == nil || st.sim != seen.Newest {
		st = &stampedAnswer{sim: seen.Newest, until: network.DescribedUntil(seen.Newest.Body)}
		s.stamped.Store(st)
	}
	age := now.Sub(seen.LastSuccess)
	if !st.until.IsZero() {
		age = max(age, now.Sub(st.until))
	}
	if age > s.maxAge {
		return nil
	}
	return seen.Newest
}

func (s *perCycle) simulation(ctx context.Context, pod *v1.Pod) (*network.Simulation, string) {
	logger := klog.FromContext(ctx)
	if !s.cb.Allow() {
		logger.V(4).Info("Simulator skipped while the circuit breaker is open; scoring skipped", "pod", klog.KObj(pod))
		return nil, placement.FallbackBreakerOpen
	}
	start := time.Now()
	sim, out, err := s.client.Fetch(ctx, s.attempts, s.timeout)
	took := time.Since(start)
	s.metrics.call(out.Result, took)
	switch {
	case err != nil && out.Result == simclient.ResultCanceled:
		// The cycle ended, not the simulator: nothing for the breaker.
		logger.V(2).Info("Scheduling cycle ended before the simulator answered; scoring skipped", "pod", klog.KObj(pod), "attempts", out.Attempts, "err", err)
		return nil, placement.FallbackSimulatorFailed
	case err != nil:
		outcome := breaker.FailedFast
		if out.Result == simclient.ResultTimeout {
			outcome = breaker.TimedOut
		}
		s.cb.Record(outcome)
		logger.Info("Simulator unavailable; scoring skipped for this pod", "pod", klog.KObj(pod), "attempts", out.Attempts, "err", err)
		return nil, placement.FallbackSimulatorFailed
	case took > s.latencyBudget:
		// Used, but counted: every cycle of every profile waits for it, and
		// one far over the budget costs them as much as a timeout.
		outcome := breaker.Slow
		if took > farOverBudget*s.latencyBudget {
			outcome = breaker.FarOverBudget
		}
		s.cb.Record(outcome)
		logger.V(1).Info("Simulator answered slower than breakerLatencyBudget; counted against the breaker",
			"pod", klog.KObj(pod), "took", took, "budget", s.latencyBudget)
	default:
		s.cb.Record(breaker.Succeeded)
	}
	return sim, ""
}

// run is the prober: each time the breaker opens it polls the simulator,
// off the scheduling cycle, until one answer is good and within budget,
// and closes the breaker. Cycles never wait for a probe. While the breaker
// is closed it keeps an idle simulator's state fresh (keepFresh).
func (s *perCycle) run(ctx context.Context) {
	var fresh <-chan time.Time
	if s.idle > 0 {
		t := time.NewTicker(s.idle)
		defer t.Stop()
		fresh = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-fresh:
			s.keepFresh(ctx)
		case <-s.cb.Opened():
			s.probe(ctx)
		}
	}
}

// probe polls until an answer closes the breaker, or ctx ends.
func (s *perCycle) probe(ctx context.Context) {
	logger := klog.FromContext(ctx)
	start, probes := time.Now(), 0
	s.prober.Run(ctx, func(r simclient.Result) bool {
		probes++
		if r.Err != nil {
			logger.V(3).Info("Simulator probe failed", "err", r.Err)
			return false
		}
		if r.Took > s.latencyBudget {
			logger.V(3).Info("Simulator probe answered slower than breakerLatencyBudget; the breaker stays open",
				"took", r.Took, "budget", s.latencyBudget)
			return false
		}
		s.cb.ProbeSucceeded()
		logger.V(1).Info("Simulator probe answered", "probes", probes, "outage", time.Since(start).Round(time.Millisecond))
		return true
	}, nil)
}

func (s *perCycle) breakerState() string {
	if s.cb.Allow() {
		return status.BreakerClosed
	}
	return status.BreakerOpen
}

// keepFresh, called every idle, asks once unless someone asked within
// half of it: a cycle asks only when more than one node is feasible, and
// the published status (what kubectl kns3 shows, and what drift judges)
// should say how the simulator is now. Skipping only after a recent ask
// keeps the newest answer at most one and a half idles old whatever the
// phase of the publisher's ticks; skipping after any ask within idle would
// let it reach two, which is drift's limit, and leave every other
// publication stale for good. While the breaker is open its prober asks.
func (s *perCycle) keepFresh(ctx context.Context) {
	if !s.cb.Allow() {
		return
	}
	seen := s.client.Observed()
	if recent := s.idle / 2; time.Since(seen.LastSuccess) < recent || time.Since(seen.LastFailure) < recent {
		return
	}
	_, _, _ = s.client.Fetch(ctx, 1, s.timeout)
}

// background is Background mode's loop: it keeps the newest simulation,
// asking every refresh interval while the simulator answers (conditionally,
// so an unchanged answer costs a 304) and backing off up to the same
// interval while it does not. Cycles take the newest simulation and never
// wait.
type background struct {
	poller *simclient.Poller
	maxAge time.Duration
	now    func() time.Time

	// stamped is the last answer taken and until what it describes
	// (network.DescribedUntil), read once per answer; the loop's alone.
	stamped *network.Simulation
	until   time.Time

	mu sync.Mutex
	// latest is the newest good simulation, from the request started last
	// among those that answered; at is when that answer arrived, and
	// latestUntil the latest time it describes.
	latest      *network.Simulation
	latestSeq   uint64
	at          time.Time
	latestUntil time.Time
}

func (b *background) simulation(ctx context.Context, pod *v1.Pod) (*network.Simulation, string) {
	sim, age := b.newest()
	if sim == nil {
		klog.FromContext(ctx).V(2).Info("No simulation younger than maxSimulationAge; scoring skipped",
			"pod", klog.KObj(pod), "age", age, "noneYet", age < 0)
		return nil, placement.FallbackStale
	}
	return sim, ""
}

// held is the newest simulation, as a cycle would take it (newest), held
// in memory. Background mode ages it by its own clock, the one its loop
// stamps answers with, so now is not read.
func (b *background) held(time.Time) *network.Simulation {
	sim, _ := b.newest()
	return sim
}

func (b *background) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	failing := false
	b.poller.Run(ctx, func(res simclient.Result) bool {
		switch {
		case res.Err != nil && !failing:
			logger.Info("Simulator refresh failed; scheduling uses the last simulation until it is older than maxSimulationAge",
				"maxSimulationAge", b.maxAge, "err", res.Err)
		case res.Err == nil && failing:
			logger.Info("Simulator refresh answers again")
		}
		failing = res.Err != nil
		b.take(res)
		return false
	}, nil)
}

// take keeps a good answer unless a request started later has already
// answered: a late answer to an older request must not replace a newer one.
func (b *background) take(res simclient.Result) {
	if res.Err != nil {
		return
	}
	if res.Sim != b.stamped { // a 304 answers with the same one
		b.stamped, b.until = res.Sim, network.DescribedUntil(res.Sim.Body)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if res.Seq > b.latestSeq {
		b.latest, b.latestSeq, b.at, b.latestUntil = res.Sim, res.Seq, b.now(), b.until
	}
}

// newest returns the newest simulation if it is at most maxAge old, and its
// age either way (-1 when there is none yet). It never waits.
func (b *background) newest() (*network.Simulation, time.Duration) {
	sim, age := b.aged(b.now())
	if sim == nil {
		return nil, -1
	}
	if age > b.maxAge {
		return nil, age
	}
	return sim, age
}

// simulationAge is the newest simulation's age at now, for the metrics
// (answermetrics.go); false when there is none yet.
func (b *background) simulationAge(now time.Time) (time.Duration, bool) {
	sim, age := b.aged(now)
	return age, sim != nil
}

// aged returns the newest simulation and its age at now: since it arrived,
// or since the end of what it describes when that is longer ago.
func (b *background) aged(now time.Time) (*network.Simulation, time.Duration) {
	b.mu.Lock()
	sim, at, until := b.latest, b.at, b.latestUntil
	b.mu.Unlock()
	if sim == nil {
		return nil, 0
	}
	age := now.Sub(at)
	if !until.IsZero() {
		age = max(age, now.Sub(until))
	}
	return sim, age
}
