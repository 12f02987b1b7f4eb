//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// awaitBreakerClosed waits until CustomScorePlugin's breaker reports
// closed: its background prober closes it within about a second of the
// simulator answering again, with no scheduling cycle needed, and the
// status says so within a publication.
func (c *cluster) awaitBreakerClosed() {
	c.t.Helper()
	start := time.Now()
	c.awaitPublished("CustomScorePlugin's breaker closed", func(d schedstatus.ProfileStatus) bool {
		return d.Breaker == schedstatus.BreakerClosed && !d.Simulator.Down()
	})
	c.t.Logf("CustomScorePlugin's breaker reported closed %.1fs after the simulator was healthy again", time.Since(start).Seconds())
}

func TestSimulatorFailureFallback(t *testing.T) {
	f := inNamespace(features.New("CustomScorePlugin fallback"), "kns3-e2e-fallback").
		Assess("with the simulator failing, pods still schedule and the status shows it",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				before := c.published()
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
				// The published status counts them within a publication.
				after := c.awaitPublished("the fallbacks of 4 pods", func(d schedstatus.ProfileStatus) bool {
					return fallbacks(d) >= fallbacks(before)+4 && d.Fallbacks[placement.FallbackSimulatorFailed] > before.Fallbacks[placement.FallbackSimulatorFailed]
				})
				t.Logf("fallbacks during the test: simulator_failed %+d, breaker_open %+d",
					after.Fallbacks[placement.FallbackSimulatorFailed]-before.Fallbacks[placement.FallbackSimulatorFailed], after.Fallbacks[placement.FallbackBreakerOpen]-before.Fallbacks[placement.FallbackBreakerOpen])
				if !after.Simulator.Down() || !strings.Contains(after.Simulator.LastError, "500") {
					t.Errorf("the status says the simulator is up (last error %q), while it answers 500", after.Simulator.LastError)
				}
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}
