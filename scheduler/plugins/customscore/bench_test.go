package customscore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// benchNodeCounts are the simulate response sizes the cycle is measured at.
var benchNodeCounts = []int{100, 1000, 5000, 15000}

// simulateBody is a /simulate answer with a result for each of n nodes, in
// the shape and size the simulator sends.
func simulateBody(n int) []byte {
	type result struct {
		Score         float64 `json:"score"`
		LatencyMs     float64 `json:"latency_ms"`
		BandwidthMbps float64 `json:"bandwidth_mbps"`
		PacketLoss    float64 `json:"packet_loss"`
	}
	results := make(map[string]result, n)
	for i := 0; i < n; i++ {
		results[benchNodeName(i)] = result{
			Score: float64(i%1000) / 1000, LatencyMs: float64(i%50) + 0.5,
			BandwidthMbps: 100 + float64(i%900), PacketLoss: float64(i%10) / 1000,
		}
	}
	body, err := json.Marshal(map[string]any{
		"timestamp": "2026-11-29T12:00:00Z", "source": "bench", "window_seconds": 30, "results": results,
	})
	if err != nil {
		panic(err)
	}
	return body
}

func benchNodeName(i int) string { return fmt.Sprintf("node-%05d", i) }

// benchSimulator serves body; with etag it tags the answer and honors
// If-None-Match, as the stub does.
func benchSimulator(b *testing.B, body []byte, etag bool) string {
	sum := sha256.Sum256(body)
	tag := `"` + hex.EncodeToString(sum[:8]) + `"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if etag {
			w.Header().Set("ETag", tag)
			if r.Header.Get("If-None-Match") == tag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkScoreCycle measures what the plugin adds to one scheduling cycle:
// PreScore (the GET and the decode), Score for every node and
// NormalizeScore, against a loopback simulator.
func BenchmarkScoreCycle(b *testing.B) {
	for _, n := range benchNodeCounts {
		body := simulateBody(n)
		nodes := make([]fwk.NodeInfo, n)
		for i := range nodes {
			ni := framework.NewNodeInfo()
			ni.SetNode(st.MakeNode().Name(benchNodeName(i)).Obj())
			nodes[i] = ni
		}
		for _, etag := range []bool{false, true} {
			b.Run(fmt.Sprintf("nodes=%d/etag=%v", n, etag), func(b *testing.B) {
				url := benchSimulator(b, body, etag)
				ctx := klog.NewContext(context.Background(), klog.Background().V(10))
				obj, err := New(ctx, testArgs(b, "simulatorURL: "+url), nil)
				if err != nil {
					b.Fatal(err)
				}
				pl := obj.(*CustomScore)
				b.Cleanup(func() { _ = pl.Close() })
				pod := st.MakePod().Name("p").Obj()
				list := make(fwk.NodeScoreList, n)
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					state := framework.NewCycleState()
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
}

// BenchmarkDecode isolates decoding a /simulate body, the part of the cycle
// that grows with the response.
func BenchmarkDecode(b *testing.B) {
	for _, n := range benchNodeCounts {
		body := simulateBody(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeSimulation(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
