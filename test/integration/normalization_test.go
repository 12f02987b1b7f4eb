package integration

import (
	"fmt"
	"testing"

	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// A pod's own soft preference against the network score. The simulator
// ranks node-a first; a pod labeled app=db runs there, and each test pod
// prefers (preferredDuringScheduling anti-affinity) a node without it. The
// default profile's InterPodAffinity adds at most 2 × 100 points for that
// preference; CustomScorePlugin weighs 10.
//
//   - MinMax (the specification's) stretches even 0.90 against 0.89 onto
//     100 against 0, 1,000 points: the pod follows the simulator.
//   - Absolute keeps the simulator's scale, 90 against 89, 10 points: the
//     preference wins; against 0.10 (800 points) the simulator still wins.
func TestNormalizationAgainstSoftPreferences(t *testing.T) {
	const (
		small = "nodes: {node-a: {score: 0.90}, node-b: {score: 0.89}}"
		large = "nodes: {node-a: {score: 0.90}, node-b: {score: 0.10}}"
	)
	type step struct {
		scenario, want, why string
	}
	for _, tt := range []struct {
		normalization string
		steps         []step
	}{
		{"MinMax", []step{
			{small, "node-a", "min-max turns a 0.01 network difference into 1,000 points, over the preference's 200"},
		}},
		{"Absolute", []step{
			{small, "node-b", "a 0.01 network difference is 10 points, under the preference's 200"},
			{large, "node-a", "a 0.80 network difference is 800 points, over the preference's 200"},
		}},
	} {
		t.Run(tt.normalization, func(t *testing.T) {
			c := newCluster(t, tt.steps[0].scenario,
				schedulerOptions{scoreArgs: map[string]any{"normalization": tt.normalization}},
				nodeSpec{"node-a", nil}, nodeSpec{"node-b", nil},
			)
			// Bound by name: the scheduler only sees it as a pod on node-a.
			c.createPod(t, st.MakePod().Name("db").Label("app", "db").Node("node-a"))
			for i, s := range tt.steps {
				if i > 0 {
					c.sim.setScenario(s.scenario)
				}
				name := fmt.Sprintf("client-%d", i)
				c.createPod(t, st.MakePod().Name(name).Label("app", "client").
					PodAntiAffinityIn("app", labelHost, []string{"db"}, st.PodAntiAffinityWithPreferredReq))
				if node := c.scheduled(t, name); node != s.want {
					t.Errorf("%s with %s (%s) went to %s, want %s: %s", name, tt.normalization, s.scenario, node, s.want, s.why)
				}
			}
		})
	}
}
