//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/netshape"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/networkpeers"
	"kns3.dev/kns3/simulator/api"
)

// peerClients is how many clients each placement of the peers check
// creates.
const peerClients = 3

// peersGoNearTheirServer shapes the path between the plain and the
// rigorous worker alone (slow and lossy, both nodes otherwise healthy) and
// places a server on the rigorous worker; its clients, declared as its
// peers and free to go to the plain worker or the control plane, must all
// go to the control plane, whose path to the server is good, and kubectl
// kns3 explain, on the first client, ranks its node first by the same
// points, worked out from the published status. Then, with
// the server deleted, a new server and a client created in the same burst:
// the client sees the server the scheduler has just placed, and goes to
// the control plane too. Healed, the two paths tie again within two
// windows: a new client's NetworkPeers points are the same on both nodes.
func (c *cluster) peersGoNearTheirServer(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-peers")
	shape := pairShape
	shape.Peer, shape.PeerPods = c.nodeAddrs(ctx, c.rigorous)
	c.t.Cleanup(func() {
		if err := netshape.Clear(context.Background(), c.plain); err != nil {
			c.t.Error(err)
		}
	})
	if err := netshape.ApplyPairs(ctx, c.plain, []netshape.PairShape{shape}); err != nil {
		c.t.Fatal(err)
	}
	shaped := time.Now()
	cp := c.controlPlane(ctx)

	c.createPod(peerServer("server-1", c.rigorous))
	c.awaitPlaced(ctx, "server-1", c.rigorous)
	// The clients wait at a scheduling gate: pending, they make the plugin
	// tell the simulator the server's node matters, and its pairs are
	// measured directly, the shaped one with its loss.
	for i := range peerClients {
		c.createPod(peerClient(fmt.Sprintf("client-%d", i), c.plain, cp).SchedulingGates([]string{peersGate}))
	}
	r := c.awaitLive("the server's pairs measured directly, wholly after the shaping", func(r api.SimulationResponse) bool {
		bad, good := pairOf(r, c.plain, c.rigorous), pairOf(r, cp, c.rigorous)
		return pairWindowAfter(r, shaped) && bad != nil && good != nil && bad.PacketLoss != nil && good.PacketLoss != nil &&
			bad.PacketLoss.Value >= 0.02
	}, 3*twoWindows+30*time.Second)
	c.t.Logf("peers: to the server's node, %s: %s; %s: %s", c.plain, describePair(pairOf(r, c.plain, c.rigorous)), cp, describePair(pairOf(r, cp, c.rigorous)))
	for i := range peerClients {
		c.openGate(ctx, fmt.Sprintf("client-%d", i))
	}
	for i := range peerClients {
		name := fmt.Sprintf("client-%d", i)
		c.awaitPlaced(ctx, name, cp)
		c.t.Logf("%s: %s", name, c.placementEvent(name))
	}
	c.peersExplained("client-0", cp)

	// One burst: the server and a client together.
	c.deleteAll(ctx, "peers")
	c.createPod(peerServer("server-2", c.rigorous))
	c.createPod(peerClient("client-burst", c.plain, cp))
	c.awaitPlaced(ctx, "server-2", c.rigorous)
	c.awaitPlaced(ctx, "client-burst", cp)
	c.t.Logf("client-burst: %s", c.placementEvent("client-burst"))

	if err := netshape.Clear(ctx, c.plain); err != nil {
		c.t.Fatal(err)
	}
	healed := time.Now()
	c.awaitLive("the shaped pair without loss again, in a pair window wholly after healing", func(r api.SimulationResponse) bool {
		p := pairOf(r, c.plain, c.rigorous)
		return pairWindowAfter(r, healed) && p != nil && p.PacketLoss != nil && p.PacketLoss.Value < 0.01
	}, twoWindows+20*time.Second)
	if seen := time.Since(healed); seen > twoWindows+10*time.Second {
		c.t.Errorf("the healed pair read without loss %s after healing, want within two windows (%s)", seen.Round(time.Second), twoWindows)
	}
	c.createPod(peerClient("client-healed", c.plain, cp))
	if err := wait.For(conditions.PodScheduled(c.client, c.ns, "client-healed"), wait.WithContext(ctx),
		wait.WithInterval(500*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate()); err != nil {
		c.t.Fatalf("client-healed not scheduled: %v", err)
	}
	msg := c.placementEvent("client-healed")
	m := peersPoints.FindStringSubmatch(msg)
	if m == nil {
		c.t.Fatalf("client-healed's placement event names no NetworkPeers points: %q", msg)
	}
	here, there := mustAtoi(c, m[1]), mustAtoi(c, m[2])
	c.t.Logf("client-healed: NetworkPeers %d here and %d on the runner-up: %s", here, there, msg)
	if here != there {
		c.t.Errorf("healed, the plain worker and the control plane should tie for the server's client: NetworkPeers %d and %d", here, there)
	}
	c.deleteAll(ctx, "peers")
}

// peersExplained runs kubectl kns3 explain, in this process, on client
// (on node, near its server, the shaped pair still slow and lossy): worked
// out from the published status and the pods of the namespace, the node
// it ranks first is the client's, with NetworkPeers' score and what
// reaching the server costs in every candidate's row.
func (c *cluster) peersExplained(client, node string) {
	c.t.Helper()
	c.awaitPublished("the pairs to the server's node in the status", func(d schedstatus.ProfileStatus) bool {
		sim := d.Simulator.Simulation
		if sim == nil || sim.Pairs == nil {
			return false
		}
		measured := slices.ContainsFunc(sim.Pairs.Measured, func(p schedstatus.MeasuredPair) bool {
			return (p.From == c.rigorous || p.To == c.rigorous) && (p.From == node || p.To == node) && p.LatencyMs != nil
		})
		return slices.ContainsFunc(d.Scoring, func(p schedstatus.ScorePlugin) bool { return p.Name == networkpeers.Name }) && measured
	})
	e := c.explainJSON(c.env, client)
	if e.Peers == nil || len(e.Unrecomputed) != 0 || !slices.Contains(e.Peers.Hosts, output.PeerHost{Node: c.rigorous, Pods: 1}) {
		c.t.Errorf("explain %s: peers %+v, not worked out %q; want the server on %s, and NetworkPeers worked out", client, e.Peers, e.Unrecomputed, c.rigorous)
	}
	for _, r := range e.Nodes {
		if !r.Candidate() {
			continue
		}
		scored := slices.ContainsFunc(r.Scores, func(s output.PluginScore) bool { return s.Plugin == networkpeers.Name })
		if !scored || r.PeersCost == nil || !r.PeersCost.Known {
			c.t.Errorf("explain %s: candidate %s has NetworkPeers' score %t and cost %+v, want both", client, r.Node, scored, r.PeersCost)
		}
	}
	if own := rowOf(e, node); own.Rank != 1 {
		c.t.Errorf("explain %s ranks its node %s %d, want first; caveats %q; %s", client, node, own.Rank, e.Caveats, describeRows(e))
	}
	c.t.Logf("%s on %s: decided by %q (from %s) against %s; %s", client, node, e.DecidedBy, e.DecidedFrom, e.RunnerUp, describeRows(e))
	if out, err := kubectlKNS3(c.env, "explain", client, "-n", c.ns); err != nil {
		c.t.Errorf("kubectl kns3 explain %s: %v\n%s", client, err, out)
	} else if !strings.Contains(out, "PEERS COST") {
		c.t.Errorf("kubectl kns3 explain %s prints no PEERS COST column:\n%s", client, out)
	} else {
		c.t.Logf("kubectl kns3 explain %s:\n%s", client, out)
	}
}

// peersPoints reads NetworkPeers' points for the chosen node and the
// runner-up from a placement event's decision clause.
var peersPoints = regexp.MustCompile(networkpeers.Name + ` (\d+) and (\d+)`)

func mustAtoi(c *cluster, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// peersGate holds the peers check's first clients back until the pairs
// they will be placed by are measured.
const peersGate = "kns3.dev/e2e-peers"

// openGate removes pod name's scheduling gates.
func (c *cluster) openGate(ctx context.Context, name string) {
	c.t.Helper()
	pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	pod.Spec.SchedulingGates = nil
	if _, err := c.client.CoreV1().Pods(c.ns).Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		c.t.Fatalf("opening %s's scheduling gate: %v", name, err)
	}
}

// peerServer is the peers check's server, held to node.
func peerServer(name, node string) *st.PodWrapper {
	return st.MakePod().Name(name).Label("peers", "server").
		NodeAffinityIn(v1.LabelHostname, []string{node}, st.NodeSelectorTypeMatchExpressions)
}

// peerClient is a client of the peers check's server, declared as its
// peer, free to go to the nodes named (the control plane's taint
// tolerated).
func peerClient(name string, nodes ...string) *st.PodWrapper {
	return st.MakePod().Name(name).Label("peers", "client").
		Annotation(networkpeers.PeersAnnotation, "peers=server").
		Annotation(networkpeers.PeerTrafficAnnotation, "10M").
		NodeAffinityIn(v1.LabelHostname, nodes, st.NodeSelectorTypeMatchExpressions).
		Toleration("node-role.kubernetes.io/control-plane")
}

// awaitPlaced waits until pod name is bound, and fails the check unless it
// is on want.
func (c *cluster) awaitPlaced(ctx context.Context, name, want string) {
	c.t.Helper()
	if err := wait.For(conditions.PodScheduled(c.client, c.ns, name), wait.WithContext(ctx),
		wait.WithInterval(500*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate()); err != nil {
		c.t.Fatalf("%s not scheduled: %v", name, err)
	}
	pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	if pod.Spec.NodeName != want {
		c.t.Errorf("%s is on %s, want %s: %s", name, pod.Spec.NodeName, want, c.placementEvent(name))
	}
}

// controlPlane is the name of the cluster's control-plane node.
func (c *cluster) controlPlane(ctx context.Context) string {
	c.t.Helper()
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil || len(nodes.Items) != 1 {
		c.t.Fatalf("the control-plane node: %v (%d found)", err, len(nodes.Items))
	}
	return nodes.Items[0].Name
}
