package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/networkpeers"
	"kns3.dev/kns3/test/pairs"
)

// peersScenario ranks node-c first by its own measurements, and node-b
// before node-a; every link has room.
const peersScenario = `nodes:
  node-a: {score: 0.5, bandwidth_mbps: 1000}
  node-b: {score: 0.6, bandwidth_mbps: 1000}
  node-c: {score: 0.9, bandwidth_mbps: 1000}
`

// threePairs are the three nodes' pairs: close by their coordinates, and
// measured directly, node-a–node-c slow and lossy (5 ms, 4 % loss), the
// others 0.1 ms. A window of a second paces the scheduler's interest.
func threePairs([]string) *pairs.Answer {
	return &pairs.Answer{
		WindowSeconds: 1,
		Coordinates:   map[string]pairs.Coordinate{"node-a": pairs.At(0), "node-b": pairs.At(0.1), "node-c": pairs.At(0.15)},
		Measured: []pairs.Pair{
			pairs.Measured("node-a", "node-b", 0.1, 0),
			pairs.Measured("node-a", "node-c", 5, 0.04),
			pairs.Measured("node-b", "node-c", 0.1, 0),
		},
	}
}

// The live profile places the clients of a server near it: the server is
// held to node-a, and its clients, which declare it as their peer, go to a
// node with a good pair to it (node-b ties with node-a itself, and ranks
// better on its own), never to node-c, whose own measurements rank it
// first but whose pair to node-a is slow and lossy. A client created in
// the same burst as its server, right after it, sees it as the scheduler
// placed it, and goes there too. The scheduler tells the simulator that
// node-a's pairs matter, and each client's placement event says where its
// peers are.
func TestPeersGoNearTheirServer(t *testing.T) {
	c := newCluster(t, peersScenario, schedulerOptions{config: liveConfig, pairs: threePairs},
		nodeSpec{name: "node-a"}, nodeSpec{name: "node-b"}, nodeSpec{name: "node-c"})
	onA := map[string]string{labelHost: "node-a"}
	c.createPod(t, st.MakePod().Name("server").Label("app", "server").NodeSelector(onA))
	if node := c.scheduled(t, "server"); node != "node-a" {
		t.Fatalf("server went to %s, want node-a, where it is held", node)
	}
	// Without peers, a pod goes where the measurements rank a node first.
	c.createPod(t, st.MakePod().Name("loner"))
	if node := c.scheduled(t, "loner"); node != "node-c" {
		t.Fatalf("a pod without peers went to %s, want node-c, ranked first", node)
	}
	clients := []string{"client-0", "client-1", "client-2"}
	for _, name := range clients {
		c.createPod(t, st.MakePod().Name(name).Label("app", "client").Annotation(networkpeers.PeersAnnotation, "app=server"))
	}
	// The burst: a second server and, right after it, its client.
	c.createPod(t, st.MakePod().Name("store").Label("app", "store").NodeSelector(onA))
	c.createPod(t, st.MakePod().Name("store-client").Annotation(networkpeers.PeersAnnotation, "app=store"))
	for _, name := range append(clients, "store-client") {
		if node := c.scheduled(t, name); node != "node-a" && node != "node-b" {
			t.Errorf("%s went to %s, whose pair to its server's node-a is slow and lossy; want node-a or node-b", name, node)
		}
	}
	if node := c.scheduled(t, "store"); node != "node-a" {
		t.Errorf("store went to %s, want node-a, where it is held", node)
	}

	msg := placementMessage(t, c, "client-0")
	if !strings.Contains(msg, "peers: 1 ") || !strings.Contains(msg, "node-a") {
		t.Errorf("client-0's placement event %q does not say where its peer is", msg)
	}
	if !strings.Contains(msg, "NetworkPeers 2000") {
		t.Errorf("client-0's placement event %q does not weigh NetworkPeers' points (2000 on a node tied with its peer's)", msg)
	}
	t.Logf("client-0's placement event: %s", msg)

	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		return slices.ContainsFunc(c.sim.pairs.Interests(), func(nodes []string) bool { return slices.Contains(nodes, "node-a") }), nil
	})
	if err != nil {
		t.Errorf("the scheduler told the simulator %q, never that node-a's pairs matter: %v", c.sim.pairs.Interests(), err)
	}
}

// placementMessage waits for pod's NetworkPlacement event and returns its
// message.
func placementMessage(t *testing.T, c *cluster, pod string) string {
	t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		events, err := c.client.CoreV1().Events(c.ns).List(ctx, metav1.ListOptions{
			FieldSelector: fmt.Sprintf("reason=NetworkPlacement,involvedObject.name=%s", pod)})
		if err != nil || len(events.Items) == 0 {
			return false, nil
		}
		e := events.Items[0]
		if e.Type != v1.EventTypeNormal {
			return false, fmt.Errorf("placement event of %s is %s", pod, e.Type)
		}
		msg = e.Message
		return true, nil
	})
	if err != nil {
		t.Fatalf("no placement event of %s: %v", pod, err)
	}
	return msg
}
