package network

import (
	"maps"
	"testing"
)

// Links rank by the rule the simulator ties its scores by
// (simulator/api/ties): a bandwidth ranks at a faster link's when the two
// cannot be told apart, or differ by less than a fifth of the faster one.
// A lower bound is ranked at its bound: its span ends there.
func TestTieBandwidths(t *testing.T) {
	measured := func(v, low, high float64) Link {
		return Link{BandwidthMbps: v, BandwidthLowMbps: low, BandwidthHighMbps: high}
	}
	bound := func(v float64) Link {
		return Link{BandwidthMbps: v, BandwidthLowMbps: v, BandwidthHighMbps: v, BandwidthAtLeast: true}
	}
	for _, tc := range []struct {
		name  string
		links map[string]Link
		want  map[string]float64
	}{{
		name:  "identical links measured a few Mbit/s apart",
		links: map[string]Link{"a": measured(98, 88, 108), "b": measured(103, 93, 113)},
		want:  map[string]float64{"a": 103, "b": 103},
	}, {
		name:  "resolved, but less than a fifth apart: too small to count",
		links: map[string]Link{"a": measured(100, 99, 101), "b": measured(85, 84, 86)},
		want:  map[string]float64{"a": 100, "b": 100},
	}, {
		name:  "resolved and more than a fifth apart: as measured",
		links: map[string]Link{"fast": measured(100, 90, 110), "slow": measured(25, 22.5, 27.5)},
		want:  map[string]float64{"fast": 100, "slow": 25},
	}, {
		name:  "more than a fifth apart, unresolved: alike",
		links: map[string]Link{"fast": measured(100, 20, 180), "slow": measured(25, 5, 60)},
		want:  map[string]float64{"fast": 100, "slow": 100},
	}, {
		name: "a group starts at its fastest link: one beyond it ranks apart, though within a tied link's reach",
		links: map[string]Link{"a": measured(100, 98, 102), "b": measured(82, 80, 84),
			"c": measured(70, 68, 72)},
		want: map[string]float64{"a": 100, "b": 100, "c": 70},
	}, {
		name:  "a lower bound far below a measured link keeps its bound",
		links: map[string]Link{"bound": bound(11), "fast": measured(100, 90, 110)},
		want:  map[string]float64{"bound": 11, "fast": 100},
	}, {
		name:  "a lower bound within a fifth of a measured link ties with it",
		links: map[string]Link{"bound": bound(90), "fast": measured(100, 99, 101)},
		want:  map[string]float64{"bound": 100, "fast": 100},
	}, {
		name:  "a lower bound as the fastest: the links within a fifth of its bound rank at it",
		links: map[string]Link{"bound": bound(500), "measured": measured(450, 440, 460), "slow": measured(300, 290, 310)},
		want:  map[string]float64{"bound": 500, "measured": 500, "slow": 300},
	}, {
		name:  "a link served without an interval",
		links: map[string]Link{"a": measured(50, 50, 50), "b": measured(45, 45, 45)},
		want:  map[string]float64{"a": 50, "b": 50},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			links := maps.Clone(tc.links)
			tieBandwidths(links)
			got := map[string]float64{}
			for name, l := range links {
				got[name] = l.RankedBandwidthMbps
				if want := tc.links[name]; l.BandwidthMbps != want.BandwidthMbps || l.BandwidthAtLeast != want.BandwidthAtLeast {
					t.Errorf("%s: %+v, want only its ranked bandwidth set", name, l)
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("ranked at %v, want %v", got, tc.want)
			}
		})
	}
	tieBandwidths(nil) // an answer without links
}
