package simclient

import (
	"fmt"
	"testing"

	"kns3.dev/kns3/scheduler/plugins/customscore/internal/simtest"
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
