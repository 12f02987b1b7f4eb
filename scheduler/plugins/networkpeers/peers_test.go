package networkpeers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

func TestFindPeers(t *testing.T) {
	sel := func(s string) []labels.Selector {
		parsed, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return []labels.Selector{parsed}
	}
	leaving := peer("s9", "server", "b")
	leaving.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	self := client("c1", nil)
	self.Labels = map[string]string{"app": "client"}
	nodes := []fwk.NodeInfo{
		nodeInfo("a", peer("s1", "server", "a"), peer("s2", "server", "a"), peer("d1", "db", "a")),
		// The pod itself, as a preemption's dry run may hold it.
		nodeInfo("b", peer("s3", "server", "b"), leaving, self),
		nodeInfo("c", peer("d2", "db", "c")),
	}
	for _, tc := range []struct {
		name   string
		groups []group
		want   []peerHost
	}{{
		name:   "one group: hosts by their share of its pods",
		groups: []group{{selectors: sel("app=server")}},
		want:   []peerHost{{node: "a", pods: 2, weight: 2.0 / 3}, {node: "b", pods: 1, weight: 1.0 / 3}},
	}, {
		// The servers take 90 Mbit/s, 30 for each; the databases 10, 5 each.
		name:   "two groups by their traffic",
		groups: []group{{selectors: sel("app=server"), trafficMbps: 90}, {selectors: sel("app=db"), trafficMbps: 10}},
		want: []peerHost{
			{node: "a", pods: 3, weight: 0.65, trafficMbps: 65},
			{node: "b", pods: 1, weight: 0.30, trafficMbps: 30},
			{node: "c", pods: 1, weight: 0.05, trafficMbps: 5},
		},
	}, {
		// The databases weigh as the mean declared traffic, 90, as much
		// as the servers: a 60 + 45 of 180, b 30, c 45.
		name:   "a group without traffic weighs as the mean declared",
		groups: []group{{selectors: sel("app=server"), trafficMbps: 90}, {selectors: sel("app=db")}},
		want: []peerHost{
			{node: "a", pods: 3, weight: 105.0 / 180, trafficMbps: 60},
			{node: "b", pods: 1, weight: 30.0 / 180, trafficMbps: 30},
			{node: "c", pods: 1, weight: 45.0 / 180},
		},
	}, {
		name:   "the pod itself is not its own peer",
		groups: []group{{selectors: sel("app")}},
		want: []peerHost{
			{node: "a", pods: 3, weight: 0.6},
			{node: "b", pods: 1, weight: 0.2},
			{node: "c", pods: 1, weight: 0.2},
		},
	}, {
		name:   "no pod matches",
		groups: []group{{selectors: sel("app=search")}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := findPeers(nodes, self, &declaration{groups: tc.groups})
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(peerHost{}), cmpopts.EquateComparable(network.Node{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("findPeers (-want +got):\n%s", diff)
			}
		})
	}
}
