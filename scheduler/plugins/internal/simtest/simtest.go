// Package simtest holds what the tests of the plugins, of the simulator
// client and of network share: simulators on loopback and /simulate bodies.
package simtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// GoodBody scores n1 0.9 and n2 0.1.
const GoodBody = `{"results":{"n1":{"score":0.9},"n2":{"score":0.1}}}`

// CountingServer answers the i-th request (from 1) with respond(i), and
// counts them.
func CountingServer(t testing.TB, respond func(i int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond(n.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Body is a /simulate answer with a result for each of n nodes (named by
// NodeName), in the shape and size the simulator sends.
func Body(n int) []byte {
	type result struct {
		Score         float64 `json:"score"`
		LatencyMs     float64 `json:"latency_ms"`
		BandwidthMbps float64 `json:"bandwidth_mbps"`
		PacketLoss    float64 `json:"packet_loss"`
	}
	results := make(map[string]result, n)
	for i := 0; i < n; i++ {
		results[NodeName(i)] = result{
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

// NodeName is Body's name of the i-th node.
func NodeName(i int) string { return fmt.Sprintf("node-%05d", i) }
