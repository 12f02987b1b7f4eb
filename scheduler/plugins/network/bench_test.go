package network

import (
	"fmt"
	"strings"
	"testing"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// benchNodeCounts are the simulate response sizes decoding is measured at.
var benchNodeCounts = []int{100, 1000, 5000, 15000}

// BenchmarkDecode isolates decoding a /simulate body, the part of the cycle
// that grows with the response.
func BenchmarkDecode(b *testing.B) {
	for _, n := range benchNodeCounts {
		body := simtest.Body(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// liveBody is an answer of n nodes shaped as the live simulator serves
// them: each metric with its measured estimate, and the link's use.
func liveBody(n int) []byte {
	const at = `"measured_at": "2026-12-03T12:00:03.123456789Z", "age_seconds": 1.5`
	entries := make([]string, n)
	for i := range n {
		bw := 90 + float64(i%20)
		entries[i] = fmt.Sprintf(`%q: {"score": 0.9, "latency_ms": 0.8, "bandwidth_mbps": %g, "packet_loss": 0.001, "measured": {`+
			`"latency_ms": {"value": 0.8, "low": 0.7, "high": 0.9, "samples": 40, %s}, `+
			`"bandwidth_mbps": {"value": %g, "low": %g, "high": %g, "samples": 3, %s}, `+
			`"packet_loss": {"value": 0.001, "low": 0, "high": 0.01, "samples": 400, %s}, `+
			`"link_use_mbps": {"value": 12.5, "low": 12.5, "high": 12.5, "samples": 5, %s}}}`,
			simtest.NodeName(i), bw, at, bw, bw*0.9, bw*1.1, at, at, at)
	}
	return []byte(fmt.Sprintf(`{"results": {%s}, "timestamp": "2026-12-03T12:00:05Z", "window_seconds": 15, "source": "live"}`,
		strings.Join(entries, ", ")))
}

// BenchmarkLinks is reading an answer's links, which the first cycle on a
// new answer pays: its one-pass reading (fast) beside encoding/json's
// (slow), which it falls back to, then the whole of Links (with ties).
func BenchmarkLinks(b *testing.B) {
	for _, n := range []int{500, 5000} {
		body := liveBody(n)
		for _, c := range []struct {
			name string
			read func([]byte) int
		}{
			{"fast", func(body []byte) int { r, _ := fastLinkReadings(body); return len(r.nodes) }},
			{"slow", func(body []byte) int { return len(slowLinkReadings(body).nodes) }},
			{"links", func(body []byte) int { return len((&Simulation{Body: body}).Links()) }},
		} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if got := c.read(body); got != n {
						b.Fatalf("read %d nodes, want %d", got, n)
					}
				}
			})
		}
	}
}
