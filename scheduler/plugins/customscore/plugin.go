// Package customscore implements CustomScorePlugin, which ranks nodes by the
// network simulator's scores: PreScore fetches GET /simulate once per
// scheduling cycle (or, in Background mode, takes the newest simulation a
// background loop keeps), Score reads a node's score × 1000, NormalizeScore
// maps the scores linearly onto 0–100.
package customscore

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = "CustomScorePlugin"

// stateKey is where PreScore leaves the cycle's simulation for Score.
const stateKey fwk.StateKey = Name + "/simulation"

// maxLoggedNodes bounds the node names quoted in one log line.
const maxLoggedNodes = 10

// CustomScore is the CustomScorePlugin.
type CustomScore struct {
	metrics  *profileMetrics
	client   *simulateClient
	attempts int
	timeout  time.Duration
	// latencyBudget: a PerCycle call slower than this counts against the breaker.
	latencyBudget time.Duration
	// absolute keeps the simulator's scale in NormalizeScore instead of
	// stretching the cycle's scores onto 0-100.
	absolute bool
	// breaker and its prober serve PerCycle mode; background serves
	// Background mode. Exactly one of the two is set.
	breaker    *breaker
	background *backgroundRefresh
	// stop ends the plugin's goroutines; wg waits for them.
	stop context.CancelFunc
	wg   sync.WaitGroup
}

var (
	_ fwk.PreScorePlugin  = &CustomScore{}
	_ fwk.ScorePlugin     = &CustomScore{}
	_ fwk.ScoreExtensions = &CustomScore{}
	_ fwk.SignPlugin      = &CustomScore{}
	_ io.Closer           = &CustomScore{}
)

// New initializes the plugin from its CustomScorePluginArgs. Invalid args
// fail scheduler start-up with the field named. It starts its goroutines,
// ended by Close or by the end of ctx: the breaker's prober in PerCycle
// mode, the refresh loop in Background mode, and, in a pod that knows its
// namespace, the status publisher.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	cfg, err := newConfig(obj)
	if err != nil {
		return nil, err
	}
	profile := ""
	if h != nil {
		profile = h.ProfileName()
	}
	m := newProfileMetrics(profile)
	logger := klog.FromContext(ctx).WithValues("plugin", Name, "profile", profile)
	client := newSimulateClient(cfg, m)
	pl := &CustomScore{
		metrics:       m,
		client:        client,
		attempts:      cfg.retries + 1,
		timeout:       cfg.timeout,
		latencyBudget: cfg.latencyBudget,
		absolute:      cfg.normalization == apiconfig.NormalizationAbsolute,
	}
	ctx, pl.stop = context.WithCancel(klog.NewContext(ctx, logger))
	m.breakerState(breakerClosed)
	switch cfg.mode {
	case RefreshBackground:
		pl.background = &backgroundRefresh{
			poller:  newPoller(client, cfg.timeout, cfg.refreshInterval, cfg.refreshInterval),
			maxAge:  cfg.maxAge,
			now:     time.Now,
			metrics: m,
		}
		pl.wg.Go(func() { pl.background.run(ctx) })
	default:
		pl.breaker = newBreaker(cfg.breakerThreshold, func(from, to breakerState, failures int) {
			m.breakerState(to)
			switch {
			case to == breakerOpen && from == breakerClosed:
				logger.Info("Simulator circuit breaker opened: scoring is skipped without calling the simulator, which is probed in the background",
					"url", cfg.shownURL, "failedCycles", failures, "maxProbePause", cfg.breakerCooldown)
			case to == breakerClosed:
				logger.Info("Simulator circuit breaker closed: simulator answers again", "url", cfg.shownURL)
			}
		})
		prober := newPoller(client, cfg.timeout, 0, cfg.breakerCooldown)
		pl.wg.Go(func() { probeWhileOpen(ctx, pl.breaker, prober, cfg.latencyBudget) })
	}
	logger.V(1).Info("Plugin configured", "url", cfg.shownURL, "refreshMode", cfg.mode, "timeout", cfg.timeout,
		"retries", cfg.retries, "retryDelay", cfg.retryDelay, "maxBodyBytes", cfg.maxBodyBytes,
		"breakerFailureThreshold", cfg.breakerThreshold, "breakerCooldown", cfg.breakerCooldown,
		"breakerLatencyBudget", cfg.latencyBudget, "refreshInterval", cfg.refreshInterval, "maxSimulationAge", cfg.maxAge)
	if pub := newPublisher(h, profile, os.Getenv(status.NamespaceEnv), pl.refreshForStatus, pl.statusSource(cfg, profile)); pub != nil {
		pl.wg.Go(func() { pub.run(ctx) })
	} else {
		logger.V(1).Info("Not publishing the plugin's status: the scheduler does not know its pod's namespace",
			"env", status.NamespaceEnv)
	}
	return pl, nil
}

