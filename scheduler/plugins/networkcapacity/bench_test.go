package networkcapacity

import (
	"context"
	"fmt"
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

// BenchmarkCapacityPreScore is one cycle's PreScore over n feasible nodes,
// each with 10 pods and a link measured with a 95 % interval
// (interval=true, as the live simulator serves) or without one (as a
// scenario does) (cycle), and the reading of the answer's links that
// every cycle on it shares (links).
func BenchmarkCapacityPreScore(b *testing.B) {
	for _, n := range []int{500, 5000} {
		for _, withInterval := range []bool{false, true} {
			b.Run(fmt.Sprintf("nodes=%d/interval=%t", n, withInterval), func(b *testing.B) {
				at := measuredAt.Format(time.RFC3339Nano)
				entries := make([]string, n)
				nodes := make([]fwk.NodeInfo, n)
				for i := range n {
					bw := 90 + float64(i%20)
					interval := ""
					if withInterval {
						interval = fmt.Sprintf(`"low": %g, "high": %g, `, bw*0.9, bw*1.1)
					}
					entries[i] = fmt.Sprintf(`"n%d": {"score": 1, "bandwidth_mbps": %g, "measured": {"bandwidth_mbps": {"value": %g, %s"samples": 3, "measured_at": %q}}}`,
						i, bw, bw, interval, at)
					pods := make([]*v1.Pod, 10)
					for j := range pods {
						pods[j] = boundAt(fmt.Sprintf("p%d-%d", i, j), measuredAt.Add(-time.Hour), declares("5M"))
					}
					ni := framework.NewNodeInfo(pods...)
					ni.SetNode(st.MakeNode().Name(fmt.Sprintf("n%d", i)).Obj())
					nodes[i] = ni
				}
				body := []byte(fmt.Sprintf(`{"results": {%s}, "timestamp": %q, "window_seconds": 5}`, strings.Join(entries, ","), measuredAt.Format(time.RFC3339)))
				// What an answer costs once, when its links are first read
				// (decoded, and their ties worked out).
				b.Run("links", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						(&network.Simulation{Body: body}).Links()
					}
				})
				sim := &network.Simulation{Body: body}
				sim.Links()
				pl := newPlugin(b, measuredAt.Add(time.Second))
				pod := st.MakePod().Name("new").Obj()
				ctx := context.Background()
				b.Run("cycle", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						state := framework.NewCycleState()
						placement.Write(state, &placement.Cycle{Simulation: sim})
						if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
							b.Fatal(s)
						}
					}
				})
			})
		}
	}
}

// BenchmarkCapacityCycle is one cycle of the plugin over 5000 feasible
// nodes on an answer already read: PreScore, Score for every node and
// NormalizeScore, as the framework runs them. The nodes hold no pod, or
// 10 each: ready before the measurement (counted none, as on a settled
// cluster), or not ready yet (each counted, as every pod of the perf run,
// where no kubelet readies them). The nodes are the same from cycle to
// cycle, as between two cycles all but the last pod's node are.
func BenchmarkCapacityCycle(b *testing.B) {
	const n = 5000
	at := measuredAt.Format(time.RFC3339Nano)
	entries := make([]string, n)
	for i := range n {
		bw := 90 + float64(i%20)
		entries[i] = fmt.Sprintf(`"n%d": {"score": 1, "bandwidth_mbps": %g, "measured": {"bandwidth_mbps": {"value": %g, "samples": 3, "measured_at": %q}}}`, i, bw, bw, at)
	}
	body := []byte(fmt.Sprintf(`{"results": {%s}, "timestamp": %q, "window_seconds": 5}`, strings.Join(entries, ","), measuredAt.Format(time.RFC3339)))
	sim := &network.Simulation{Body: body}
	sim.Links()
	for _, tc := range []struct {
		name string
		pod  func(name string) *v1.Pod
		pods int
	}{
		{"pods=0", nil, 0},
		{"pods=10/ready", func(name string) *v1.Pod { return boundAt(name, measuredAt.Add(-time.Hour), declares("5M")) }, 10},
		{"pods=10/starting", func(name string) *v1.Pod { return pulling(name, measuredAt.Add(-time.Hour), nil) }, 10},
	} {
		b.Run(fmt.Sprintf("nodes=%d/%s", n, tc.name), func(b *testing.B) {
			nodes := make([]fwk.NodeInfo, n)
			for i := range nodes {
				pods := make([]*v1.Pod, tc.pods)
				for j := range pods {
					pods[j] = tc.pod(fmt.Sprintf("p%d-%d", i, j))
				}
				nodes[i] = node(fmt.Sprintf("n%d", i), pods...)
			}
			pl := newPlugin(b, measuredAt.Add(time.Second))
			pod := st.MakePod().Name("new").Obj()
			ctx := context.Background()
			list := make(fwk.NodeScoreList, n)
			b.ReportAllocs()
			for b.Loop() {
				state := framework.NewCycleState()
				placement.Write(state, &placement.Cycle{Simulation: sim})
				if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
					b.Fatal(s)
				}
				for i, ni := range nodes {
					score, s := pl.Score(ctx, state, pod, ni)
					if !s.IsSuccess() {
						b.Fatal(s)
					}
					list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: score}
				}
				if s := pl.NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
					b.Fatal(s)
				}
			}
		})
	}
}
