package integration

import (
	"strings"
	"testing"
	"time"

	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/networkcapacity"
)

// NetworkCapacity's filter is opt-in. Node a scores best on the simulator
// (0.9 against 0.1) and has a 100 Mbit/s link; b has 1000 Mbit/s. Ranked
// alone, a pod declaring 200 Mbit/s goes to a, whose score outweighs its
// full link; with the filter on, a is filtered out and the pod goes to b,
// and a pod declaring more than either link has is unschedulable, the
// scheduler's event naming the filter's reason, until a new measurement
// gives b the room: then it is placed there at once. A new measurement is
// no cluster event; without the plugin retrying the pods its filter
// rejected, the pod would wait for the scheduler's periodic retry of
// unschedulable pods, 5 minutes, longer than the test waits.
func TestCapacityFilterIsOptIn(t *testing.T) {
	const scenario = "nodes:\n  node-a: {score: 0.9, bandwidth_mbps: 100}\n  node-b: {score: 0.1, bandwidth_mbps: 1000}\n"
	for _, tc := range []struct {
		name   string
		config string
		filter bool
		want   string
	}{
		{"ranked only", controlPlaneConfig, false, "node-a"},
		{"filtered, Background", controlPlaneConfig, true, "node-b"},
		// PerCycle asks in PreScore, after Filter: the filter judges by the
		// previous answer. With no cycle to ask, the answer that lets the
		// rejected pod in comes from the status's keeper, which asks every
		// 5 s while the status is published, as the installs publish it.
		{"filtered, PerCycle", configPath, true, "node-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.config == configPath {
				t.Setenv(status.NamespaceEnv, "kns-3-system")
			}
			c := newCluster(t, scenario, schedulerOptions{config: tc.config, withCapacity: true, withCapacityFilter: tc.filter},
				nodeSpec{name: "node-a"}, nodeSpec{name: "node-b"})
			// One pod first, so that the filter has a simulation to read.
			c.createPod(t, st.MakePod().Name("first"))
			if node := c.scheduled(t, "first"); node != "node-a" {
				t.Fatalf("first pod went to %s, want node-a, ranked first", node)
			}
			c.createPod(t, st.MakePod().Name("needs-200m").Annotation(networkcapacity.IngressBandwidthAnnotation, "200M"))
			if node := c.scheduled(t, "needs-200m"); node != tc.want {
				t.Errorf("a pod declaring 200 Mbit/s went to %s, want %s", node, tc.want)
			}
			if !tc.filter {
				return
			}
			c.createPod(t, st.MakePod().Name("needs-5g").Annotation(networkcapacity.IngressBandwidthAnnotation, "5G"))
			if msg := c.unschedulable(t, "needs-5g"); !strings.Contains(msg, "2 "+networkcapacity.ErrReasonLinkFull) {
				t.Errorf("FailedScheduling says %q, want both nodes rejected for %q", msg, networkcapacity.ErrReasonLinkFull)
			}
			c.sim.setScenario(strings.Replace(scenario, "bandwidth_mbps: 1000}", "bandwidth_mbps: 10000}", 1))
			served := time.Now()
			if node := c.scheduled(t, "needs-5g"); node != "node-b" {
				t.Errorf("once node-b measured 10 Gbit/s, the pod declaring 5 Gbit/s went to %s, want node-b", node)
			}
			t.Logf("the pod declaring 5 Gbit/s placed %.1fs after the simulator served the new measurement", time.Since(served).Seconds())
		})
	}
}
