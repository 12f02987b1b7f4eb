package networkpeers

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

// nodeCost is what a candidate node costs the pod: the traffic-weighted
// mean, over its peers' nodes, of what a round trip to them costs (pair
// Cost), in milliseconds, in [lowMs, highMs]; rankedMs is what it ranks
// at once costs too close to tell apart tie. Unknown when one of the pairs
// to its peers' nodes is unknown.
type nodeCost struct {
	known               bool
	ms, lowMs, highMs   float64
	rankedMs            float64
	measured, estimated int // pairs to peers' nodes by how they are known
}

// pairCost is what one round trip through pair c costs: its round trip,
// stretched by 1/(1−share) when the pod's traffic to the peers behind it
// would take that share of the pair's free bandwidth (the delay of an
// M/M/1 queue), plus lossPenaltyMs for each lost packet. Values are the
// pair's round trip and loss and their intervals' ends.
func pairCost(c network.PairCost, share float64) (ms, low, high float64) {
	stretch := 1 / (1 - min(share, maxShare))
	ms, low, high = c.RTTMs*stretch, c.RTTLowMs*stretch, c.RTTHighMs*stretch
	if c.LossKnown {
		ms += c.Loss * lossPenaltyMs
		low += c.LossLow * lossPenaltyMs
		high += c.LossHigh * lossPenaltyMs
	}
	return ms, low, high
}

// trafficShare is the share of pair c's free bandwidth that trafficMbps
// would take: 0 when the pod declares no traffic, or the pair's bandwidth
// is not measured or is only a lower bound (the probes could not fill it).
// What the pair already carries is not measured; the traffic on the two
// nodes' links is, and the more loaded of the two bounds what is free.
func trafficShare(c network.PairCost, trafficMbps float64, a, b network.Link, aKnown, bKnown bool) float64 {
	if trafficMbps <= 0 || !c.BandwidthKnown || c.BandwidthAtLeast {
		return 0
	}
	free := freeMbps(c, a, b, aKnown, bKnown)
	if free <= 0 {
		return math.Inf(1)
	}
	return trafficMbps / free
}

// freeMbps is a measured pair's bandwidth less the traffic measured on the
// more loaded of its two nodes' links, at least 0.
func freeMbps(c network.PairCost, a, b network.Link, aKnown, bKnown bool) float64 {
	use := 0.0
	if aKnown && a.UseMeasured {
		use = a.UseMbps
	}
	if bKnown && b.UseMeasured {
		use = max(use, b.UseMbps)
	}
	return max(c.BandwidthMbps-use, 0)
}

// costOf is what node costs the pod whose peers hosts hold (their pairs
// looked up in pairs).
func costOf(node string, hosts []peerHost, pairs *network.Pairs, links map[string]network.Link) nodeCost {
	out := nodeCost{known: true}
	nodeLink, nodeKnown := links[node]
	from := pairs.Node(node)
	for _, h := range hosts {
		c := pairs.CostBetween(from, h.pairs)
		switch c.Source {
		case network.CostUnknown:
			return nodeCost{}
		case network.CostMeasured:
			out.measured++
		case network.CostEstimated:
			out.estimated++
		}
		hostLink, hostKnown := links[h.node]
		ms, low, high := pairCost(c, trafficShare(c, h.trafficMbps, nodeLink, hostLink, nodeKnown, hostKnown))
		out.ms += h.weight * ms
		out.lowMs += h.weight * low
		out.highMs += h.weight * high
	}
	return out
}

// rankCosts sets each known cost's rankedMs by the rule the simulator ties
// its scores by (simulator/api/ties), the cost read as a round trip:
// costs are taken lowest first, and every cost whose span reaches the
// lowest remaining one's ranks at that one. Two nodes whose costs are
// within the noise of their measurements, or closer than the smallest
// difference that counts (a tenth, and at least 0.2 ms), rank alike.
func rankCosts(names []string, costs []nodeCost) {
	d := ties.DefaultDifferences()
	var known []string
	var spans []ties.Span
	var index []int
	for i, c := range costs {
		if !c.known {
			continue
		}
		s := d.LatencySpan(c.ms, c.lowMs, c.highMs)
		// ties.Rank ranks higher as better: a cost is ranked negated.
		known, index = append(known, names[i]), append(index, i)
		spans = append(spans, ties.Span{Value: -s.Value, Low: -s.High, High: -s.Low})
	}
	for j, ranked := range ties.Rank(known, spans) {
		costs[index[j]].rankedMs = -ranked
	}
}

// unknownScore is Score's raw score for a node whose cost is unknown.
const unknownScore = -1

// rawScore is Score's raw score: the ranked cost in microseconds, lower
// better, or unknownScore.
func (c nodeCost) rawScore() int64 {
	if !c.known {
		return unknownScore
	}
	return int64(math.Round(c.rankedMs * 1000))
}

// normalize maps raw scores onto 0–MaxNodeScore in proportion: the lowest
// cost scores MaxNodeScore, and a cost loses points in proportion to how
// much it exceeds the lowest, as a share of the highest. Equal costs score
// alike, and two costs a little apart a few points apart. A known cost
// scores at least 1, an unknown one 0: unknown is never the best.
func normalize(scores fwk.NodeScoreList) {
	lowest, highest := int64(math.MaxInt64), int64(-1)
	for _, s := range scores {
		if s.Score == unknownScore {
			continue
		}
		lowest, highest = min(lowest, s.Score), max(highest, s.Score)
	}
	for i, s := range scores {
		switch {
		case s.Score == unknownScore:
			scores[i].Score = 0
		case highest <= 0:
			scores[i].Score = fwk.MaxNodeScore
		default:
			lost := float64(fwk.MaxNodeScore) * float64(s.Score-lowest) / float64(highest)
			scores[i].Score = max(int64(math.Round(float64(fwk.MaxNodeScore)-lost)), 1)
		}
	}
}
