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
