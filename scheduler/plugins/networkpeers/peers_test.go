package networkpeers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
)

// TestFindPeers: the snapshot's pods, node by node, are tallied
// (peers.Tally has the table of what counts and how it weighs); a node
// info without its node is passed over.
func TestFindPeers(t *testing.T) {
	self := client("c1", peersOf("app=server"))
	d, err := peers.FromAnnotations(self)
	if err != nil {
		t.Fatal(err)
	}
	nodes := []fwk.NodeInfo{
		nodeInfo("a", peer("s1", "server", "a"), peer("s2", "server", "a"), peer("d1", "db", "a")),
		nodeInfo("b", peer("s3", "server", "b")),
		framework.NewNodeInfo(peer("s4", "server", "gone")),
	}
	want := []peers.Host{{Node: "a", Pods: 2, Weight: 2.0 / 3}, {Node: "b", Pods: 1, Weight: 1.0 / 3}}
	got := findPeers(nodes, self, d)
	if diff := cmp.Diff(want, got, cmpopts.EquateComparable(network.Node{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("findPeers (-want +got):\n%s", diff)
	}
	if got := findPeers(nodes, self, nil); got != nil {
		t.Errorf("findPeers without a declaration: %v, want none", got)
	}
}
