package integration

import (
	"fmt"
	"testing"

	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// Case 3: placement follows the simulator's ranking, and follows the new
// ranking after the scenario changes while the scheduler runs.
func TestPlacementFollowsSimulatorRanking(t *testing.T) {
	c := newCluster(t, `
nodes:
  node-a: {score: 0.5}
  node-b: {score: 0.9}
  node-c: {score: 0.1}
`, schedulerOptions{},
		nodeSpec{"node-a", nil}, nodeSpec{"node-b", nil}, nodeSpec{"node-c", nil},
	)
	for i := range 3 {
		name := fmt.Sprintf("first-%d", i)
		c.createPod(t, st.MakePod().Name(name))
		if node := c.scheduled(t, name); node != "node-b" {
			t.Errorf("%s went to %s, want node-b, ranked first", name, node)
		}
	}

	// Now rank by metrics: node-c has the best network, node-b the worst.
	c.sim.setScenario(`
nodes:
  node-a: {latency_ms: 5, bandwidth_mbps: 500}
  node-b: {latency_ms: 40, bandwidth_mbps: 100, packet_loss: 0.2}
  node-c: {latency_ms: 0.5, bandwidth_mbps: 1000}
`)
	for i := range 3 {
		name := fmt.Sprintf("second-%d", i)
		c.createPod(t, st.MakePod().Name(name))
		if node := c.scheduled(t, name); node != "node-c" {
			t.Errorf("%s went to %s after the scenario changed, want node-c, now ranked first", name, node)
		}
	}
}
