package integration

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/customscore"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// Case 4: with the simulator stopped pods still schedule, every node scoring
// the same, and after breakerFailureThreshold failed cycles the breaker opens.
func TestSchedulingSurvivesStoppedSimulator(t *testing.T) {
	c := newCluster(t, "nodes: {node-a: {score: 0.9}, node-b: {score: 0.1}}",
		schedulerOptions{scoreArgs: map[string]any{"timeout": "1s", "breakerFailureThreshold": 2}},
		nodeSpec{"node-a", nil}, nodeSpec{"node-b", nil},
	)
	c.createPod(t, st.MakePod().Name("before"))
	if node := c.scheduled(t, "before"); node != "node-a" {
		t.Fatalf("with the simulator up the pod went to %s, want node-a", node)
	}
	failedBefore := counter(t, customscore.FallbacksTotal.WithLabelValues(plugins.ProfileName, placement.FallbackSimulatorFailed))
	skippedBefore := counter(t, customscore.FallbacksTotal.WithLabelValues(plugins.ProfileName, placement.FallbackBreakerOpen))

	c.sim.stop()
	for i := range 4 {
		name := fmt.Sprintf("after-%d", i)
		c.createPod(t, st.MakePod().Name(name))
		c.scheduled(t, name)
	}

	if g, err := testutil.GetGaugeMetricValue(customscore.BreakerState.WithLabelValues(plugins.ProfileName)); err != nil || g != 1 {
		t.Errorf("kns3_simulator_breaker_state = %v (%v), want 1 (open)", g, err)
	}
	if d := counter(t, customscore.FallbacksTotal.WithLabelValues(plugins.ProfileName, placement.FallbackSimulatorFailed)) - failedBefore; d != 2 {
		t.Errorf("simulator_failed fallbacks grew by %v, want 2 (the breaker threshold)", d)
	}
	if d := counter(t, customscore.FallbacksTotal.WithLabelValues(plugins.ProfileName, placement.FallbackBreakerOpen)) - skippedBefore; d != 2 {
		t.Errorf("breaker_open fallbacks grew by %v, want 2 (the pods scheduled while open)", d)
	}
	// The metrics are in the registry the scheduler serves on /metrics.
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(`
# HELP kns3_simulator_breaker_state [ALPHA] State of CustomScorePlugin's circuit breaker: 0 closed, 1 open (simulator skipped by scheduling cycles, probed in the background).
# TYPE kns3_simulator_breaker_state gauge
kns3_simulator_breaker_state{profile="kns-3-scheduler"} 1
`), "kns3_simulator_breaker_state"); err != nil {
		t.Error(err)
	}
}

func counter(t *testing.T, m metrics.CounterMetric) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