// Name returns the name of the plugin.
func (pl *CustomScore) Name() string { return Name }

// simulationState is the cycle's simulation. It is never written after
// PreScore, so Clone can share it.
type simulationState struct {
	scores map[string]int64
	// feasible names the nodes PreScore was given, for the placement
	// event (PlacementOf); fallback says why the cycle had no scores.
	feasible []string
	fallback string
}

func (s *simulationState) Clone() fwk.StateData { return s }

// PreScore gets this cycle's simulation. It never fails the pod: without a
// simulation, or when the simulation scores no candidate, it returns Skip,
// so Score and NormalizeScore do not run and the plugin adds the same (0)
// to every node, leaving the choice to the other plugins. In PerCycle mode
// it asks the simulator, unless the breaker is open; in Background mode it
// takes the newest simulation and never waits.
func (pl *CustomScore) PreScore(ctx context.Context, cycleState fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	logger := klog.FromContext(ctx)
	// The state is written fresh every cycle: nothing from an earlier cycle survives.
	state := &simulationState{feasible: make([]string, len(nodes))}
	for i, n := range nodes {
		state.feasible[i] = n.Node().Name
	}
	cycleState.Write(stateKey, state)

	var sim *simulation
	if pl.background != nil {
		var age time.Duration
		sim, age = pl.background.newest()
		if sim == nil {
			pl.metrics.fallback(fallbackStale)
			state.fallback = fallbackStale
			logger.V(2).Info("No simulation younger than maxSimulationAge; scoring skipped", "pod", klog.KObj(pod), "age", age, "noneYet", age < 0)
			return fwk.NewStatus(fwk.Skip)
		}
	} else {
		if !pl.breaker.allow() {
			pl.metrics.fallback(fallbackBreakerOpen)
			state.fallback = fallbackBreakerOpen
			logger.V(4).Info("Simulator skipped while the circuit breaker is open; scoring skipped", "pod", klog.KObj(pod))
			return fwk.NewStatus(fwk.Skip)
		}
		start := time.Now()
		fetched, made, result, err := pl.client.fetch(ctx, pl.attempts, pl.timeout)
		took := time.Since(start)
		pl.metrics.call(result, took)
		if err != nil {
			outcome := cycleFailedFast
			if result == resultTimeout {
				outcome = cycleTimedOut
			}
			pl.breaker.record(outcome)
			pl.metrics.fallback(fallbackFailed)
			state.fallback = fallbackFailed
			logger.Info("Simulator unavailable; scoring skipped for this pod", "pod", klog.KObj(pod), "attempts", made, "err", err)
			return fwk.NewStatus(fwk.Skip)
		}
		if took > pl.latencyBudget {
			// Used, but counted: every cycle of every profile waits for it.
			pl.breaker.record(cycleSlow)
			logger.V(1).Info("Simulator answered slower than breakerLatencyBudget; counted against the breaker",
				"pod", klog.KObj(pod), "took", took, "budget", pl.latencyBudget)
		} else {
			pl.breaker.record(cycleSucceeded)
		}
		sim = fetched
	}
	state.scores = sim.scores
	if len(sim.invalid) > 0 {
		logger.V(1).Info("Simulator sent nodes without a finite score; they score 0",
			"pod", klog.KObj(pod), "count", len(sim.invalid), "nodes", firstN(sim.invalid, maxLoggedNodes))
	}
	if !scoresAny(sim.scores, nodes) {
		logger.V(1).Info("Simulator had a score for none of the candidate nodes; scoring skipped",
			"pod", klog.KObj(pod), "candidates", len(nodes), "results", len(sim.scores))
		pl.metrics.fallback(fallbackNoneScored)
		state.fallback = FallbackNoneScored
		return fwk.NewStatus(fwk.Skip)
	}
	pl.metrics.scored()
	return nil
}

