//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
)

func TestScoreOrdering(t *testing.T) {
	f := inNamespace(features.New("CustomScorePlugin"), "kns3-e2e-score").
		Assess("pods follow the simulator's ranking, and its changes",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				bound := map[string]string{}
				for round, best := range []struct{ source, scenario, node string }{
					{"score-plain-first", scores(c.disabled, 0.1, c.rigorous, 0.3, c.plain, 0.9), c.plain},
					{"score-rigorous-first", metricsScenario(c.plain, c.rigorous), c.rigorous},
				} {
					c.setScenario(best.source, best.scenario, false)
					for i := 0; i < 3; i++ {
						name := fmt.Sprintf("round%d-%d", round, i)
						c.expectPlaced(bound, st.MakePod().Name(name), best.node, "ranked first by scenario "+best.source)
					}
				}
				c.boundLogged(bound)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// metricsScenario ranks better above worse through metrics alone: the
// simulator derives the scores.
func metricsScenario(worse, better string) string {
	return fmt.Sprintf(`  %s:
    latency_ms: 40
    bandwidth_mbps: 100
    packet_loss: 0.05
  %s:
    latency_ms: 1
    bandwidth_mbps: 10000
    packet_loss: 0
`, worse, better)
}
