package network

import "kns3.dev/kns3/simulator/api/ties"

// tieBandwidths sets each link's RankedBandwidthMbps by the rule the
// simulator ties its scores by (simulator/api/ties): links are taken
// fastest first, and every link whose span reaches the fastest remaining
// link's ranks at that link's bandwidth. A span is the served 95 %
// interval, narrowed so that two spans apart mean a 95 % test tells the
// links apart, and reaching down at least a fifth of the bandwidth
// (ties.DefaultBandwidthRatio): two identical links the probes measured a
// few Mbit/s apart rank alike, and so do two links too close for the
// difference to be worth moving a pod.
//
// A lower bound is ranked at its bound: its span ends there, so it ranks
// at a faster link's bandwidth only within the smallest difference that
// counts. Ranked higher, a link the probes could not push would take the
// pods a fast one could carry. A bound that leaves room for the pod is
// the exception NetworkCapacity's NormalizeScore makes: more than enough
// changes nothing.
//
// It runs once per answer, over all its links: how far apart two
// measurements can be told is the answer's, not a pod's.
func tieBandwidths(links map[string]Link) {
	if len(links) == 0 {
		return
	}
	d := ties.DefaultDifferences()
	names := make([]string, 0, len(links))
	spans := make([]ties.Span, 0, len(links))
	for name, l := range links {
		names = append(names, name)
		spans = append(spans, d.BandwidthSpan(l.BandwidthMbps, l.BandwidthLowMbps, l.BandwidthHighMbps, l.BandwidthAtLeast))
	}
	for i, ranked := range ties.Rank(names, spans) {
		l := links[names[i]]
		l.RankedBandwidthMbps = ranked
		links[names[i]] = l
	}
}
