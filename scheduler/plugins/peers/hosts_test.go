package peers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// peer is a pod of namespace default labeled app=label on node.
func peer(name, label, node string) *v1.Pod {
	return st.MakePod().Name(name).Namespace("default").UID(name).Label("app", label).Node(node).Obj()
}

func TestTally(t *testing.T) {
	sel := func(s string) []labels.Selector {
		parsed, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return []labels.Selector{parsed}
	}
	leaving := peer("s9", "server", "b")
	leaving.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	finished := peer("s8", "server", "c")
	finished.Status.Phase = v1.PodSucceeded
	elsewhere := peer("s7", "server", "c")
	elsewhere.Namespace = "other"
	self := client("c1", nil)
	self.Labels = map[string]string{"app": "client"}
	self.Spec.NodeName = "b"
	pods := []*v1.Pod{
		peer("s1", "server", "a"), peer("s2", "server", "a"), peer("d1", "db", "a"),
		// The pod itself, as a preemption's dry run may hold it.
		peer("s3", "server", "b"), leaving, self,
		peer("d2", "db", "c"), finished, elsewhere,
	}
	for _, tc := range []struct {
		name        string
		groups      []Group
		want        []Host
		wantCounted []string
	}{{
		name:        "one group: hosts by their share of its pods",
		groups:      []Group{{Selectors: sel("app=server")}},
		want:        []Host{{Node: "a", Pods: 2, Weight: 2.0 / 3}, {Node: "b", Pods: 1, Weight: 1.0 / 3}},
		wantCounted: []string{"s1", "s2", "s3"},
	}, {
		// The servers take 90 Mbit/s, 30 for each; the databases 10, 5 each.
		name:   "two groups by their traffic",
		groups: []Group{{Selectors: sel("app=server"), TrafficMbps: 90}, {Selectors: sel("app=db"), TrafficMbps: 10}},
		want: []Host{
			{Node: "a", Pods: 3, Weight: 0.65, TrafficMbps: 65},
			{Node: "b", Pods: 1, Weight: 0.30, TrafficMbps: 30},
			{Node: "c", Pods: 1, Weight: 0.05, TrafficMbps: 5},
		},
		wantCounted: []string{"s1", "s2", "d1", "s3", "d2"},
	}, {
		// The databases weigh as the mean declared traffic, 90, as much
		// as the servers: a 60 + 45 of 180, b 30, c 45.
		name:   "a group without traffic weighs as the mean declared",
		groups: []Group{{Selectors: sel("app=server"), TrafficMbps: 90}, {Selectors: sel("app=db")}},
		want: []Host{
			{Node: "a", Pods: 3, Weight: 105.0 / 180, TrafficMbps: 60},
			{Node: "b", Pods: 1, Weight: 30.0 / 180, TrafficMbps: 30},
			{Node: "c", Pods: 1, Weight: 45.0 / 180},
		},
		wantCounted: []string{"s1", "s2", "d1", "s3", "d2"},
	}, {
		name:   "the pod itself is not its own peer",
		groups: []Group{{Selectors: sel("app")}},
		want: []Host{
			{Node: "a", Pods: 3, Weight: 0.6},
			{Node: "b", Pods: 1, Weight: 0.2},
			{Node: "c", Pods: 1, Weight: 0.2},
		},
		wantCounted: []string{"s1", "s2", "d1", "s3", "d2"},
	}, {
		name:   "no pod matches",
		groups: []Group{{Selectors: sel("app=search")}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tally := NewTally(self, &Declaration{Groups: tc.groups})
			var counted []string
			for _, p := range pods {
				if tally.Add(p.Spec.NodeName, p) {
					counted = append(counted, p.Name)
				}
			}
			got := tally.Hosts()
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateComparable(network.Node{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Hosts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCounted, counted); diff != "" {
				t.Errorf("Add counted (-want +got):\n%s", diff)
			}
			if n := PeerCount(got); n != len(tc.wantCounted) {
				t.Errorf("PeerCount = %d, want %d", n, len(tc.wantCounted))
			}
		})
	}
	if hosts := NewTally(self, nil).Hosts(); hosts != nil {
		t.Errorf("no declaration: hosts %v, want none", hosts)
	}
}
