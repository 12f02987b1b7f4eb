package networkpeers

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/placement"
)

func TestScoresCostToPeers(t *testing.T) {
	slow := answer(map[string]at{"a": {0, 0.05}, "b": {0.1, 0.05}, "c": {5, 0.05}, "d": {1, 0.05}},
		pair("a", "c", 5, 0.04, 0))
	tests := []struct {
		name  string
		body  []byte
		pod   *v1.Pod
		nodes []fwk.NodeInfo
		want  map[string]int64 // nil: PreScore skips
	}{{
		// a: 0 on the server's node; b: 0.1 ms, within 0.2 ms of it, ties;
		// c: 5 ms measured, plus 4 % of 200 ms for its loss.
		name:  "the pair to the server's node ranks the nodes; a pair within the smallest difference ties",
		body:  threeNodes(),
		pod:   client("c1", peersOf("app=server")),
		nodes: []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a")), nodeInfo("b"), nodeInfo("c")},
		want:  map[string]int64{"a": 100, "b": 100, "c": 1},
	}, {
		// Costs, half each: a (0 + 13) / 2, b (0.1 + 4.9) / 2 by the
		// coordinates, c (13 + 0) / 2. a and c cost the same: 100 − 100 ×
		// (6.5 − 2.5) / 6.5.
		name: "two peers on two nodes: the node between them, equal costs equal scores",
		body: threeNodes(),
		pod:  client("c1", peersOf("app=server")),
		nodes: []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a")), nodeInfo("b"),
			nodeInfo("c", peer("s2", "server", "c"))},
		want: map[string]int64{"a": 38, "b": 100, "c": 38},
	}, {
		name:  "a node without a coordinate is never the best, and scores below every known cost",
		body:  slow,
		pod:   client("c1", peersOf("app=server")),
		nodes: []fwk.NodeInfo{nodeInfo("a"), nodeInfo("c", peer("s1", "server", "c")), nodeInfo("x")},
		want:  map[string]int64{"a": 1, "c": 100, "x": 0},
	}, {
		// The client pod and the servers are in another namespace, or
		// finished: no peer is placed.
		name:  "pods of other namespaces and finished pods are no peers",
		body:  threeNodes(),
		pod:   client("c1", peersOf("app=server")),
		nodes: []fwk.NodeInfo{nodeInfo("a", st.MakePod().Name("s1").Namespace("other").Label("app", "server").Node("a").Obj()), nodeInfo("b", finished(peer("s2", "server", "b")))},
	}, {
		name:  "a pod without peers skips",
		body:  threeNodes(),
		pod:   client("c1", nil),
		nodes: []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a")), nodeInfo("b")},
	}, {
		name:  "an answer without pairs skips",
		body:  []byte(`{"results": {"a": {"score": 1}, "b": {"score": 1}}}`),
		pod:   client("c1", peersOf("app=server")),
		nodes: []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a")), nodeInfo("b")},
	}, {
		name:  "no simulation skips",
		pod:   client("c1", peersOf("app=server")),
		nodes: []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a")), nodeInfo("b")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, tc.nodes...)
			got, state := scoreCycle(t, pl, tc.body, tc.pod, tc.nodes)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			// The placement event weighs what NormalizeScore left.
			if points, ok := placement.ReadPoints(state, Name); ok != (tc.want != nil) || (ok && !cmp.Equal(points, got)) {
				t.Errorf("points left for the placement event: %v (%t), want %v", points, ok, got)
			}
		})
	}
}

// When no feasible node's cost is known, PreScore skips (every node would
// score 0), and the note still says where the peers are.
func TestEveryCostUnknown(t *testing.T) {
	snapshot := []fwk.NodeInfo{nodeInfo("a"), nodeInfo("b", peer("s1", "server", "b")), nodeInfo("x")}
	pl := newPlugin(t, snapshot...)
	state := stateWith(answer(map[string]at{"a": {0, 0.1}}))
	if s := pl.PreScore(context.Background(), state, client("c1", peersOf("app=server")), []fwk.NodeInfo{snapshot[0], snapshot[2]}); !s.IsSkip() {
		t.Errorf("PreScore: %v, want Skip", s)
	}
	if got, want := strings.Join(placement.Notes(state, "a"), "; "), "peers: 1 on b (not measured); cost unknown"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

func finished(p *v1.Pod) *v1.Pod {
	p.Status.Phase = v1.PodSucceeded
	return p
}

// The pods of one burst see each other: a server the scheduler placed and
// has not bound (on a in its snapshot, and nowhere in the API server's
// view) draws its client, and a second client follows the first server
// once both are in the snapshot.
func TestBurstSeesItsOwnPods(t *testing.T) {
	body := threeNodes()
	nodes := []fwk.NodeInfo{nodeInfo("a"), nodeInfo("b"), nodeInfo("c")}
	pl := newPlugin(t, nodes...)
	if got, _ := scoreCycle(t, pl, body, client("c1", peersOf("app=server")), nodes); got != nil {
		t.Fatalf("before the server is placed: scores %v, want PreScore to skip", got)
	}
	// The scheduler assumes the server on c: its cache's NodeInfo holds it.
	nodes[2].(*framework.NodeInfo).AddPod(peer("s1", "server", "c"))
	got, _ := scoreCycle(t, pl, body, client("c1", peersOf("app=server")), nodes)
	if want := map[string]int64{"a": 1, "b": 62, "c": 100}; !cmp.Equal(want, got) {
		// b: 4.9 ms by the coordinates; a: 5 ms + 8 ms for its loss.
		t.Errorf("with the server assumed on c: scores %v, want %v", got, want)
	}
}

func TestNodeNote(t *testing.T) {
	nodes := []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a"), peer("s2", "server", "a")), nodeInfo("b"),
		nodeInfo("c", peer("s3", "server", "c"))}
	pl := newPlugin(t, nodes...)
	_, state := scoreCycle(t, pl, threeNodes(), client("c1", peersOf("app=server")), nodes)
	for node, want := range map[string]string{
		"a": "peers: 2 on this node, 1 on c (measured 5 ms, 4 % loss); cost 4.3 ms, lowest 1.7 ms",
		"b": "peers: 2 on a (0.1 ms), 1 on c (4.9 ms); cost 1.7 ms, lowest 1.7 ms",
		"z": "",
	} {
		if got := strings.Join(placement.Notes(state, node), "; "); got != want {
			t.Errorf("note on %s:\n got %q\nwant %q", node, got, want)
		}
	}
}

