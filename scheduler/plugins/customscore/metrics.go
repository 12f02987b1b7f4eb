package customscore

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const metricsSubsystem = "kns3_simulator"

// Attempt results, the "result" label of AttemptsTotal and CallDuration.
const (
	resultSuccess   = "success"
	resultTimeout   = "timeout"
	resultConnError = "connection_error"
	resultHTTPError = "http_error"
	resultTooLarge  = "body_too_large"
	resultBadBody   = "invalid_body"
)

// Fallback reasons, the "reason" label of FallbacksTotal.
const (
	fallbackFailed      = "simulator_failed"
	fallbackBreakerOpen = "breaker_open"
	// fallbackStale: Background mode had no simulation younger than maxSimulationAge.
	fallbackStale = "stale"
)

var (
	// AttemptsTotal counts GET /simulate attempts by result.
	AttemptsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "attempts_total",
		Help:           "Number of GET /simulate attempts made by CustomScorePlugin, by result.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// CallDuration observes one scheduling cycle's call to the simulator,
	// retries included, by the result of its last attempt.
	CallDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "call_duration_seconds",
		Help:           "Duration of CustomScorePlugin's call to the simulator in one scheduling cycle, retries included, by result.",
		Buckets:        metrics.ExponentialBuckets(0.0005, 2, 16),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// FallbacksTotal counts scheduling cycles scored without simulator results.
	FallbacksTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "fallbacks_total",
		Help:           "Number of scheduling cycles in which every node scored 0 because no simulation was available, by reason: simulator_failed, breaker_open, stale.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})

	// ScoredCyclesTotal counts scheduling cycles ranked from a simulation;
	// with FallbacksTotal it gives the share of network-aware cycles.
	ScoredCyclesTotal = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "scored_cycles_total",
		Help:           "Number of scheduling cycles in which CustomScorePlugin ranked nodes from a simulation.",
		StabilityLevel: metrics.ALPHA,
	})

	// BreakerState is 0 while the breaker is closed, 1 while open.
	BreakerState = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "breaker_state",
		Help:           "State of CustomScorePlugin's circuit breaker: 0 closed, 1 open (simulator skipped by scheduling cycles, probed in the background).",
		StabilityLevel: metrics.ALPHA,
	})

	// SimulationAge is, in Background mode, the age of the simulation the
	// last scheduling cycle found.
	SimulationAge = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "simulation_age_seconds",
		Help:           "In Background refresh mode, the age of the newest simulation when the last scheduling cycle read it.",
		StabilityLevel: metrics.ALPHA,
	})

	registerOnce sync.Once
)

// registerMetrics registers the plugin's metrics with the scheduler's own
// registry, served on its /metrics endpoint.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(AttemptsTotal, CallDuration, FallbacksTotal, ScoredCyclesTotal, BreakerState, SimulationAge)
	})
}
