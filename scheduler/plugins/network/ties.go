package network

import (
	"cmp"
	"slices"
)

// tieNarrowing narrows a served 95 % interval to the width at which two
// intervals of equal width that do not overlap mean a 95 % test tells
// them apart (1.386/1.960, the z of an 83.4 % interval), as the
// simulator does when it ties scores.
const tieNarrowing = 1.3859 / 1.9600

// tieBandwidths sets each link's RankedBandwidthMbps. Links are taken
// fastest first; every link whose narrowed interval reaches the fastest
// remaining link's is ranked at that link's bandwidth. Two identical links
// the probes measured a few Mbit/s apart so rank alike.
//
// A lower bound keeps its bound: its interval has no upper end, and
// ranking it at a faster link's bandwidth would fill a slow link the
// probes could not push with the pods a fast one could carry.
//
// It runs once per answer, over all its links: how far apart two
// measurements can be told is the answer's, not a pod's.
func tieBandwidths(links map[string]Link) {
	type span struct {
		name             string
		value, low, high float64
	}
	spans := make([]span, 0, len(links))
	for name, l := range links {
		l.RankedBandwidthMbps = l.BandwidthMbps
		links[name] = l
		if !l.BandwidthAtLeast {
			spans = append(spans, span{name, l.BandwidthMbps,
				l.BandwidthMbps - tieNarrowing*(l.BandwidthMbps-l.BandwidthLowMbps),
				l.BandwidthMbps + tieNarrowing*(l.BandwidthHighMbps-l.BandwidthMbps)})
		}
	}
	slices.SortFunc(spans, func(a, b span) int {
		if c := cmp.Compare(b.value, a.value); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	for i := 0; i < len(spans); {
		fastest := spans[i]
		for ; i < len(spans) && spans[i].high >= fastest.low; i++ {
			l := links[spans[i].name]
			l.RankedBandwidthMbps = fastest.value
			links[spans[i].name] = l
		}
	}
}
