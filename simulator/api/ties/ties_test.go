package ties

import (
	"math"
	"strings"
	"testing"
)

// TestBandwidthTies ranks bandwidths as NetworkCapacity and the live
// score do: within the noise, or closer than the smallest difference,
// alike; a lower bound at its bound.
func TestBandwidthTies(t *testing.T) {
	d := DefaultDifferences()
	measured := func(v float64) Span { return d.BandwidthSpan(v, 0.9*v, 1.1*v, false) }
	for _, tc := range []struct {
		name  string
		spans map[string]Span
		want  map[string]float64
	}{
		{"a few per cent apart", map[string]Span{"a": measured(100), "b": measured(97)}, map[string]float64{"a": 100, "b": 100}},
		{"15 % apart, measured tightly", map[string]Span{"a": d.BandwidthSpan(100, 99, 101, false), "b": d.BandwidthSpan(85, 84, 86, false)},
			map[string]float64{"a": 100, "b": 100}},
		{"30 % apart, measured tightly", map[string]Span{"a": d.BandwidthSpan(100, 99, 101, false), "b": d.BandwidthSpan(70, 69, 71, false)},
			map[string]float64{"a": 100, "b": 70}},
		{"half", map[string]Span{"a": measured(100), "b": measured(50)}, map[string]float64{"a": 100, "b": 50}},
		{"a bound well below a measured link: at its bound", map[string]Span{"a": measured(100), "b": d.BandwidthSpan(11, 11, math.Inf(1), true)},
			map[string]float64{"a": 100, "b": 11}},
		{"a bound above a measured link ranks first", map[string]Span{"a": measured(100), "b": d.BandwidthSpan(500, 500, math.Inf(1), true)},
			map[string]float64{"a": 100, "b": 500}},
		{"groups form from the best down, not by chaining", map[string]Span{"a": measured(100), "b": measured(82), "c": measured(68)},
			map[string]float64{"a": 100, "b": 100, "c": 68}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			var spans []Span
			for n, s := range tc.spans {
				names, spans = append(names, n), append(spans, s)
			}
			got := Rank(names, spans)
			for i, n := range names {
				if math.Abs(got[i]-tc.want[n]) > 1e-9 {
					t.Errorf("%s ranks at %g, want %g (spans %+v)", n, got[i], tc.want[n], tc.spans)
				}
			}
		})
	}
}

// TestLatencyAndLossSpans: the worse end reaches at least the smallest
// difference that counts; the better end is the narrowed interval's.
func TestLatencyAndLossSpans(t *testing.T) {
	d := DefaultDifferences()
	if s := d.LatencySpan(1.2, 1.14, 1.26); s.High < 1.4-1e-9 || s.Low < 1.14 || s.Low > 1.2 {
		t.Errorf("latency 1.2 ms: span %+v, want up to 1.4 ms at least (0.2 ms), down to its narrowed end", s)
	}
	if s := d.LatencySpan(10, 9.5, 10.5); math.Abs(s.High-11) > 1e-9 {
		t.Errorf("latency 10 ms: span %+v, want up to 11 ms (10 %%)", s)
	}
	if s := d.LossSpan(0, 0, 0.001); math.Abs(s.High-0.005) > 1e-9 || s.Low != 0 {
		t.Errorf("no loss: span %+v, want 0 to 0.005", s)
	}
	if s := d.LossSpan(0.999, 0.99, 1); s.High > 1 {
		t.Errorf("loss near 1: span %+v, want it held to 1", s)
	}
}

func TestDifferencesValidate(t *testing.T) {
	if err := DefaultDifferences().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		mod   func(*Differences)
	}{
		{"latency ratio", func(d *Differences) { d.LatencyRatio = -0.1 }},
		{"latency", func(d *Differences) { d.LatencyMs = math.Inf(1) }},
		{"loss", func(d *Differences) { d.Loss = 1 }},
		{"bandwidth ratio", func(d *Differences) { d.BandwidthRatio = math.NaN() }},
	} {
		d := DefaultDifferences()
		tc.mod(&d)
		if err := d.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%+v: %v, want an error naming %q", d, err, tc.field)
		}
	}
}
