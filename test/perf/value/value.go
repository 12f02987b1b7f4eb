// Package value is the value benchmarks' results: the kind suite's value
// benchmark (e2e, make bench) writes a Report, and test/perf/report
// turns it into docs/value.md; its peers value benchmark writes a
// PeersReport, which becomes docs/value-peers.md.
package value

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"kns3.dev/kns3/test/netbench"
)

// The four placements of every trial, in the order a report lists them.
const (
	PlacementDefault   = "default scheduler"
	PlacementStatic    = "KNS-3, static scenario"
	PlacementUncounted = "KNS-3 live, without capacity"
	PlacementCapacity  = "KNS-3 live, with capacity"
)

// The workloads: the clients fetch from netbench's own HTTP server, or
// from a Redis server.
const (
	WorkloadNetbench = "netbench"
	WorkloadRedis    = "redis"
)

// Workloads are the workloads in the order a benchmark runs them.
var Workloads = []string{WorkloadNetbench, WorkloadRedis}

// FileName is where a run keeps workload's Report, in its output
// directory.
func FileName(workload string) string {
	if workload == WorkloadNetbench || workload == "" {
		return "value.json"
	}
	return "value-" + workload + ".json"
}

// Placements are the placement names in report order.
var Placements = []string{PlacementDefault, PlacementStatic, PlacementUncounted, PlacementCapacity}

// SplitsFileName is where a run keeps workload's splits Report (every way
// of splitting a level's clients between the two links), in its output
// directory.
func SplitsFileName(workload string) string {
	if workload == WorkloadNetbench || workload == "" {
		return "splits.json"
	}
	return "splits-" + workload + ".json"
}

// SplitName names the placement that holds best clients to the best link
// and slow clients to the slower one.
func SplitName(best, slow int) string {
	return fmt.Sprintf("%d on the best link, %d on the slower", best, slow)
}

// SplitPlacements are a splits level's placements, in report order: the
// default scheduler's, then every split of clients, most on the best link
// first.
func SplitPlacements(clients int) []string {
	names := []string{PlacementDefault}
	for best := clients; best >= 0; best-- {
		names = append(names, SplitName(best, clients-best))
	}
	return names
}

// Report is one run of the value benchmark: at each load level, the same
// clients placed four ways, trial after trial, on one shaped cluster.
type Report struct {
	Version         string    `json:"version"`
	Date            time.Time `json:"date"`
	DurationSeconds float64   `json:"duration_seconds"`
	// Workload is the clients' server, WorkloadNetbench when empty.
	Workload string `json:"workload,omitempty"`
	// ClientMbps is what each client asks for, and declares.
	ClientMbps float64 `json:"client_mbps"`
	// PingIntervalMs is how often each client makes a small call; 100
	// when 0.
	PingIntervalMs float64 `json:"ping_interval_ms,omitempty"`
	// PingsOpenLoop says each client made its small calls as they fell
	// due, whether or not the ones before were answered, and timed each
	// from when it was due; false in a report whose clients made them one
	// after the other (netbench.Client's ping says why that undercounts).
	PingsOpenLoop bool `json:"pings_open_loop,omitempty"`
	// Order is how the trials ordered the placements: OrderBalanced
	// (TrialOrder), or a rotation when empty (trial i starting with
	// placement i).
	Order string `json:"order,omitempty"`
	// Links says how each worker's link was shaped, LinkMbps its cap;
	// BestLinkMbps is the fastest one's, which the load levels are
	// measured against.
	Links        map[string]string  `json:"links"`
	LinkMbps     map[string]float64 `json:"link_mbps,omitempty"`
	BestLinkMbps float64            `json:"best_link_mbps"`
	Levels       []Level            `json:"levels"`
}

// Level is one load level: Clients clients asking DemandMbps together.
type Level struct {
	Name       string  `json:"name"`
	Clients    int     `json:"clients"`
	DemandMbps float64 `json:"demand_mbps"`
	// Placements names the placements of every trial, in report order;
	// Placements (the package's) when empty. The first is the default
	// scheduler's, which ratios compare with.
	Placements []string `json:"placements,omitempty"`
	Trials     []Trial  `json:"trials"`
	// Summary is one entry per placement, in PlacementNames order
	// (Summarise).
	Summary []Summary `json:"summary"`
}

// PlacementNames are the level's placements in report order.
func (l *Level) PlacementNames() []string {
	if len(l.Placements) > 0 {
		return l.Placements
	}
	return Placements
}

