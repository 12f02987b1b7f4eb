package networkpeers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// BenchmarkPeersPreScore is one cycle's PreScore at 5000 nodes, two pods
// on each and an eight-dimensional coordinate for each, as in a live
// answer: for a pod without peers (peers=0), and for one whose peers
// are 1, 10 or 100 pods on as many nodes, over 500 feasible nodes (the
// scheduler scores a tenth of 5000 by default) and over all 5000, run one
// after the other (the scheduler spreads them over its parallelizer). And
// what reading the answer's pairs costs, once per answer (pairs).
func BenchmarkPeersPreScore(b *testing.B) {
	const n = 5000
	coords := make([]string, n)
	nodes := make([]fwk.NodeInfo, n)
	for i := range n {
		name := fmt.Sprintf("n%04d", i)
		vec := make([]string, 8)
		for d := range vec {
			vec[d] = fmt.Sprintf("%g", float64((i*(d+7))%100)/1e5)
		}
		coords[i] = fmt.Sprintf(`%q: {"vec": [%s], "error": 0.1, "adjustment": 0, "height": 0.00001, "samples": 40, "age_seconds": 1}`,
			name, strings.Join(vec, ", "))
		nodes[i] = nodeInfo(name,
			st.MakePod().Name("a"+name).Namespace("default").UID("a"+name).Label("app", "other").Node(name).Obj(),
			st.MakePod().Name("b"+name).Namespace("other").UID("b"+name).Label("app", "server").Node(name).Obj())
	}
	body := []byte(fmt.Sprintf(`{"results": {}, "timestamp": %q, "window_seconds": 15, "pairs": {"window_seconds": 15, "coordinates": {%s}, "measured": []}}`,
		measuredAt.Format("2006-01-02T15:04:05Z"), strings.Join(coords, ",")))
	b.Run("pairs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			(&network.Simulation{Body: body}).Pairs()
		}
	})
	sim := &network.Simulation{Body: body}
	sim.Pairs()
	for _, peers := range []int{0, 1, 10, 100} {
		snapshot := make([]fwk.NodeInfo, n)
		copy(snapshot, nodes)
		for i := range peers {
			name := fmt.Sprintf("n%04d", i*n/max(peers, 1))
			snapshot[i*n/max(peers, 1)] = nodeInfo(name, peer(fmt.Sprintf("s%d", i), "server", name))
		}
		pod := client("c1", peersOf("app=server"))
		if peers == 0 {
			pod = client("c1", nil)
		}
		for _, feasible := range []int{500, n} {
			b.Run(fmt.Sprintf("nodes=%d/feasible=%d/peers=%d", n, feasible, peers), func(b *testing.B) {
				pl := newPlugin(b, snapshot...)
				benchmarkPreScore(b, pl, sim, pod, snapshot[:feasible], peers > 0)
			})
		}
	}
}

func benchmarkPreScore(b *testing.B, pl *NetworkPeers, sim *network.Simulation, pod *v1.Pod, feasible []fwk.NodeInfo, scores bool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		placement.Write(state, &placement.Cycle{Simulation: sim})
		if s := pl.PreScore(ctx, state, pod, feasible); s.IsSuccess() != scores {
			b.Fatalf("PreScore: %v", s)
		}
	}
}
