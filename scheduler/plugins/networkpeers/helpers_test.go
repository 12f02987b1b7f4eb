package networkpeers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

var measuredAt = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// at is a node's coordinate for answer: x milliseconds along one axis,
// with error err.
type at struct{ x, err float64 }

// answer is a /simulate body scoring every node 1, with the nodes'
// coordinates (two dimensions, no height) and the measured pairs, each made
// by pair, in its pairs key.
func answer(coords map[string]at, measured ...string) []byte {
	return answerWithUse(coords, nil, measured...)
}

// answerWithUse is answer with each node of use given a 1000 Mbit/s link
// carrying use[node] Mbit/s.
func answerWithUse(coords map[string]at, use map[string]float64, measured ...string) []byte {
	names := make([]string, 0, len(coords))
	for n := range coords {
		names = append(names, n)
	}
	sort.Strings(names)
	var results, cs []string
	for _, n := range names {
		link := ""
		if u, ok := use[n]; ok {
			link = fmt.Sprintf(`, "bandwidth_mbps": 1000, "measured": {"link_use_mbps": {"value": %g, "low": %g, "high": %g, "samples": 5, "age_seconds": 1}}`, u, u, u)
		}
		results = append(results, fmt.Sprintf(`%q: {"score": 1%s}`, n, link))
		cs = append(cs, fmt.Sprintf(`%q: {"vec": [%g, 0], "error": %g, "adjustment": 0, "height": 0, "samples": 20, "age_seconds": 1}`,
			n, coords[n].x/1000, coords[n].err))
	}
	return []byte(fmt.Sprintf(`{"results": {%s}, "timestamp": %q, "window_seconds": 15,
		"pairs": {"window_seconds": 15, "coordinates": {%s}, "measured": [%s]}}`,
		strings.Join(results, ","), measuredAt.Format(time.RFC3339), strings.Join(cs, ","), strings.Join(measured, ",")))
}

// pair is a measured pair for answer: its round trip in ms (±10 %), its
// loss (±1 point) and, when above 0, its bandwidth in Mbit/s.
func pair(from, to string, rttMs, loss, mbps float64) string {
	s := fmt.Sprintf(`{"from": %q, "to": %q,
		"latency_ms": {"value": %g, "low": %g, "high": %g, "samples": 30, "age_seconds": 2},
		"packet_loss": {"value": %g, "low": %g, "high": %g, "samples": 30, "age_seconds": 2}`,
		from, to, rttMs, rttMs*0.9, rttMs*1.1, loss, max(loss-0.01, 0), loss+0.01)
	if mbps > 0 {
		s += fmt.Sprintf(`, "bandwidth_mbps": {"value": %g, "low": %g, "high": %g, "samples": 3, "age_seconds": 2}`, mbps, mbps, mbps)
	}
	return s + "}"
}

// threeNodes is the topology most tests use: a and b 0.1 ms apart by
// their coordinates, c 5 ms from both, and the a–c pair measured slow and
// lossy (5 ms, 4 % loss, 100 Mbit/s).
func threeNodes() []byte {
	return answer(map[string]at{"a": {0, 0.05}, "b": {0.1, 0.05}, "c": {5, 0.05}}, pair("a", "c", 5, 0.04, 100))
}

// peer is a pod of namespace default labeled app=label on node (its
// NodeName set, as the scheduler's cache sets it on a pod it assumed).
func peer(name, label, node string) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").UID(name).Label("app", label).Node(node).Obj()
	return p
}

// client is a pod of namespace default declaring annotations.
func client(name string, annotations map[string]string) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").UID(name).Obj()
	p.Annotations = annotations
	return p
}

func peersOf(selector string) map[string]string {
	return map[string]string{PeersAnnotation: selector}
}

// nodeInfo is node with pods.
func nodeInfo(name string, pods ...*v1.Pod) fwk.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(st.MakeNode().Name(name).Obj())
	return ni
}

// newPlugin is the plugin without a handle, reading its snapshot from
// nodes.
func newPlugin(t testing.TB, nodes ...fwk.NodeInfo) *NetworkPeers {
	t.Helper()
	p, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.(*NetworkPeers).Close() })
	pl := p.(*NetworkPeers)
	pl.nodeInfos = func() ([]fwk.NodeInfo, error) { return nodes, nil }
	return pl
}

// stateWith is a cycle state holding the simulation of body, as
// CustomScorePlugin's PreScore and PreFilter leave it; none for nil.
func stateWith(body []byte) fwk.CycleState {
	state := framework.NewCycleState()
	if body != nil {
		sim := &network.Simulation{Body: body}
		placement.Write(state, &placement.Cycle{Simulation: sim})
		network.WriteHeld(state, sim)
	}
	return state
}

// scoreCycle runs PreScore, Score and NormalizeScore as the framework does
// over nodes for pod, and returns the normalized scores by node (nil when
// PreScore skipped) and the state.
func scoreCycle(t *testing.T, pl *NetworkPeers, body []byte, pod *v1.Pod, nodes []fwk.NodeInfo) (map[string]int64, fwk.CycleState) {
	t.Helper()
	ctx := context.Background()
	state := stateWith(body)
	if s := pl.PreScore(ctx, state, pod, nodes); s.IsSkip() {
		return nil, state
	} else if !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	list := make(fwk.NodeScoreList, len(nodes))
	for i, n := range nodes {
		s, status := pl.Score(ctx, state, pod, n)
		if !status.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Node().Name, status)
		}
		list[i] = fwk.NodeScore{Name: n.Node().Name, Score: s}
	}
	if s := pl.NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	out := map[string]int64{}
	for _, s := range list {
		out[s.Name] = s.Score
	}
	return out, state
}
