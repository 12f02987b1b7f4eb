package peers

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

func TestCostOfPair(t *testing.T) {
	measured := network.PairCost{Source: network.CostMeasured, RTTMs: 2, RTTLowMs: 1.8, RTTHighMs: 2.2,
		Loss: 0.04, LossLow: 0.03, LossHigh: 0.05, LossKnown: true, BandwidthMbps: 100, BandwidthKnown: true}
	estimated := network.PairCost{Source: network.CostEstimated, RTTMs: 2, RTTLowMs: 1, RTTHighMs: 3}
	for _, tc := range []struct {
		name  string
		pc    network.PairCost
		share float64
		want  [3]float64
	}{
		{"a round trip by the coordinates", estimated, 0, [3]float64{2, 1, 3}},
		// 4 % of packets wait 200 ms for a retransmission: 8 ms.
		{"loss adds its retransmissions", measured, 0, [3]float64{10, 7.8, 12.2}},
		// Half the pair's free bandwidth doubles the round trip.
		{"a share of the bandwidth stretches the round trip", measured, 0.5, [3]float64{12, 9.6, 14.4}},
		{"a pair the traffic would overfill counts at ten times", estimated, math.Inf(1), [3]float64{20, 10, 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, lo, hi := CostOfPair(tc.pc, tc.share)
			if diff := cmp.Diff(tc.want, [3]float64{v, lo, hi}, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("CostOfPair (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrafficShare(t *testing.T) {
	pc := network.PairCost{Source: network.CostMeasured, RTTMs: 1, BandwidthMbps: 100, BandwidthKnown: true}
	atLeast := pc
	atLeast.BandwidthAtLeast = true
	idle, busy := network.Link{UseMeasured: true, UseMbps: 10}, network.Link{UseMeasured: true, UseMbps: 60}
	for _, tc := range []struct {
		name         string
		pc           network.PairCost
		traffic      float64
		a, b         network.Link
		aKnown, bOK  bool
		want         float64
		wantFreeMbps float64
	}{
		{"no traffic declared", pc, 0, idle, idle, true, true, 0, 90},
		{"the bandwidth less the busier link's use", pc, 20, idle, busy, true, true, 0.5, 40},
		{"links not measured", pc, 20, network.Link{}, network.Link{}, false, false, 0.2, 100},
		{"a lower bound adds no share", atLeast, 20, idle, idle, true, true, 0, 90},
		{"a bandwidth not measured adds no share", network.PairCost{Source: network.CostEstimated}, 20, idle, idle, true, true, 0, 0},
		{"nothing free", pc, 20, network.Link{UseMeasured: true, UseMbps: 200}, idle, true, true, math.Inf(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TrafficShare(tc.pc, tc.traffic, tc.a, tc.b, tc.aKnown, tc.bOK); got != tc.want {
				t.Errorf("TrafficShare = %g, want %g", got, tc.want)
			}
			if got := FreeMbps(tc.pc, tc.a, tc.b, tc.aKnown, tc.bOK); got != tc.wantFreeMbps {
				t.Errorf("FreeMbps = %g, want %g", got, tc.wantFreeMbps)
			}
		})
	}
}

func TestRankCosts(t *testing.T) {
	cost := func(ms, low, high float64) NodeCost { return NodeCost{Known: true, Ms: ms, LowMs: low, HighMs: high} }
	for _, tc := range []struct {
		name  string
		costs []NodeCost
		want  []float64 // ranked, NaN for unknown
	}{{
		name:  "within 0.2 ms of the lowest ties",
		costs: []NodeCost{cost(0, 0, 0), cost(0.15, 0.15, 0.15), cost(0.5, 0.5, 0.5)},
		want:  []float64{0, 0, 0.5},
	}, {
		name:  "within a tenth of the lowest ties",
		costs: []NodeCost{cost(10, 10, 10), cost(10.9, 10.9, 10.9), cost(11.2, 11.2, 11.2)},
		want:  []float64{10, 10, 11.2},
	}, {
		// 3 against 5 ms, but 5 could be 2.5: the measurements cannot
		// tell them apart.
		name:  "overlapping intervals tie",
		costs: []NodeCost{cost(3, 2.9, 3.1), cost(5, 2.5, 7.5)},
		want:  []float64{3, 3},
	}, {
		name:  "unknown costs are not ranked",
		costs: []NodeCost{{}, cost(1, 1, 1)},
		want:  []float64{math.NaN(), 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			names := make([]string, len(tc.costs))
			for i := range names {
				names[i] = string(rune('a' + i))
			}
			RankCosts(names, tc.costs)
			for i, c := range tc.costs {
				if !c.Known {
					if !math.IsNaN(tc.want[i]) {
						t.Errorf("%s: unknown, want ranked at %g", names[i], tc.want[i])
					}
					continue
				}
				if c.RankedMs != tc.want[i] {
					t.Errorf("%s (%g ms) ranked at %g, want %g", names[i], c.Ms, c.RankedMs, tc.want[i])
				}
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  []int64
		want []int64
	}{
		{"in proportion to the highest cost", []int64{1000, 2000, 4000}, []int64{100, 75, 25}},
		{"close costs score close", []int64{10000, 11000}, []int64{100, 91}},
		{"equal costs equal scores", []int64{3000, 3000, 5000}, []int64{100, 100, 60}},
		{"all on the peers' node", []int64{0, 0}, []int64{100, 100}},
		{"a known cost scores at least 1, an unknown 0", []int64{0, 9000, UnknownScore}, []int64{100, 1, 0}},
		{"all unknown", []int64{UnknownScore, UnknownScore}, []int64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scores := make(fwk.NodeScoreList, len(tc.raw))
			for i, r := range tc.raw {
				scores[i] = fwk.NodeScore{Name: string(rune('a' + i)), Score: r}
			}
			Normalize(scores)
			for i, s := range scores {
				if s.Score != tc.want[i] {
					t.Errorf("%s: raw %d scored %d, want %d", s.Name, tc.raw[i], s.Score, tc.want[i])
				}
			}
		})
	}
}
