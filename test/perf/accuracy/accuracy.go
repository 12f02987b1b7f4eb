// Package accuracy is the probe accuracy benchmark's result: the kind
// suite's TestProbeAccuracy (make bench) shapes one worker's link for real
// in several ways and records what the simulator served for it, window by
// window; test/perf/report turns it into docs/probe-accuracy.md.
package accuracy

import (
	"sort"
	"time"

	"kns3.dev/kns3/simulator/api"
)

// Report is one run: a row per shape.
type Report struct {
	Version       string    `json:"version"`
	Date          time.Time `json:"date"`
	WindowSeconds int       `json:"window_seconds"`
	EchoesPerNode float64   `json:"echoes_per_node"`
	Rows          []Row     `json:"rows"`
}

// Row is one shape of the worker's link and what was served for it in
// consecutive windows that lie wholly after the shaping.
type Row struct {
	// RateMbit is the cap each way, 0 for none; Loss the share of what
	// the node receives that is dropped.
	RateMbit float64  `json:"rate_mbit"`
	Loss     float64  `json:"loss"`
	Windows  []Served `json:"windows"`
}

// Served is the worker's entry in one answer.
type Served struct {
	Timestamp time.Time        `json:"timestamp"`
	Score     float64          `json:"score"`
	Measured  api.Measurements `json:"measured"`
}

// Summary is a metric over a row's windows.
type Summary struct {
	// Windows is how many windows had the metric; AtLeast how many served
	// it as a lower bound.
	Windows, AtLeast int
	// Median, Min and Max are of the served values; HalfWidth the median
	// half-width of the served intervals, relative to the value (for a
	// lower bound: none).
	Median, Min, Max, HalfWidth float64
}

// Summarise summarises one metric of a row, picked by get.
func (r Row) Summarise(get func(api.Measurements) *api.Estimate) Summary {
	var values, widths []float64
	var s Summary
	for _, w := range r.Windows {
		e := get(w.Measured)
		if e == nil {
			continue
		}
		s.Windows++
		values = append(values, e.Value)
		if e.AtLeast {
			s.AtLeast++
			continue
		}
		if e.High != nil && e.Value > 0 {
			widths = append(widths, (*e.High-e.Low)/2/e.Value)
		}
	}
	if len(values) == 0 {
		return s
	}
	sort.Float64s(values)
	s.Median, s.Min, s.Max = values[len(values)/2], values[0], values[len(values)-1]
	if len(widths) > 0 {
		sort.Float64s(widths)
		s.HalfWidth = widths[len(widths)/2]
	}
	return s
}
