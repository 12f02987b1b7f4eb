package customscore

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"kns3.dev/kns3/scheduler/plugins/customscore/breaker"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

const metricsSubsystem = "kns3_simulator"

// profileLabel names the scheduling profile of the plugin instance behind a
// series: a scheduler with two profiles using CustomScorePlugin runs two
// instances, each with its own breaker, simulator and counters.
const profileLabel = "profile"

var (
	// AttemptsTotal counts GET /simulate attempts by result.
	AttemptsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "attempts_total",
		Help:           "Number of GET /simulate attempts made by CustomScorePlugin, by result.",
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel, "result"})

	// CallDuration observes one scheduling cycle's call to the simulator,
	// retries included, by the result of its last attempt.
	CallDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "call_duration_seconds",
		Help:           "Duration of CustomScorePlugin's call to the simulator in one scheduling cycle, retries included, by result.",
		Buckets:        metrics.ExponentialBuckets(0.0005, 2, 16),
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel, "result"})

	// FallbacksTotal counts scheduling cycles scored without simulator results.
	FallbacksTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "fallbacks_total",
		Help:           "Number of scheduling cycles in which CustomScorePlugin skipped scoring because it had no simulation scoring a feasible node, by reason: simulator_failed, breaker_open, stale, none_scored, warming_up.",
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel, "reason"})

	// ScoredCyclesTotal counts scheduling cycles ranked from a simulation;
	// with FallbacksTotal it gives the share of network-aware cycles.
	ScoredCyclesTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "scored_cycles_total",
		Help:           "Number of scheduling cycles in which CustomScorePlugin ranked nodes from a simulation.",
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel})

	// BreakerState is 0 while the breaker is closed, 1 while open.
	BreakerState = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "breaker_state",
		Help:           "State of CustomScorePlugin's circuit breaker: 0 closed, 1 open (simulator skipped by scheduling cycles, probed in the background).",
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel})

	// MaxSimulationAge is the profile's maxSimulationAge arg, beside the
	// simulation's age (answermetrics.go), so that an alert compares the
	// two whatever each profile set.
	MaxSimulationAge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "max_simulation_age_seconds",
		Help:           "The profile's maxSimulationAge: in Background refresh mode, the age past which a simulation is not used.",
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel})

	// DriftedPods counts the profile's running pods listed as drifted in
	// the published status (the driftMarginMilli arg).
	DriftedPods = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "drifted_pods",
		Help:           "Running pods of the profile whose node has scored below the best feasible alternative by the drift margin for longer than a window of fresh measurements. Advisory: KNS-3 never evicts.",
		StabilityLevel: metrics.ALPHA,
	}, []string{profileLabel})

	registerOnce sync.Once
)

// registerMetrics registers the plugin's metrics with the scheduler's own
// registry, served on its /metrics endpoint.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(AttemptsTotal, CallDuration, FallbacksTotal, ScoredCyclesTotal, BreakerState, MaxSimulationAge, DriftedPods)
		legacyregistry.CustomMustRegister(answers)
	})
}

// profileMetrics records one plugin instance's series, labelled with its
// profile, so that instances never overwrite each other's gauges. It also
// keeps the instance's own counts since it started, for the published
// status: the registry's series outlive instances (a profile reload).
type profileMetrics struct {
	profile string

	scoredCycles atomic.Int64
	mu           sync.Mutex
	fallbacks    map[string]int64
}

// newProfileMetrics starts the profile's counters at 0, so that a share of
// cycles can be computed before the first of each kind.
func newProfileMetrics(profile string) *profileMetrics {
	registerMetrics()
	ScoredCyclesTotal.WithLabelValues(profile)
	for _, reason := range []string{placement.FallbackSimulatorFailed, placement.FallbackBreakerOpen, placement.FallbackStale, placement.FallbackNoneScored, placement.FallbackWarmingUp} {
		FallbacksTotal.WithLabelValues(profile, reason)
	}
	return &profileMetrics{profile: profile, fallbacks: map[string]int64{}}
}

// Attempt counts one GET /simulate attempt by its result (a simclient
// Result* label): profileMetrics is the client's Recorder.
func (m *profileMetrics) Attempt(result string) {
	AttemptsTotal.WithLabelValues(m.profile, result).Inc()
}

func (m *profileMetrics) call(result string, d time.Duration) {
	CallDuration.WithLabelValues(m.profile, result).Observe(d.Seconds())
}

func (m *profileMetrics) fallback(reason string) {
	FallbacksTotal.WithLabelValues(m.profile, reason).Inc()
	m.mu.Lock()
	m.fallbacks[reason]++
	m.mu.Unlock()
}

func (m *profileMetrics) scored() {
	ScoredCyclesTotal.WithLabelValues(m.profile).Inc()
	m.scoredCycles.Add(1)
}

func (m *profileMetrics) breakerState(s breaker.State) {
	BreakerState.WithLabelValues(m.profile).Set(float64(s))
}

// counts are the instance's scored cycles and fallbacks by reason since it
// started.
func (m *profileMetrics) counts() (scored int64, fallbacks map[string]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.scoredCycles.Load(), maps.Clone(m.fallbacks)
}

func (m *profileMetrics) maxSimulationAge(d time.Duration) {
	MaxSimulationAge.WithLabelValues(m.profile).Set(d.Seconds())
}

func (m *profileMetrics) driftedPods(n int) {
	DriftedPods.WithLabelValues(m.profile).Set(float64(n))
}
