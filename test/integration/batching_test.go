package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/networkcapacity"
)

// batchCounters are upstream's opportunistic batching counters of one
// profile: cycles that took the hinted node, and batches ended because a
// pod was unsigned.
type batchCounters struct{ hintUsed, notBatchable float64 }

func readBatchCounters(t *testing.T, profile string) batchCounters {
	t.Helper()
	used, err := testutil.GetCounterMetricValue(schedmetrics.BatchAttemptStats.WithLabelValues(profile, schedmetrics.BatchAttemptHintUsed))
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := testutil.GetCounterMetricValue(schedmetrics.BatchCacheFlushed.WithLabelValues(profile, schedmetrics.BatchFlushPodNotBatchable))
	if err != nil {
		t.Fatal(err)
	}
	return batchCounters{used, unsigned}
}

func (b batchCounters) minus(o batchCounters) batchCounters {
	return batchCounters{b.hintUsed - o.hintUsed, b.notBatchable - o.notBatchable}
}

// Opportunistic batching (KEP-5598, on by default): upstream's own
// counters show it on for the kns-3-scheduler profile of the one-scheduler
// install (Background mode, where a run of pods shares one simulation),
// with NetworkCapacity added too (it signs pods by their declared
// bandwidth), and off for the shipped PerCycle profile, which asks the
// simulator in every cycle.
func TestOpportunisticBatching(t *testing.T) {
	const nodes, burst = 10, 40
	var scenario strings.Builder
	scenario.WriteString("nodes:\n")
	specs := make([]nodeSpec, nodes)
	for i := range nodes {
		specs[i] = nodeSpec{name: fmt.Sprintf("node-%02d", i)}
		fmt.Fprintf(&scenario, "  %s: {score: %.2f, bandwidth_mbps: 1000}\n", specs[i].name, float64(i+1)/float64(nodes+1))
	}
	for _, tc := range []struct {
		mode, config string
		withCapacity bool
		batched      bool
	}{
		{"PerCycle", configPath, false, false},
		{"Background", controlPlaneConfig, false, true},
		{"Background with NetworkCapacity", controlPlaneConfig, true, true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c := newCluster(t, scenario.String(), schedulerOptions{config: tc.config, clientQPS: 1000, withCapacity: tc.withCapacity}, specs...)
			// One pod first, so that Background mode has its simulation.
			c.createPod(t, st.MakePod().Name("first"))
			if node := c.scheduled(t, "first"); node != specs[nodes-1].name {
				t.Fatalf("first pod went to %s, want %s, ranked first", node, specs[nodes-1].name)
			}
			before := readBatchCounters(t, plugins.ProfileName)
			for i := range burst {
				c.createPod(t, st.MakePod().Name(fmt.Sprintf("p-%02d", i)))
			}
			for i := range burst {
				c.scheduled(t, fmt.Sprintf("p-%02d", i))
			}
			got := readBatchCounters(t, plugins.ProfileName).minus(before)
			t.Logf("%s: %d pods, %.0f placed by a batch's hint, %.0f batches ended by an unsigned pod", tc.mode, burst, got.hintUsed, got.notBatchable)
			if tc.batched && got.hintUsed == 0 {
				t.Errorf("no pod of %d placed from a batch in %s mode", burst, tc.mode)
			}
			if !tc.batched && (got.hintUsed != 0 || got.notBatchable == 0) {
				t.Errorf("%s mode: %.0f pods placed from a batch, %.0f unsigned; want none placed, all unsigned", tc.mode, got.hintUsed, got.notBatchable)
			}
			// Every pod has its placement event, a batched one saying so.
			var events *v1.EventList
			err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
				var err error
				events, err = c.client.CoreV1().Events(c.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=NetworkPlacement"})
				return err == nil && len(events.Items) == burst+1, nil
			})
			if err != nil {
				t.Fatalf("placement events of %d pods: %v", burst+1, err)
			}
			reused := 0
			for _, e := range events.Items {
				if strings.Contains(e.Message, "ranking reused") {
					reused++
				}
				if e.Type != v1.EventTypeNormal || !strings.HasPrefix(e.Message, "Network-aware: ") {
					t.Errorf("placement event of %s: %s %q, want a Normal network-aware one", e.InvolvedObject.Name, e.Type, e.Message)
				}
			}
			if tc.batched != (reused > 0) {
				t.Errorf("%d of %d placement events say the ranking was reused", reused, len(events.Items))
			}
		})
	}
}

// A batch keeps every plugin of the profile. In the live control-plane
// install's profile (Background mode, so batching on; NetworkCapacity at
// weight 20 beside CustomScorePlugin's 10), a burst of pods that declare
// the same bandwidth is placed mostly from batches, whose re-score of the
// node the previous pod took must count that pod on its link. Two nodes
// have measured 100 Mbit/s links; node-a scores 0.9 on the simulator and
// node-b 0.1. Twenty pods declare 20 Mbit/s each: a link is full after
// five. Were NetworkCapacity left out of the batches' re-scores, the
// batches would rank by CustomScorePlugin alone and put nearly every pod
// on node-a; ranked by both, node-a loses pods to node-b once its room is
// under half node-b's, and no pod goes to a full link while the other has
// room. Once both are full, NetworkCapacity ranks them alike and the rest
// go by the simulator's scores, to node-a: the split is 15 to 5, not an
// even one.
func TestBatchesKeepNetworkCapacity(t *testing.T) {
	const burst, need, perLink = 20, "20M", 5 // 5 × 20 Mbit/s fill 100
	measured := time.Now().UTC().Format(time.RFC3339Nano)
	link := fmt.Sprintf(`"latency_ms": 0.2, "packet_loss": 0, "bandwidth_mbps": 100, "measured": {"bandwidth_mbps": {"value": 100, "low": 96, "high": 104, "samples": 5, "measured_at": %q}}`, measured)
	body := fmt.Sprintf(`{"window_seconds": 60, "source": "integration", "results": {"node-a": {"score": 0.9, %s}, "node-b": {"score": 0.1, %s}}}`, link, link)
	c := newClusterServing(t, body, schedulerOptions{config: liveControlPlaneConfig, clientQPS: 1000},
		nodeSpec{name: "node-a"}, nodeSpec{name: "node-b"})
	// One pod first, so that Background mode has its simulation; it is
	// counted at the default 10 Mbit/s on node-a.
	c.createPod(t, st.MakePod().Name("first"))
	if node := c.scheduled(t, "first"); node != "node-a" {
		t.Fatalf("first pod went to %s, want node-a, ranked first", node)
	}
	before := readBatchCounters(t, plugins.ProfileName)
	for i := range burst {
		c.createPod(t, st.MakePod().Name(fmt.Sprintf("p-%02d", i)).Annotation(networkcapacity.IngressBandwidthAnnotation, need))
	}
	placed := map[string]int{}
	for i := range burst {
		placed[c.scheduled(t, fmt.Sprintf("p-%02d", i))]++
	}
	batched := readBatchCounters(t, plugins.ProfileName).minus(before).hintUsed
	t.Logf("%d pods declaring %s: %v; %.0f placed by a batch's hint", burst, need, placed, batched)
	if batched == 0 {
		t.Fatalf("no pod of %d placed from a batch: the test checks nothing of batching", burst)
	}
	if placed["node-b"] < perLink {
		t.Errorf("node-b took %d pods, node-a %d: pods went to node-a's full link while node-b's had room for %d more",
			placed["node-b"], placed["node-a"], perLink-placed["node-b"])
	}
}