// Score returns the node's simulator score × 1000, or 0 for a node the
// simulator did not score.
func (pl *CustomScore) Score(_ context.Context, cycleState fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	data, err := cycleState.Read(stateKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("reading %q from cycleState: %w", stateKey, err))
	}
	s, ok := data.(*simulationState)
	if !ok {
		return 0, fwk.AsStatus(fmt.Errorf("%+v cannot be converted to *simulationState", data))
	}
	return s.scores[nodeInfo.Node().Name], nil
}

// Close stops the plugin's goroutine and releases the simulator
// connections when the scheduler stops its framework (a profile reload, a
// shutdown, a test's scheduler).
func (pl *CustomScore) Close() error {
	if pl.stop != nil {
		pl.stop()
		pl.wg.Wait()
	}
	pl.client.close()
	return nil
}

// ScoreExtensions returns the plugin itself, which normalizes its scores.
func (pl *CustomScore) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore maps the scores onto [0, MaxNodeScore]. MinMax (the
// default) rescales them linearly: (score − lowest) × 100 / (highest −
// lowest), and when every score is equal (all 0 included) every node gets
// MaxNodeScore, leaving the choice to the other plugins. Absolute keeps the
// simulator's scale: the simulator score × 100, clamped.
func (pl *CustomScore) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	Normalize(scores, pl.absolute)
	return nil
}

// absoluteScores turns scores (the simulator's × 1000) into the simulator
// score × MaxNodeScore, clamped to [0, MaxNodeScore]: 0.90 and 0.89 become
// 90 and 89, a difference the other plugins' preferences can outweigh.
func absoluteScores(scores fwk.NodeScoreList) {
	for i := range scores {
		scores[i].Score = min(max(scores[i].Score/(milliScale/fwk.MaxNodeScore), 0), fwk.MaxNodeScore)
	}
}

func normalizeScores(scores fwk.NodeScoreList) {
	if len(scores) == 0 {
		return
	}
	lowest, highest := scores[0].Score, scores[0].Score
	for _, s := range scores[1:] {
		lowest = min(lowest, s.Score)
		highest = max(highest, s.Score)
	}
	if lowest == highest {
		for i := range scores {
			scores[i].Score = fwk.MaxNodeScore
		}
		return
	}
	// highest − lowest may not fit int64 but fits uint64. In float64,
	// (score − lowest) × 100 rounds past 2^53 (spans above ~9e13) and the
	// best node could get 99; in 128 bits it is exact, and score − lowest ≤
	// span keeps the quotient at most MaxNodeScore, so Div64 cannot overflow.
	span := uint64(highest) - uint64(lowest)
	for i := range scores {
		hi, lo := bits.Mul64(uint64(scores[i].Score)-uint64(lowest), uint64(fwk.MaxNodeScore))
		q, _ := bits.Div64(hi, lo, span)
		scores[i].Score = int64(q)
	}
}

// SignPod refuses to sign: scores come from the simulator at each cycle, so
// no pod may reuse another pod's scoring through opportunistic batching.
func (pl *CustomScore) SignPod(_ context.Context, _ *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, fwk.NewStatus(fwk.Unschedulable, "scores come from a fresh simulation in every scheduling cycle")
}

// scoresAny reports whether the simulator scored at least one candidate. It
// runs every cycle, so it stops at the first hit: a full count would double
// Score's map lookups.
func scoresAny(scores map[string]int64, nodes []fwk.NodeInfo) bool {
	for _, n := range nodes {
		if _, ok := scores[n.Node().Name]; ok {
			return true
		}
	}
	return false
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
