package peers

import (
	"math"

	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/simulator/api/ties"
)

// lossPenaltyMs is what a lost packet adds to an exchange: it waits for a
// retransmission timeout, at least 200 ms in Linux (TCP_RTO_MIN). A pair
// that loses a share p of its packets so adds p × 200 ms to each round
// trip on average: 1 % loss costs 2 ms, more than most round trips inside
// a cluster.
const lossPenaltyMs = 200

// maxShare caps the share of a pair's free bandwidth a pod's traffic is
// counted at: a pair it would fill counts as ten times its round trip.
const maxShare = 0.9

// NodeCost is what a candidate node costs the pod: the traffic-weighted
// mean, over its peers' nodes, of what a round trip to them costs
// (CostOfPair), in milliseconds, in [LowMs, HighMs]; RankedMs is what it
// ranks at once costs too close to tell apart tie (RankCosts). Unknown
// (Known false) when one of the pairs to its peers' nodes is unknown.
type NodeCost struct {
	Known             bool
	Ms, LowMs, HighMs float64
	RankedMs          float64
	// Measured and Estimated count the pairs to the peers' nodes by how
	// they are known.
	Measured, Estimated int
}

// CostOfPair is what one round trip through pair c costs: its round trip,
// stretched by 1/(1−share) when the pod's traffic to the peers behind it
// would take that share of the pair's free bandwidth (the delay of an
// M/M/1 queue), plus lossPenaltyMs for each lost packet. Values are the
// pair's round trip and loss and their intervals' ends.
func CostOfPair(c network.PairCost, share float64) (ms, low, high float64) {
	stretch := 1 / (1 - min(share, maxShare))
	ms, low, high = c.RTTMs*stretch, c.RTTLowMs*stretch, c.RTTHighMs*stretch
	if c.LossKnown {
		ms += c.Loss * lossPenaltyMs
		low += c.LossLow * lossPenaltyMs
		high += c.LossHigh * lossPenaltyMs
	}
	return ms, low, high
}

// TrafficShare is the share of pair c's free bandwidth that trafficMbps
// would take: 0 when the pod declares no traffic, or the pair's bandwidth
// is not measured or is only a lower bound (the probes could not fill it).
// What the pair already carries is not measured; the traffic on the two
// nodes' links is, and the more loaded of the two bounds what is free.
func TrafficShare(c network.PairCost, trafficMbps float64, a, b network.Link, aKnown, bKnown bool) float64 {
	if trafficMbps <= 0 || !c.BandwidthKnown || c.BandwidthAtLeast {
		return 0
	}
	free := FreeMbps(c, a, b, aKnown, bKnown)
	if free <= 0 {
		return math.Inf(1)
	}
	return trafficMbps / free
}

// FreeMbps is a measured pair's bandwidth less the traffic measured on the
// more loaded of its two nodes' links, at least 0.
func FreeMbps(c network.PairCost, a, b network.Link, aKnown, bKnown bool) float64 {
	use := 0.0
	if aKnown && a.UseMeasured {
		use = a.UseMbps
	}
	if bKnown && b.UseMeasured {
		use = max(use, b.UseMbps)
	}
	return max(c.BandwidthMbps-use, 0)
}

// CostOf is what node costs the pod whose peers hosts hold, by pairs,
// their Pairs looked up there (network.Pairs.Node), and by the links'
// measured use.
func CostOf(node string, hosts []Host, pairs *network.Pairs, links map[string]network.Link) NodeCost {
	out := NodeCost{Known: true}
	nodeLink, nodeKnown := links[node]
	from := pairs.Node(node)
	for _, h := range hosts {
		c := pairs.CostBetween(from, h.Pairs)
		switch c.Source {
		case network.CostUnknown:
			return NodeCost{}
		case network.CostMeasured:
			out.Measured++
		case network.CostEstimated:
			out.Estimated++
		}
		hostLink, hostKnown := links[h.Node]
		ms, low, high := CostOfPair(c, TrafficShare(c, h.TrafficMbps, nodeLink, hostLink, nodeKnown, hostKnown))
		out.Ms += h.Weight * ms
		out.LowMs += h.Weight * low
		out.HighMs += h.Weight * high
	}
	return out
}

// RankCosts sets each known cost's RankedMs by the rule the simulator ties
// its scores by (simulator/api/ties), the cost read as a round trip:
// costs are taken lowest first, and every cost whose span reaches the
// lowest remaining one's ranks at that one. Two nodes whose costs are
// within the noise of their measurements, or closer than the smallest
// difference that counts (a tenth, and at least 0.2 ms), rank alike.
func RankCosts(names []string, costs []NodeCost) {
	d := ties.DefaultDifferences()
	var known []string
	var spans []ties.Span
	var index []int
	for i, c := range costs {
		if !c.Known {
			continue
		}
		s := d.LatencySpan(c.Ms, c.LowMs, c.HighMs)
		// ties.Rank ranks higher as better: a cost is ranked negated.
		known, index = append(known, names[i]), append(index, i)
		spans = append(spans, ties.Span{Value: -s.Value, Low: -s.High, High: -s.Low})
	}
	for j, ranked := range ties.Rank(known, spans) {
		costs[index[j]].RankedMs = -ranked
	}
}

// UnknownScore is Score's raw score for a node whose cost is unknown.
const UnknownScore = -1

// RawScore is Score's raw score: the ranked cost in microseconds, lower
// better, or UnknownScore.
func (c NodeCost) RawScore() int64 {
	if !c.Known {
		return UnknownScore
	}
	return int64(math.Round(c.RankedMs * 1000))
}

// Normalize is NormalizeScore on raw scores (RawScore): it maps them
// onto 0–MaxNodeScore in proportion: the lowest cost scores MaxNodeScore,
// and a cost loses points in proportion to how much it exceeds the
// lowest, as a share of the highest. Equal costs score
// alike, and two costs a little apart a few points apart. A known cost
// scores at least 1, an unknown one 0: unknown is never the best.
func Normalize(scores fwk.NodeScoreList) {
	lowest, highest := int64(math.MaxInt64), int64(-1)
	for _, s := range scores {
		if s.Score == UnknownScore {
			continue
		}
		lowest, highest = min(lowest, s.Score), max(highest, s.Score)
	}
	for i, s := range scores {
		switch {
		case s.Score == UnknownScore:
			scores[i].Score = 0
		case highest <= 0:
			scores[i].Score = fwk.MaxNodeScore
		default:
			lost := float64(fwk.MaxNodeScore) * float64(s.Score-lowest) / float64(highest)
			scores[i].Score = max(int64(math.Round(float64(fwk.MaxNodeScore)-lost)), 1)
		}
	}
}
