package networkpeers

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// busyPair is threeNodes with the a–c pair's 100 Mbit/s measured, and c's
// link carrying 50 Mbit/s: 50 free between a and c.
func busyPair(atLeast bool) []byte {
	measured := pair("a", "c", 5, 0.04, 100)
	if atLeast {
		measured = strings.Replace(measured, `"samples": 3, `, `"samples": 3, "at_least": true, `, 1)
	}
	return answerWithUse(map[string]at{"a": {0, 0.05}, "b": {0.1, 0.05}, "c": {5, 0.05}}, map[string]float64{"c": 50}, measured)
}

func TestFilter(t *testing.T) {
	traffic := func(q string) map[string]string {
		return map[string]string{PeersAnnotation: "app=server", PeerTrafficAnnotation: q}
	}
	for _, tc := range []struct {
		name     string
		body     []byte
		pod      *v1.Pod
		rejected []string // nil with skip: PreFilter skips
		skip     bool
	}{
		{name: "a pair with less free bandwidth than the traffic", body: busyPair(false), pod: client("c1", traffic("60M")), rejected: []string{"a"}},
		{name: "a pair with room", body: busyPair(false), pod: client("c1", traffic("40M"))},
		{name: "a pair known only as at least some bandwidth passes", body: busyPair(true), pod: client("c1", traffic("60M"))},
		{name: "no traffic declared", body: busyPair(false), pod: client("c1", peersOf("app=server")), skip: true},
		{name: "no peer placed", body: busyPair(false), pod: client("c1", map[string]string{PeersAnnotation: "app=search", PeerTrafficAnnotation: "60M"}), skip: true},
		{name: "no simulation held", pod: client("c1", traffic("60M")), skip: true},
		{name: "no pairs held", body: []byte(`{"results": {"a": {"score": 1}}}`), pod: client("c1", traffic("60M")), skip: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []fwk.NodeInfo{nodeInfo("a"), nodeInfo("b"), nodeInfo("c", peer("s1", "server", "c"))}
			pl := newPlugin(t, nodes...)
			ctx := context.Background()
			state := stateWith(tc.body)
			_, s := pl.PreFilter(ctx, state, tc.pod, nodes)
			if s.IsSkip() != tc.skip || (!s.IsSkip() && !s.IsSuccess()) {
				t.Fatalf("PreFilter: %v, want skip: %t", s, tc.skip)
			}
			if tc.skip {
				return
			}
			var rejected []string
			for _, n := range nodes {
				switch s := pl.Filter(ctx, state, tc.pod, n); {
				case s.Code() == fwk.Unschedulable && s.Message() == ErrReasonPeersBandwidth:
					rejected = append(rejected, n.Node().Name)
				case !s.IsSuccess():
					t.Errorf("Filter(%s): %v", n.Node().Name, s)
				}
			}
			if strings.Join(rejected, ",") != strings.Join(tc.rejected, ",") {
				t.Errorf("rejected %v, want %v", rejected, tc.rejected)
			}
		})
	}
}

// A warming-up simulator's answer filters nothing.
func TestFilterSkipsWarmUp(t *testing.T) {
	nodes := []fwk.NodeInfo{nodeInfo("a"), nodeInfo("c", peer("s1", "server", "c"))}
	pl := newPlugin(t, nodes...)
	state := framework.NewCycleState()
	network.WriteHeld(state, &network.Simulation{Body: busyPair(false), WarmUp: &network.WarmUp{MeasuredInFull: 1, Nodes: 3, Quorum: 0.5}})
	pod := client("c1", map[string]string{PeersAnnotation: "app=server", PeerTrafficAnnotation: "60M"})
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); !s.IsSkip() {
		t.Errorf("PreFilter on a warming-up answer: %v, want Skip", s)
	}
}

func TestFilterWithoutPreFilter(t *testing.T) {
	pl := newPlugin(t)
	s := pl.Filter(context.Background(), framework.NewCycleState(), client("c1", nil), nodeInfo("a"))
	if s.Code() != fwk.Error || !strings.Contains(s.Message(), "preFilter") {
		t.Errorf("Filter without PreFilter's state: %v, want an error naming preFilter", s)
	}
}

// Score counts the share of the pair's free bandwidth the traffic would
// take, and the note says it: 60 of 50 Mbit/s free, counted at 90 %, ten
// times the round trip.
func TestScoreCountsTheTrafficShare(t *testing.T) {
	nodes := []fwk.NodeInfo{nodeInfo("a"), nodeInfo("b"), nodeInfo("c", peer("s1", "server", "c"))}
	pl := newPlugin(t, nodes...)
	_, state := scoreCycle(t, pl, busyPair(false), client("c1", map[string]string{PeersAnnotation: "app=server", PeerTrafficAnnotation: "60M"}), nodes)
	want := "peers: 1 on c (measured 5 ms, 4 % loss, traffic 120 % of its free bandwidth); cost 58 ms, lowest 0 ms"
	if got := strings.Join(placement.Notes(state, "a"), "; "); got != want {
		t.Errorf("note on a:\n got %q\nwant %q", got, want)
	}
}

func TestIsPeerChange(t *testing.T) {
	pl := newPlugin(t)
	waiting := client("c1", peersOf("app=server"))
	server := peer("s1", "server", "a")
	relabeled := server.DeepCopy()
	relabeled.Labels = map[string]string{"app": "retired"}
	elsewhere := st.MakePod().Name("s2").Namespace("other").Label("app", "server").Node("a").Obj()
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		old, new any
		want     fwk.QueueingHint
	}{
		{"a peer placed", waiting, nil, server, fwk.Queue},
		{"a peer gone", waiting, server, nil, fwk.Queue},
		{"a peer relabeled away", waiting, server, relabeled, fwk.Queue},
		{"another pod", waiting, nil, relabeled, fwk.QueueSkip},
		{"a pod of another namespace", waiting, nil, elsewhere, fwk.QueueSkip},
		{"a pod that declares no peers", client("c2", nil), nil, server, fwk.QueueSkip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isPeerChange(klog.Background(), tc.pod, tc.old, tc.new)
			if err != nil || got != tc.want {
				t.Errorf("isPeerChange = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
