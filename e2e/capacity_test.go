//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/simulator/api"
)

// capacityShape is what both schedulable workers' links are shaped to for
// the burst: ten pods declaring 20 Mbit/s each fill both twice over.
var capacityShape = netshape.Shape{RateMbit: 100}

// linkBurstPods is how many pods the burst creates, each declaring linkBurstMbit.
const (
	linkBurstPods = 10
	linkBurstMbit = "20M"
)

// countedFor reads what a placement event says was counted against the
// node's link: "N Mbit/s counted for K pods".
var countedFor = regexp.MustCompile(`(\d+) Mbit/s counted for (\d+) pods?\b`)

// burstSpreadsOverLinks shapes the rigorous and the plain worker to
// 100 Mbit/s each and, once both are measured at it, creates ten pods
// declaring 20 Mbit/s in one burst, held to the two workers: the pods of
// the burst see each other, so neither link takes more than six (five
// fill it), and the placement events say what was counted.
func (c *cluster) burstSpreadsOverLinks(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-capacity")
	workers := c.shapeWorkersTo(ctx, capacityShape)

	names := make([]string, linkBurstPods)
	for i := range linkBurstPods {
		names[i] = fmt.Sprintf("burst-%d", i)
		p := st.MakePod().Name(names[i]).Annotation("kubernetes.io/ingress-bandwidth", linkBurstMbit).
			NodeAffinityIn(v1.LabelHostname, workers, st.NodeSelectorTypeMatchExpressions)
		c.createPod(p)
	}
	perNode := map[string]int{}
	mostCounted := 0
	var event string
	for _, name := range names {
		node := c.scheduled(name)
		perNode[node]++
		event = c.placementEvent(name)
		if m := countedFor.FindStringSubmatch(event); m != nil {
			n, _ := strconv.Atoi(m[2])
			mostCounted = max(mostCounted, n)
		} else {
			c.t.Errorf("%s's placement event says nothing counted against %s's link: %q", name, node, event)
		}
	}
	c.t.Logf("burst of %d pods declaring %s: %v; at most %d pods counted against one link; the last placement event: %q",
		linkBurstPods, linkBurstMbit, perNode, mostCounted, event)
	for _, w := range workers {
		if perNode[w] > 6 {
			c.t.Errorf("%s took %d of the %d pods, want at most 6: %v", w, perNode[w], linkBurstPods, perNode)
		}
	}
	if mostCounted == 0 {
		c.t.Error("no placement event counted a pod of the burst: the pods did not see each other")
	}
	c.deleteAll(ctx, "")
}

// streamMbpsAtLeast is the link use at which a stream counts as filling a
// 100 Mbit/s link.
const streamMbpsAtLeast = 50

// streamMovesNewPods runs, with both workers still shaped to 100 Mbit/s,
// a real stream onto the plain worker's link: a netbench client there
// fetching large objects from a server on the control-plane node as fast
// as it can. Within two windows the simulator serves the plain worker's
// link use (its agent reads the node's own counters), and a new pod
// declaring 20 Mbit/s, held to the two workers, goes to the idle rigorous
// one.
func (c *cluster) streamMovesNewPods(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-stream")
	c.shapeWorkersTo(ctx, capacityShape)
	server := c.netbenchServer(ctx)
	stream := netbenchPod("stream", "", []string{"client", server, "--duration=120s",
		"--object-bytes=16777216", "--objects-per-second=100"})
	stream.Spec.NodeName = c.plain
	if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, stream, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	c.awaitRunning(ctx, stream.Name)
	started := time.Now()
	use := func(r api.SimulationResponse, node string) float64 {
		if m := r.Results[node].Measured; m != nil && m.LinkUseMbps != nil {
			return m.LinkUseMbps.Value
		}
		return -1
	}
	r := c.awaitLive(fmt.Sprintf("%s's link use at %d Mbit/s or more", c.plain, streamMbpsAtLeast), func(r api.SimulationResponse) bool {
		return use(r, c.plain) >= streamMbpsAtLeast
	}, twoWindows+20*time.Second)
	seen := time.Since(started)
	c.t.Logf("stream onto %s: link use served %.1fs after it started: %s %.1f Mbit/s, %s %.1f Mbit/s; %s",
		c.plain, seen.Seconds(), c.plain, use(r, c.plain), c.rigorous, use(r, c.rigorous), describeResults(r.Results))
	if seen > twoWindows+probeTimeout+5*time.Second {
		c.t.Errorf("%s's link use served %.1fs after the stream started, want within two windows", c.plain, seen.Seconds())
	}
	bound := map[string]string{}
	c.expectPlaced(bound, st.MakePod().Name("beside-stream").Annotation("kubernetes.io/ingress-bandwidth", linkBurstMbit).
		NodeAffinityIn(v1.LabelHostname, []string{c.rigorous, c.plain}, st.NodeSelectorTypeMatchExpressions),
		c.rigorous, c.plain+"'s link carries a stream")
	c.t.Logf("beside-stream: %s", c.placementEvent("beside-stream"))
	c.deleteAll(ctx, "")
}

// shapeWorkersTo shapes the rigorous and the plain worker's links to shape
// until the test ends, waits until both are measured at it (± 30 %, not a
// lower bound) in a window wholly after, and returns the two.
func (c *cluster) shapeWorkersTo(ctx context.Context, shape netshape.Shape) []string {
	c.t.Helper()
	workers := []string{c.rigorous, c.plain}
	c.t.Cleanup(func() {
		for _, w := range workers {
			if err := netshape.Clear(context.Background(), w); err != nil {
				c.t.Error(err)
			}
		}
	})
	for _, w := range workers {
		if err := netshape.Apply(ctx, w, shape); err != nil {
			c.t.Fatal(err)
		}
	}
	shaped := time.Now()
	measured := func(r api.SimulationResponse) bool {
		for _, w := range workers {
			m, ok := r.Results[w]
			if !ok || m.Measured == nil || m.Measured.BandwidthMbps == nil || m.Measured.BandwidthMbps.AtLeast ||
				math.Abs(m.Measured.BandwidthMbps.Value-shape.RateMbit) > 0.3*shape.RateMbit {
				return false
			}
		}
		return windowAfter(r, shaped)
	}
	r := c.awaitLive("both workers measured at their shaped rate", measured, twoWindows+20*time.Second)
	c.t.Logf("shaped both workers to %s: %s", shape, describeResults(r.Results))
	return workers
}
