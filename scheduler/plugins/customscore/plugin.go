// Package customscore implements CustomScorePlugin, which ranks nodes by the
// network simulator's scores: PreScore fetches GET /simulate once per
// scheduling cycle, Score reads a node's score × 1000, NormalizeScore maps the
// scores linearly onto 0–100.
package customscore

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = "CustomScorePlugin"

// stateKey is where PreScore leaves the cycle's simulation for Score.
const stateKey fwk.StateKey = Name + "/simulation"

// maxLoggedNodes bounds the node names quoted in one log line.
const maxLoggedNodes = 10

// CustomScore is the CustomScorePlugin.
type CustomScore struct {
	client   *simulateClient
	attempts int
	breaker  *breaker
}

var (
	_ fwk.PreScorePlugin  = &CustomScore{}
	_ fwk.ScorePlugin     = &CustomScore{}
	_ fwk.ScoreExtensions = &CustomScore{}
	_ fwk.SignPlugin      = &CustomScore{}
	_ io.Closer           = &CustomScore{}
)

// New initializes the plugin from its CustomScorePluginArgs. Invalid args
// fail scheduler start-up with the field named.
func New(ctx context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	cfg, err := newConfig(obj)
	if err != nil {
		return nil, err
	}
	registerMetrics()
	logger := klog.FromContext(ctx).WithValues("plugin", Name)
	pl := &CustomScore{
		client:   newSimulateClient(cfg),
		attempts: cfg.retries + 1,
	}
	pl.breaker = newBreaker(cfg.breakerThreshold, cfg.breakerCooldown, func(from, to breakerState, failures int) {
		BreakerState.Set(float64(to))
		switch to {
		case breakerOpen:
			logger.Info("Simulator circuit breaker opened: nodes score 0 without calling the simulator until the cool-down ends",
				"url", cfg.simulateURL, "failedCycles", failures, "coolDown", cfg.breakerCooldown, "from", from.String())
		case breakerHalfOpen:
			logger.Info("Simulator circuit breaker half-open: probing the simulator", "url", cfg.simulateURL)
		case breakerClosed:
			logger.Info("Simulator circuit breaker closed: simulator answers again", "url", cfg.simulateURL)
		}
	})
	BreakerState.Set(float64(breakerClosed))
	logger.V(1).Info("Plugin configured", "url", cfg.simulateURL, "timeout", cfg.timeout, "retries", cfg.retries,
		"retryDelay", cfg.retryDelay, "maxBodyBytes", cfg.maxBodyBytes,
		"breakerFailureThreshold", cfg.breakerThreshold, "breakerCooldown", cfg.breakerCooldown)
	return pl, nil
}

// Name returns the name of the plugin.
func (pl *CustomScore) Name() string { return Name }

// simulationState is the cycle's simulation. It is never written after
// PreScore, so Clone can share it.
type simulationState struct {
	scores map[string]int64
}

func (s *simulationState) Clone() fwk.StateData { return s }

// PreScore fetches this cycle's simulation. It never fails the pod: when the
// simulator cannot be reached, or the breaker is open, every node scores 0.
func (pl *CustomScore) PreScore(ctx context.Context, cycleState fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	logger := klog.FromContext(ctx)
	// The state is written fresh every cycle: nothing from an earlier cycle survives.
	state := &simulationState{}
	cycleState.Write(stateKey, state)

	allowed, probe := pl.breaker.allow()
	if !allowed {
		FallbacksTotal.WithLabelValues(fallbackBreakerOpen).Inc()
		logger.V(4).Info("Simulator skipped while the circuit breaker is open; every node scores 0", "pod", klog.KObj(pod))
		return nil
	}
	attempts := pl.attempts
	if probe {
		attempts = 1
	}
	start := time.Now()
	sim, made, result, err := pl.client.fetch(ctx, attempts)
	CallDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
	pl.breaker.record(err == nil)
	if err != nil {
		FallbacksTotal.WithLabelValues(fallbackFailed).Inc()
		logger.Info("Simulator unavailable; every node scores 0 for this pod", "pod", klog.KObj(pod), "attempts", made, "err", err)
		return nil
	}
	state.scores = sim.scores
	if len(sim.invalid) > 0 {
		logger.V(1).Info("Simulator sent nodes without a finite score; they score 0",
			"pod", klog.KObj(pod), "count", len(sim.invalid), "nodes", firstN(sim.invalid, maxLoggedNodes))
	}
	if logger.V(1).Enabled() && len(nodes) > 0 && !scoresAny(sim.scores, nodes) {
		logger.V(1).Info("Simulator had a score for none of the candidate nodes; every node scores 0",
			"pod", klog.KObj(pod), "candidates", len(nodes), "results", len(sim.scores))
	}
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

// Close releases the simulator connections when the scheduler stops its
// framework (a profile reload, a shutdown, a test's scheduler).
func (pl *CustomScore) Close() error {
	pl.client.close()
	return nil
}

// ScoreExtensions returns the plugin itself, which normalizes its scores.
func (pl *CustomScore) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore rescales scores linearly onto [0, MaxNodeScore]:
// (score − lowest) × 100 / (highest − lowest). When every score is equal
// (all 0 included) every node gets MaxNodeScore, leaving the choice to the
// other plugins.
func (pl *CustomScore) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	normalizeScores(scores)
	return nil
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
	// highest − lowest may not fit int64, and float64 would lose it for close
	// large scores; as uint64 the difference is exact.
	span := float64(uint64(highest) - uint64(lowest))
	for i := range scores {
		n := float64(uint64(scores[i].Score)-uint64(lowest)) * float64(fwk.MaxNodeScore) / span
		scores[i].Score = int64(math.Min(math.Floor(n), float64(fwk.MaxNodeScore)))
	}
}

// SignPod refuses to sign: scores come from the simulator at each cycle, so
// no pod may reuse another pod's scoring through opportunistic batching.
func (pl *CustomScore) SignPod(_ context.Context, _ *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, fwk.NewStatus(fwk.Unschedulable, "scores come from a fresh simulation in every scheduling cycle")
}

// scoresAny reports whether the simulator scored at least one candidate. It
// stops at the first hit: at the --v=1 of a deployment it runs every cycle,
// and a full count would double Score's map lookups.
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
