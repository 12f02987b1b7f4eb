package customscore

import (
	"net/http"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/placement"
)

// profileHandle is a framework handle that only knows its profile's name.
type profileHandle struct {
	fwk.Handle
	name string
}

func (h profileHandle) ProfileName() string { return h.name }

// SharedInformerFactory is nil: a plugin without informers lists no drift.
func (h profileHandle) SharedInformerFactory() informers.SharedInformerFactory { return nil }

// Two profiles run two plugin instances: each has its own series, and a
// new instance does not reset another's breaker gauge.
func TestMetricsPerProfile(t *testing.T) {
	var goodBody, downBody atomic.Value
	var goodStatus, downStatus atomic.Int32
	goodBody.Store(`{"results":{"n1":{"score":0.9},"n2":{"score":0.1}}}`)
	downBody.Store(`{}`)
	downStatus.Store(http.StatusServiceUnavailable)
	good, _ := simulator(t, &goodBody, &goodStatus)
	down, _ := simulator(t, &downBody, &downStatus)

	const sick, healthy, later = "test-metrics-sick", "test-metrics-healthy", "test-metrics-later"
	read := func(name string, v float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	scored := func(profile string) float64 {
		v, err := testutil.GetCounterMetricValue(ScoredCyclesTotal.WithLabelValues(profile))
		return read("scored "+profile, v, err)
	}
	failed := func(profile string) float64 {
		v, err := testutil.GetCounterMetricValue(FallbacksTotal.WithLabelValues(profile, placement.FallbackSimulatorFailed))
		return read("fallbacks "+profile, v, err)
	}
	breakerOf := func(profile string) float64 {
		v, err := testutil.GetGaugeMetricValue(BreakerState.WithLabelValues(profile))
		return read("breaker "+profile, v, err)
	}

	// The sick profile's breaker stays open: its prober asks at once and
	// keeps asking, but the simulator keeps answering 503.
	// Counters are deltas, so the test survives -count.
	failedSick0, failedHealthy0 := failed(sick), failed(healthy)
	scoredSick0, scoredHealthy0 := scored(sick), scored(healthy)
	sickPl := newProfilePlugin(t, down.URL, "retries: 0\nbreakerFailureThreshold: 1", profileHandle{name: sick})
	healthyPl := newProfilePlugin(t, good.URL, "", profileHandle{name: healthy})
	nodes := nodeInfos("n1", "n2")
	scoreCycle(t, sickPl, nodes)
	scoreCycle(t, healthyPl, nodes)

	if got := breakerOf(sick); got != 1 {
		t.Errorf("breaker_state{profile=%q} = %v, want 1 (open)", sick, got)
	}
	if got := breakerOf(healthy); got != 0 {
		t.Errorf("breaker_state{profile=%q} = %v, want 0 (closed)", healthy, got)
	}
	if got := failed(sick) - failedSick0; got != 1 {
		t.Errorf("fallbacks_total{profile=%q,reason=simulator_failed} grew by %v, want 1", sick, got)
	}
	if got := failed(healthy) - failedHealthy0; got != 0 {
		t.Errorf("fallbacks_total{profile=%q,reason=simulator_failed} grew by %v, want 0", healthy, got)
	}
	if got := scored(healthy) - scoredHealthy0; got != 1 {
		t.Errorf("scored_cycles_total{profile=%q} grew by %v, want 1", healthy, got)
	}
	if got := scored(sick) - scoredSick0; got != 0 {
		t.Errorf("scored_cycles_total{profile=%q} grew by %v, want 0", sick, got)
	}

	// A plugin instance made later, for a third profile, starts its own
	// gauge closed and leaves the sick profile's open.
	newProfilePlugin(t, good.URL, "", profileHandle{name: later})
	if got := breakerOf(sick); got != 1 {
		t.Errorf("after another profile's plugin started, breaker_state{profile=%q} = %v, want 1", sick, got)
	}
	if got := breakerOf(later); got != 0 {
		t.Errorf("breaker_state{profile=%q} = %v, want 0", later, got)
	}
}
