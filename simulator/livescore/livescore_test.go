package livescore

import (
	"fmt"
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

// noQuorum ranks from the first node measured: the cases about ranking
// partial nodes are past warm-up.
func noQuorum(r *Rules) { r.Quorum = 0 }

// lossTarget0 scores any loss below a perfect link: only the smallest
// difference that counts can tie two lossy links then.
func lossTarget0(r *Rules) { r.PacketLoss = 0 }

func TestScores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules func(*Rules)
		in    map[string]api.Measurements
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
		name: "1 % loss against none, over 1,400 echoes: resolved and large enough",
		in: map[string]api.Measurements{
			"none": node(atLeast(500), latency(0.2), loss(0, 1400)),
			"one":  node(atLeast(500), latency(0.2), loss(14, 1400)),
		},
		below: [][2]string{{"one", "none"}},
	}, {
		name: "0.3 % loss against none: tied",
		in: map[string]api.Measurements{
			"none":  node(atLeast(500), latency(0.2), loss(0, 1500)),
			"three": node(atLeast(500), latency(0.2), loss(5, 1500)),
		},
		equal: [][]string{{"none", "three"}},
	}, {
		name: "0.3 % loss against none, over 15,000 echoes, with no loss target: resolved, and still too small to rank", rules: lossTarget0,
		in: map[string]api.Measurements{
			"none":  node(atLeast(500), latency(0.2), loss(0, 15000)),
			"three": node(atLeast(500), latency(0.2), loss(45, 15000)),
		},
		equal: [][]string{{"none", "three"}},
	}, {
		name: "1.2 against 1.3 ms over 1,400 echoes each: resolved, too small to rank",
		in: map[string]api.Measurements{
			"a": node(atLeast(500), latency(1.2), loss(0, 1400)),
			"b": node(atLeast(500), latency(1.3), loss(0, 1400)),
		},
		equal: [][]string{{"a", "b"}},
	}, {
		name: "a 0.1 ms difference above the target: tied",
		in: map[string]api.Measurements{
			"a": node(atLeast(500), latency(2.0), loss(0, 1500)),
			"b": node(atLeast(500), latency(2.1), loss(0, 1500)),
		},
		equal: [][]string{{"a", "b"}},
	}, {
		name: "2 against 3 ms: ranked",
		in: map[string]api.Measurements{
			"a": node(atLeast(500), latency(2), loss(0, 1500)),
			"b": node(atLeast(500), latency(3), loss(0, 1500)),
		},
		below: [][2]string{{"b", "a"}},
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
		name: "links 15 % apart tie, measured well or not; 30 % apart rank",
		in: map[string]api.Measurements{
			"a": node(measuredBW(80), latency(0.3), loss(0, 1500)),
			"b": node(measuredBW(68), latency(0.3), loss(0, 1500)),
			"c": node(measuredBW(56), latency(0.3), loss(0, 1500)),
		},
		equal: [][]string{{"a", "b"}},
		below: [][2]string{{"c", "a"}},
	}, {
		name: "a steady 50 Mbit/s link ranks below a 100 Mbit/s one whose slowed train widens nothing",
		in: map[string]api.Measurements{
			"fast":   node(measuredBW(100), latency(0.3), loss(0, 1500)),
			"steady": node(measuredBW(50), latency(0.3), loss(0, 1500)),
		},
		below: [][2]string{{"steady", "fast"}},
	}, {
		name: "a low lower bound is ranked at its bound, below a faster link measured", rules: noQuorum,
		in: map[string]api.Measurements{
			"bound-11":     node(atLeast(11), latency(0.2), loss(0, 1500)),
			"measured-100": node(measuredBW(100), latency(0.2), loss(0, 1500)),
		},
		want:  map[string]float64{"measured-100": 1},
		below: [][2]string{{"bound-11", "measured-100"}},
	}, {
		name: "a lower bound at the target ties with the best: more than enough changes nothing",
		in: map[string]api.Measurements{
			"bound-100":    node(atLeast(100), latency(0.2), loss(0, 1500)),
			"measured-900": node(measuredBW(900), latency(0.2), loss(0, 1500)),
		},
		want: map[string]float64{"bound-100": 1, "measured-900": 1},
	}, {
		name: "a node without a bandwidth ranks below the lowest measured in full", rules: noQuorum,
		in: map[string]api.Measurements{
			"measured-50": node(measuredBW(50), latency(0.2), loss(0, 1500)),
			"measured-80": node(measuredBW(80), latency(0.2), loss(0, 1500)),
			"unknown":     node(nil, latency(0.2), loss(0, 1500)),
		},
		want:  map[string]float64{"measured-50": 0.5, "measured-80": 0.8},
		below: [][2]string{{"unknown", "measured-50"}},
	}, {
		name: "a node unmeasured ranks below the only node measured, even one scoring fully", rules: noQuorum,
		in: map[string]api.Measurements{
			"measured": node(measuredBW(100), latency(0.2), loss(0, 1500)),
			"unknown":  node(nil, nil, nil),
		},
		want:  map[string]float64{"measured": 1},
		below: [][2]string{{"unknown", "measured"}},
	}, {
		name: "a node without a bandwidth and worse loss scores by what it has, below the lowest", rules: noQuorum,
		in: map[string]api.Measurements{
			"measured": node(atLeast(500), latency(0.2), loss(0, 1500)),
			"unknown":  node(nil, latency(0.2), loss(300, 1500)),
		},
		below: [][2]string{{"unknown", "measured"}},
	}, {
		name: "without any node measured in full, nodes rank by what they have", rules: noQuorum,
		in: map[string]api.Measurements{
			"near": node(nil, latency(0.2), loss(0, 1500)),
			"far":  node(nil, latency(30), loss(0, 1500)),
		},
		below: [][2]string{{"far", "near"}},
	}, {
		name: "one node measured in full, three still without a bandwidth: warming up, all alike",
		in: map[string]api.Measurements{
			"first":  node(measuredBW(60), latency(0.2), loss(0, 1500)),
			"second": node(nil, latency(0.2), loss(0, 1500)),
			"third":  node(nil, latency(0.2), loss(0, 1500)),
			"fourth": node(nil, latency(0.2), loss(0, 1500)),
		},
		want: map[string]float64{"first": 0, "second": 0, "third": 0, "fourth": 0},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rules := DefaultRules()
			if tc.rules != nil {
				tc.rules(&rules)
			}
			res := rules.Scores(tc.in, len(tc.in))
			got := res.Scores
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

// TestWarmUp: scores rank once the quorum of the nodes the prober knows,
// measured or not, is measured in full; until then all score 0 and the
// result says how far it is.
func TestWarmUp(t *testing.T) {
	full := func(mbps float64) api.Measurements { return node(measuredBW(mbps), latency(0.2), loss(0, 1500)) }
	nodes := func(complete, partial int) map[string]api.Measurements {
		out := map[string]api.Measurements{}
		for i := range complete {
			out[fmt.Sprintf("full-%d", i)] = full(float64(10 + 10*i))
		}
		for i := range partial {
			out[fmt.Sprintf("partial-%d", i)] = node(nil, latency(0.2), loss(0, 1500))
		}
		return out
	}
	for _, tc := range []struct {
		name              string
		complete, partial int
		known             int
		warm              bool
	}{
		{"8 of 10 measured in full", 8, 2, 10, true},
		{"9 of 10", 9, 1, 10, false},
		{"9 measured of 12 agents found: the unanswered count too", 9, 0, 12, true},
		{"a single node", 1, 0, 1, false},
		{"nothing measured yet", 0, 3, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := DefaultRules().Scores(nodes(tc.complete, tc.partial), tc.known)
			if (res.WarmUp != nil) != tc.warm {
				t.Fatalf("warming up %v, want %v (%+v)", res.WarmUp != nil, tc.warm, res.WarmUp)
			}
			distinct := map[float64]bool{}
			for _, s := range res.Scores {
				distinct[s] = true
			}
			if tc.warm {
				if len(distinct) != 1 || !distinct[0] {
					t.Errorf("warming up, scores %v: want every node at 0", res.Scores)
				}
				if w := res.WarmUp; w.MeasuredInFull != tc.complete || w.Nodes != tc.known || w.Quorum != DefaultQuorum {
					t.Errorf("warm-up %+v, want %d of %d at %g", w, tc.complete, tc.known, DefaultQuorum)
				}
			} else if tc.complete > 1 && len(distinct) < 2 {
				t.Errorf("past warm-up, scores %v: links 10 to %d Mbit/s should rank", res.Scores, 10*tc.complete)
			}
		})
	}
}

func TestRulesValidate(t *testing.T) {
	if err := DefaultRules().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		field string
		mod   func(*Rules)
	}{
		{"quorum", func(r *Rules) { r.Quorum = 1.5 }},
		{"quorum", func(r *Rules) { r.Quorum = math.NaN() }},
		{"smallest difference, bandwidth ratio", func(r *Rules) { r.Differences.BandwidthRatio = 1 }},
		{"smallest difference, latency", func(r *Rules) { r.Differences.LatencyMs = -1 }},
		{"bandwidth target", func(r *Rules) { r.BandwidthMbps = 0 }},
	} {
		r := DefaultRules()
		tc.mod(&r)
		if err := r.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.field) {
			t.Errorf("%+v: Validate() = %v, want an error naming %q", r, err, tc.field)
		}
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
