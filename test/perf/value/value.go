// Package value is the value benchmark's result: the kind suite's value
// benchmark (e2e, make bench) writes a Report, and test/perf/report
// turns it into docs/value.md.
package value

import (
	"sort"
	"time"

	"kns3.dev/kns3/test/netbench"
)

// Report is one run of the value benchmark: the same clients placed three
// ways on one shaped cluster.
type Report struct {
	Version         string    `json:"version"`
	Date            time.Time `json:"date"`
	DurationSeconds float64   `json:"duration_seconds"`
	Clients         int       `json:"clients"`
	// Links says how each worker's link was shaped.
	Links      map[string]string `json:"links"`
	Placements []Placement       `json:"placements"`
}

// Placement is one placement's run.
type Placement struct {
	Name string `json:"name"`
	// Nodes counts the clients per node.
	Nodes map[string]int `json:"nodes"`
	// P50Ms and P99Ms are the small calls' latency over every client, a
	// failed call counted at its timeout; Mbps the clients' objects
	// fetched, together.
	P50Ms   float64           `json:"p50_ms"`
	P99Ms   float64           `json:"p99_ms"`
	Mbps    float64           `json:"mbps"`
	Results []netbench.Result `json:"results"`
}

// Summarise fills the percentiles and throughput from the results.
func (p *Placement) Summarise() {
	var pings []float64
	var bytes int64
	var seconds float64
	for _, r := range p.Results {
		pings = append(pings, r.PingMs...)
		for range r.PingFailed {
			pings = append(pings, r.PingLimit)
		}
		bytes += r.Bytes
		seconds += r.Seconds
	}
	sort.Float64s(pings)
	p.P50Ms, p.P99Ms = percentile(pings, 0.50), percentile(pings, 0.99)
	if seconds > 0 {
		p.Mbps = float64(bytes) * 8 / (seconds / float64(len(p.Results))) / 1e6
	}
}

// percentile is the nearest-rank percentile q of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}