// Trial is one run of every placement; Order is the order they ran in,
// Placements are in its level's PlacementNames order.
type Trial struct {
	Order      []string    `json:"order"`
	Placements []Placement `json:"placements"`
}

// Summary is one placement over a level's trials: medians of its own
// figures, and of its ratios to the default scheduler's placement of the
// same trial (or another's, Against), with the worst trial's ratios (the
// highest p99, the lowest throughput).
type Summary struct {
	Name            string  `json:"name"`
	MedianP99Ms     float64 `json:"median_p99_ms"`
	MedianMbps      float64 `json:"median_mbps"`
	MedianP99Ratio  float64 `json:"median_p99_ratio"`
	MedianMbpsRatio float64 `json:"median_mbps_ratio"`
	WorstP99Ratio   float64 `json:"worst_p99_ratio"`
	WorstMbpsRatio  float64 `json:"worst_mbps_ratio"`
}

// Summarise fills l.Summary from its trials, with ratios to the default
// placement (Against(0)).
func (l *Level) Summarise() {
	l.Summary = l.Against(0)
}

// Against summarises each placement over l's trials, its ratios to the
// placement at index base of the same trial. A trial without that
// placement, or whose run of it measured nothing, adds no ratio.
func (l *Level) Against(base int) []Summary {
	var out []Summary
	for i, name := range l.PlacementNames() {
		s := Summary{Name: name}
		var p99s, mbps, p99Ratios, mbpsRatios []float64
		for _, tr := range l.Trials {
			if i >= len(tr.Placements) {
				continue
			}
			p := tr.Placements[i]
			p99s, mbps = append(p99s, p.P99Ms), append(mbps, p.Mbps)
			if base >= len(tr.Placements) {
				continue
			}
			if b := tr.Placements[base]; b.P99Ms > 0 && b.Mbps > 0 {
				p99Ratios, mbpsRatios = append(p99Ratios, p.P99Ms/b.P99Ms), append(mbpsRatios, p.Mbps/b.Mbps)
			}
		}
		s.MedianP99Ms, s.MedianMbps = median(p99s), median(mbps)
		if len(p99Ratios) > 0 {
			s.MedianP99Ratio, s.MedianMbpsRatio = median(p99Ratios), median(mbpsRatios)
			s.WorstP99Ratio, s.WorstMbpsRatio = slices.Max(p99Ratios), slices.Min(mbpsRatios)
		}
		out = append(out, s)
	}
	return out
}

// median is the middle value, or the mean of the two middle ones.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
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
	// Server is where the clients' server ran, when the placement placed
	// it too (the peers benchmark); nil when it was held to a node.
	Server *Server `json:"server,omitempty"`
}

// Server is a server the placement under test placed with its clients.
type Server struct {
	Node string `json:"node"`
	// CPUMillis is the server's CPU request.
	CPUMillis int64 `json:"cpu_millis"`
	// Room is how many of the clients its node could still take, by CPU
	// requests, once the server ran there.
	Room int `json:"room"`
}

// Summarise fills the percentiles and throughput from the results.
func (p *Placement) Summarise() {
	var pings []float64
	var bytes int64
	var seconds float64
	var first, last time.Time
	timed := len(p.Results) > 0
	for _, r := range p.Results {
		pings = append(pings, r.PingMs...)
		for range r.PingFailed {
			pings = append(pings, r.PingLimit)
		}
		bytes += r.Bytes
		seconds += r.Seconds
		if r.Start.IsZero() || r.End.IsZero() {
			timed = false
			continue
		}
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if r.End.After(last) {
			last = r.End
		}
	}
	sort.Float64s(pings)
	p.P50Ms, p.P99Ms = percentile(pings, 0.50), percentile(pings, 0.99)
	// Throughput is every client's bytes over the span from the first
	// start to the last end, when the clients say when they ran (on one
	// kind cluster they share the host's clock): the links carried those
	// bytes within it. Over the mean client's duration instead, clients
	// that start apart seem to overlap wholly, and a link seems to carry
	// more than its cap (12 clients through a 100 Mbit/s link, 5 s each,
	// measured 118.7 Mbit/s that way).
	span := 0.0
	if len(p.Results) > 0 {
		span = seconds / float64(len(p.Results))
	}
	if timed && last.After(first) {
		span = last.Sub(first).Seconds()
	}
	if span > 0 {
		p.Mbps = float64(bytes) * 8 / span / 1e6
	}
}

// percentile is the nearest-rank percentile q of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}
