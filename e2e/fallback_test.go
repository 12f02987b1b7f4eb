//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
)

const (
	fallbacksFailed = `kns3_simulator_fallbacks_total{reason="simulator_failed"}`
	fallbacksOpen   = `kns3_simulator_fallbacks_total{reason="breaker_open"}`
	breakerState    = `kns3_simulator_breaker_state`
)

// awaitBreakerClosed schedules probe pods until CustomScorePlugin's breaker
// reports closed. An open breaker only probes the simulator in a scheduling
// cycle after its cooldown, so waiting alone would never close it.
func (c *cluster) awaitBreakerClosed() {
	c.t.Helper()
	probes := 0
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
		if state, ok := c.schedulerMetrics()[breakerState]; ok && state == 0 {
			return true, nil
		}
		name := fmt.Sprintf("breaker-probe-%d", probes)
		probes++
		c.createPod(name)
		c.scheduled(name)
		return false, nil
	})
	if err != nil {
		c.t.Fatalf("CustomScorePlugin's breaker did not close after %d probe pods: %v", probes, err)
	}
	c.t.Logf("CustomScorePlugin's breaker closed after %d probe pod(s)", probes)
}

func TestSimulatorFailureFallback(t *testing.T) {
	f := features.New("CustomScorePlugin fallback").
		Assess("with the simulator failing, pods still schedule and the metrics show it",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := newCluster(t, cfg, "kns3-e2e-fallback")
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
					c.createPod(name)
					node := c.scheduled(name)
					if node == c.disabled {
						t.Errorf("%s landed on the disabled node: the filter must not depend on the simulator", name)
					}
					bound[name] = node
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
