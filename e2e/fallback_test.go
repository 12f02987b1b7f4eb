//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/wait"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
)

const (
	// The exposition sorts labels by name.
	fallbacksFailed = `kns3_simulator_fallbacks_total{profile="kns-3-scheduler",reason="simulator_failed"}`
	fallbacksOpen   = `kns3_simulator_fallbacks_total{profile="kns-3-scheduler",reason="breaker_open"}`
	breakerState    = `kns3_simulator_breaker_state{profile="kns-3-scheduler"}`
)

// awaitBreakerClosed waits until CustomScorePlugin's breaker reports
// closed: its background prober closes it within about a second of the
// simulator answering again, with no scheduling cycle needed.
func (c *cluster) awaitBreakerClosed() {
	c.t.Helper()
	start := time.Now()
	err := wait.For(func(context.Context) (bool, error) {
		state, ok := c.schedulerMetrics()[breakerState]
		return ok && state == 0, nil
	}, wait.WithInterval(500*time.Millisecond), wait.WithTimeout(time.Minute), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("CustomScorePlugin's breaker did not close: %v", err)
	}
	c.t.Logf("CustomScorePlugin's breaker closed %.1fs after the simulator was healthy again", time.Since(start).Seconds())
}

func TestSimulatorFailureFallback(t *testing.T) {
	f := inNamespace(features.New("CustomScorePlugin fallback"), "kns3-e2e-fallback").
		Assess("with the simulator failing, pods still schedule and the metrics show it",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := newCluster(t, cfg)
				before := c.schedulerMetrics()
				c.setScenario("failing", scores(c.plain, 0.9), true)
				t.Cleanup(func() {
					c.setScenario("healthy-again", scores(c.plain, 0.9), false)
					// Later tests rank nodes through the simulator: leave
					// only once the breaker has closed again.
					c.awaitBreakerClosed()
				})
				bound := map[string]string{}
				for i := 0; i < 4; i++ {
					name := fmt.Sprintf("pod-%d", i)
					c.createPod(st.MakePod().Name(name))
					node := c.scheduled(name)
					if node == c.disabled {
						t.Errorf("%s landed on the disabled node: the filter must not depend on the simulator", name)
					}
					bound[name] = node
					// Two feasible nodes (plain, rigorous): the cycle fell
					// back, and the pod's event says why.
					if ev := c.placementEvent(name); !strings.HasPrefix(ev, "Fallback (simulator_failed): "+node) &&
						!strings.HasPrefix(ev, "Fallback (breaker_open): "+node) {
						t.Errorf("%s: placement event %q, want a simulator_failed or breaker_open fallback on %s", name, ev, node)
					}
				}
				c.boundLogged(bound)
				after := c.schedulerMetrics()
				fallbacks := after[fallbacksFailed] + after[fallbacksOpen] - before[fallbacksFailed] - before[fallbacksOpen]
				t.Logf("fallbacks during the test: simulator_failed %+.0f, breaker_open %+.0f",
					after[fallbacksFailed]-before[fallbacksFailed], after[fallbacksOpen]-before[fallbacksOpen])
				if fallbacks < 4 {
					t.Errorf("kns3_simulator_fallbacks_total rose by %.0f for 4 pods scheduled without the simulator, want ≥ 4", fallbacks)
				}
				if after[fallbacksFailed] <= before[fallbacksFailed] {
					t.Errorf("%s did not rise (%.0f → %.0f)", fallbacksFailed, before[fallbacksFailed], after[fallbacksFailed])
				}
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}
