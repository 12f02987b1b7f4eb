package value

import (
	"testing"

	"kns3.dev/kns3/test/netbench"
)

func TestSummarise(t *testing.T) {
	fast := make([]float64, 99)
	for i := range fast {
		fast[i] = 1
	}
	p := Placement{Results: []netbench.Result{
		// 1 MB in 2 s and 3 MB in 2 s: 4 MB in 2 s together, 16 Mbit/s.
		{Bytes: 1e6, Seconds: 2, PingMs: fast},
		{Bytes: 3e6, Seconds: 2, PingMs: []float64{2}, PingFailed: 100, PingLimit: 5000},
	}}
	p.Summarise()
	if p.Mbps != 16 {
		t.Errorf("Mbps %g, want 16", p.Mbps)
	}
	// 200 calls: 99 at 1 ms, 1 at 2 ms, 100 failed at 5000 ms.
	if p.P50Ms != 5000 || p.P99Ms != 5000 {
		t.Errorf("p50 %g p99 %g, want the failed calls' 5000 for both", p.P50Ms, p.P99Ms)
	}
	p.Results[1].PingFailed = 0
	p.Summarise()
	if p.P50Ms != 1 || p.P99Ms != 2 {
		t.Errorf("without failures: p50 %g p99 %g, want 1 and 2", p.P50Ms, p.P99Ms)
	}
}
