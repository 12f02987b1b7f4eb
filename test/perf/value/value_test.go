package value

import (
	"math"
	"slices"
	"testing"
	"time"

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

	// The same two, saying when they ran: 2 s each, the second starting a
	// second after the first, so 4 MB in the 3 s they span together.
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	p.Results[0].Start, p.Results[0].End = t0, t0.Add(2*time.Second)
	p.Results[1].Start, p.Results[1].End = t0.Add(time.Second), t0.Add(3*time.Second)
	p.Summarise()
	if want := 4e6 * 8 / 3 / 1e6; math.Abs(p.Mbps-want) > 1e-9 {
		t.Errorf("clients a second apart: Mbps %g, want %g, over the span they ran in", p.Mbps, want)
	}
}

func TestLevelSummarise(t *testing.T) {
	trial := func(defP99, defMbps, capP99, capMbps float64) Trial {
		return Trial{Order: Placements, Placements: []Placement{
			{Name: PlacementDefault, P99Ms: defP99, Mbps: defMbps},
			{Name: PlacementStatic, P99Ms: 100, Mbps: 10},
			{Name: PlacementUncounted, P99Ms: 50, Mbps: 50},
			{Name: PlacementCapacity, P99Ms: capP99, Mbps: capMbps},
		}}
	}
	l := Level{Trials: []Trial{trial(10, 100, 5, 120), trial(20, 100, 10, 90), trial(10, 50, 20, 100)}}
	l.Summarise()
	if len(l.Summary) != len(Placements) {
		t.Fatalf("%d summaries, want %d", len(l.Summary), len(Placements))
	}
	c := l.Summary[3]
	// p99 ratios 0.5, 0.5, 2; throughput ratios 1.2, 0.9, 2.
	if c.Name != PlacementCapacity || c.MedianP99Ms != 10 || c.MedianMbps != 100 ||
		c.MedianP99Ratio != 0.5 || c.MedianMbpsRatio != 1.2 || c.WorstP99Ratio != 2 || c.WorstMbpsRatio != 0.9 {
		t.Errorf("capacity summary %+v", c)
	}
	if d := l.Summary[0]; d.MedianP99Ratio != 1 || d.WorstMbpsRatio != 1 {
		t.Errorf("default against itself %+v, want ratios of 1", d)
	}
	l.Trials = append(l.Trials, trial(0, 0, 1, 1)) // a default that measured nothing adds no ratio
	l.Summarise()
	if c := l.Summary[3]; c.WorstP99Ratio != 2 || c.MedianMbpsRatio != 1.2 {
		t.Errorf("with an empty default: %+v", c)
	}
}

func TestSplitsSummarise(t *testing.T) {
	names := SplitPlacements(2)
	want := []string{PlacementDefault, SplitName(2, 0), SplitName(1, 1), SplitName(0, 2)}
	if !slices.Equal(names, want) {
		t.Fatalf("SplitPlacements(2) = %q, want %q", names, want)
	}
	trial := func(def, packed float64) Trial {
		return Trial{Order: names, Placements: []Placement{
			{Name: names[0], P99Ms: def, Mbps: 100},
			{Name: names[1], P99Ms: packed, Mbps: 150},
			{Name: names[2], P99Ms: def, Mbps: 100},
			{Name: names[3], P99Ms: 4 * def, Mbps: 25},
		}}
	}
	l := Level{Placements: names, Trials: []Trial{trial(10, 5), trial(20, 30), trial(40, 10)}}
	l.Summarise()
	if len(l.Summary) != len(names) {
		t.Fatalf("%d summaries, want one per split and the default's, %d", len(l.Summary), len(names))
	}
	// The packed split's p99 ratios 0.5, 1.5, 0.25 against its own trial's default.
	if s := l.Summary[1]; s.Name != names[1] || s.MedianP99Ratio != 0.5 || s.WorstP99Ratio != 1.5 || s.MedianMbpsRatio != 1.5 {
		t.Errorf("packed split's summary %+v", s)
	}
	if s := l.Summary[3]; s.MedianP99Ratio != 4 || s.WorstMbpsRatio != 0.25 {
		t.Errorf("split onto the slower link: %+v", s)
	}
}