func TestNodeNoteIsShort(t *testing.T) {
	var nodes []fwk.NodeInfo
	coords := map[string]at{}
	for i, name := range []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"} {
		nodes = append(nodes, nodeInfo(name, peer("s"+name, "server", name)))
		coords[name] = at{float64(i), 0.1}
	}
	pl := newPlugin(t, nodes...)
	_, state := scoreCycle(t, pl, answer(coords), client("c1", peersOf("app=server")), nodes)
	got := strings.Join(placement.Notes(state, "n1"), "; ")
	if want := "3 more on 3 nodes"; !strings.Contains(got, want) || len(got) > 200 {
		t.Errorf("note %q (%d bytes): want four nodes named, then %q", got, len(got), want)
	}
}

func TestInvalidDeclarationWarnsOnce(t *testing.T) {
	nodes := []fwk.NodeInfo{nodeInfo("a", peer("s1", "server", "a")), nodeInfo("b")}
	pl := newPlugin(t, nodes...)
	recorder := events.NewFakeRecorder(10)
	pl.recorder = recorder
	pod := client("c1", map[string]string{PeersAnnotation: "app=server", PeerTrafficAnnotation: "lots"})
	state := stateWith(threeNodes())
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); !s.IsSkip() {
		t.Errorf("PreFilter: %v, want Skip", s)
	}
	if s := pl.PreScore(context.Background(), state, pod, nodes); !s.IsSkip() {
		t.Errorf("PreScore: %v, want Skip: scheduled as if it declared no peers", s)
	}
	close(recorder.Events)
	var got []string
	for e := range recorder.Events {
		got = append(got, e)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "Warning "+ReasonInvalidPeers+" annotation "+PeerTrafficAnnotation) ||
		!strings.Contains(got[0], "scheduled as if it declared no peers") {
		t.Errorf("events %q, want one Warning %s naming the annotation", got, ReasonInvalidPeers)
	}
}

func TestSignPod(t *testing.T) {
	pl := newPlugin(t)
	sign := func(pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
		return pl.SignPod(context.Background(), pod)
	}
	plain, s := sign(client("p1", nil))
	if s != nil {
		t.Fatalf("a pod without peers: %v, want it signable", s)
	}
	for _, f := range plain {
		if f.Value != "" {
			t.Errorf("a pod without peers signs %s as %q: its namespace and labels must not split its batches", f.Key, f.Value)
		}
	}
	c1, s1 := sign(st.MakePod().Name("c1").Namespace("default").Label("app", "client").Annotation(PeersAnnotation, "app=server").Obj())
	c2, s2 := sign(st.MakePod().Name("c2").Namespace("default").Label("app", "client").Annotation(PeersAnnotation, "app=server").Obj())
	other, _ := sign(st.MakePod().Name("c3").Namespace("other").Label("app", "client").Annotation(PeersAnnotation, "app=server").Obj())
	if s1 != nil || s2 != nil || !cmp.Equal(c1, c2) {
		t.Errorf("two clients of one server: %v %v, %v %v, want equal signatures", c1, s1, c2, s2)
	}
	if cmp.Equal(c1, other) {
		t.Errorf("clients of two namespaces sign alike (%v): their peers differ", c1)
	}
	if _, s := sign(st.MakePod().Name("w1").Namespace("default").Label("app", "web").Annotation(PeersAnnotation, "app=web").Obj()); s.Code() != fwk.Unschedulable {
		t.Errorf("a pod that is its own peer: %v, want it not signable", s)
	}
}

// The framework's own cycle state runs the plugin as the scheduler does:
// a state key written once is read by Score.
func TestScoreWithoutPreScore(t *testing.T) {
	pl := newPlugin(t)
	if _, s := pl.Score(context.Background(), framework.NewCycleState(), client("c1", nil), nodeInfo("a")); s.IsSuccess() {
		t.Error("Score without PreScore's state succeeded")
	}
}
