package customscore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// benchNodeCounts are the simulate response sizes the cycle is measured at.
var benchNodeCounts = []int{100, 1000, 5000, 15000}

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
		body := simtest.Body(n)
		nodes := make([]fwk.NodeInfo, n)
		for i := range nodes {
			ni := framework.NewNodeInfo()
			ni.SetNode(st.MakeNode().Name(simtest.NodeName(i)).Obj())
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

// BenchmarkPreScore is PreScore alone, the answer unchanged (a 304 from
// a loopback simulator), at the perf run's sizes: the GET, and what the
// cycle keeps beside it for Score and the placement event.
func BenchmarkPreScore(b *testing.B) {
	for _, n := range []int{500, 5000} {
		body := simtest.Body(n)
		nodes := make([]fwk.NodeInfo, n)
		for i := range nodes {
			ni := framework.NewNodeInfo()
			ni.SetNode(st.MakeNode().Name(simtest.NodeName(i)).Obj())
			nodes[i] = ni
		}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			url := benchSimulator(b, body, true)
			ctx := klog.NewContext(context.Background(), klog.Background().V(10))
			obj, err := New(ctx, testArgs(b, "simulatorURL: "+url), nil)
			if err != nil {
				b.Fatal(err)
			}
			pl := obj.(*CustomScore)
			b.Cleanup(func() { _ = pl.Close() })
			pod := st.MakePod().Name("p").Obj()
			b.ReportAllocs()
			for b.Loop() {
				if s := pl.PreScore(ctx, framework.NewCycleState(), pod, nodes); !s.IsSuccess() {
					b.Fatal(s)
				}
			}
		})
	}
}
