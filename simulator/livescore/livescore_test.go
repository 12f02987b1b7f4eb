package livescore

import (
	"math"
	"strings"
	"testing"

	"kns3.dev/kns3/simulator/api"
)

// loss is a loss estimate of k lost of n echoes, with its Wilson interval.
func loss(k, n int) *api.Estimate {
	p := float64(k) / float64(n)
	z := 1.96
	nf := float64(n)
	c := (p + z*z/(2*nf)) / (1 + z*z/nf)
	h := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	high := math.Min(1, c+h)
	return &api.Estimate{Value: p, Low: math.Max(0, c-h), High: &high, Samples: n}
}

// latency is a median round trip in ms within ±5 %.
func latency(ms float64) *api.Estimate {
	high := ms * 1.05
	return &api.Estimate{Value: ms, Low: ms * 0.95, High: &high, Samples: 1000}
}

// measuredBW is a bandwidth measured at mbps within ±10 %.
func measuredBW(mbps float64) *api.Estimate {
	high := mbps * 1.1
	return &api.Estimate{Value: mbps, Low: mbps * 0.9, High: &high, Samples: 3}
}

// atLeast is a bandwidth known only to be at least mbps.
func atLeast(mbps float64) *api.Estimate {
	return &api.Estimate{Value: mbps, Low: mbps, AtLeast: true, Samples: 2}
}

func node(bw, lat, pl *api.Estimate) api.Measurements {
	return api.Measurements{BandwidthMbps: bw, LatencyMs: lat, PacketLoss: pl}
}

func TestScores(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]api.Measurements
		// equal lists groups of nodes that must score the same; below
		// pairs (a, b) where a must score strictly below b.
		equal [][]string
		below [][2]string
		want  map[string]float64
	}{{
		name: "identical healthy links whose noise differs score the same, fully",
		in: map[string]api.Measurements{
			"w2": node(atLeast(200), latency(0.21), loss(0, 1500)),
			"w3": node(atLeast(5000), latency(0.35), loss(1, 1500)),
			"cp": node(measuredBW(900), latency(0.08), loss(2, 1500)),
		},
		want: map[string]float64{"w2": 1, "w3": 1, "cp": 1},
	}, {
		name: "a 20 Mbit/s link ranks below a healthy one",
		in: map[string]api.Measurements{
			"healthy": node(atLeast(500), latency(0.2), loss(0, 1500)),
			"shaped":  node(measuredBW(20), latency(0.4), loss(0, 1500)),
		},
		below: [][2]string{{"shaped", "healthy"}},
	}, {
		name: "2 % loss alone ranks below a healthy link",
		in: map[string]api.Measurements{
			"healthy": node(atLeast(500), latency(0.2), loss(0, 1500)),
			"lossy":   node(atLeast(500), latency(0.2), loss(30, 1500)),
		},
		below: [][2]string{{"lossy", "healthy"}},
	}, {
		name: "2 % loss from few echoes cannot be told from 1 %",
		in: map[string]api.Measurements{
			"two":   node(atLeast(500), latency(0.2), loss(4, 200)),
			"one.5": node(atLeast(500), latency(0.2), loss(3, 200)),
		},
		equal: [][]string{{"two", "one.5"}},
	}, {
		name: "two shaped links a few per cent apart score the same; a third at half their rate does not",
		in: map[string]api.Measurements{
			"a": node(measuredBW(20.6), latency(0.3), loss(0, 1500)),
			"b": node(measuredBW(19.8), latency(0.3), loss(0, 1500)),
			"c": node(measuredBW(10), latency(0.3), loss(0, 1500)),
		},
		equal: [][]string{{"a", "b"}},
		below: [][2]string{{"c", "a"}},
	}, {
		name: "a node without a bandwidth ranks below the lowest measured in full",
		in: map[string]api.Measurements{
			"measured-50": node(measuredBW(50), latency(0.2), loss(0, 1500)),
			"measured-80": node(measuredBW(80), latency(0.2), loss(0, 1500)),
			"unknown":     node(nil, latency(0.2), loss(0, 1500)),
		},
		want:  map[string]float64{"measured-50": 0.5, "measured-80": 0.8},
		below: [][2]string{{"unknown", "measured-50"}},
	}, {
		name: "a node unmeasured ranks below the only node measured, even one scoring fully",
		in: map[string]api.Measurements{
			"measured": node(measuredBW(100), latency(0.2), loss(0, 1500)),
			"unknown":  node(nil, nil, nil),
		},
		want:  map[string]float64{"measured": 1},
		below: [][2]string{{"unknown", "measured"}},
	}, {
		name: "a low lower bound cannot be told from a faster link: the host sent its trains slowly",
		in: map[string]api.Measurements{
			"bound-11":     node(atLeast(11), latency(0.2), loss(0, 1500)),
			"measured-100": node(measuredBW(100), latency(0.2), loss(0, 1500)),
		},
		want: map[string]float64{"bound-11": 1, "measured-100": 1},
	}, {
		name: "a node without a bandwidth and worse loss scores by what it has, below the lowest",
		in: map[string]api.Measurements{
			"measured": node(atLeast(500), latency(0.2), loss(0, 1500)),
			"unknown":  node(nil, latency(0.2), loss(300, 1500)),
		},
		below: [][2]string{{"unknown", "measured"}},
	}, {
		name: "without any node measured in full, nodes rank by what they have",
		in: map[string]api.Measurements{
			"near": node(nil, latency(0.2), loss(0, 1500)),
			"far":  node(nil, latency(30), loss(0, 1500)),
		},
		below: [][2]string{{"far", "near"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := DefaultTargets().Scores(tc.in)
			if len(got) != len(tc.in) {
				t.Fatalf("%d scores for %d nodes: %v", len(got), len(tc.in), got)
			}
			for name, want := range tc.want {
				if math.Abs(got[name]-want) > 1e-9 {
					t.Errorf("%s: score %v, want %v (all: %v)", name, got[name], want, got)
				}
			}
			for _, group := range tc.equal {
				for _, n := range group[1:] {
					if got[n] != got[group[0]] {
						t.Errorf("%s scores %v, %s %v: want the same (all: %v)", n, got[n], group[0], got[group[0]], got)
					}
				}
			}
			for _, p := range tc.below {
				if got[p[0]] >= got[p[1]] {
					t.Errorf("%s scores %v, not below %s's %v (all: %v)", p[0], got[p[0]], p[1], got[p[1]], got)
				}
			}
		})
	}
}

func TestTargetsValidate(t *testing.T) {
	if err := DefaultTargets().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		field string
		mod   func(*Targets)
	}{
		{"bandwidth target", func(t *Targets) { t.BandwidthMbps = 0 }},
		{"bandwidth target", func(t *Targets) { t.BandwidthMbps = math.NaN() }},
		{"bandwidth target", func(t *Targets) { t.BandwidthMbps = math.Inf(1) }},
		{"latency target", func(t *Targets) { t.LatencyMs = -1 }},
		{"latency target", func(t *Targets) { t.LatencyMs = math.NaN() }},
		{"loss target", func(t *Targets) { t.PacketLoss = 1 }},
		{"loss target", func(t *Targets) { t.PacketLoss = math.Inf(-1) }},
	} {
		tg := DefaultTargets()
		tc.mod(&tg)
		if err := tg.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%+v: Validate() = %v, want an error naming %q", tg, err, tc.field)
		}
	}
}
