package customscore

import (
	"os"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

// breakerReporter is a source with a circuit breaker, whose state the
// status shows.
type breakerReporter interface {
	// breakerState is status.BreakerClosed or status.BreakerOpen.
	breakerState() string
}

// knownNodesOnly leaves in sim the scores, metrics and pairs of the
// cluster's nodes only: the simulator may name anything (live
// measurements carry what agents say), and a name that is no node tells a
// reader nothing, and may be long or need escaping. Without a node lister
// it keeps all. It copies what it filters: sim's maps may be shared with
// the next publication.
func (pl *CustomScore) knownNodesOnly(sim *status.Simulation) {
	if pl.nodes == nil {
		return
	}
	nodes, err := pl.nodes.List(labels.Everything())
	if err != nil {
		return
	}
	known := make(map[string]bool, len(nodes))
	scores := make(map[string]int64, min(len(nodes), len(sim.MilliScores)))
	var metrics map[string]status.NodeMetrics
	for _, n := range nodes {
		known[n.Name] = true
		if s, ok := sim.MilliScores[n.Name]; ok {
			scores[n.Name] = s
		}
		if m, ok := sim.Metrics[n.Name]; ok {
			if metrics == nil {
				metrics = map[string]status.NodeMetrics{}
			}
			metrics[n.Name] = m
		}
	}
	sim.MilliScores, sim.Metrics = scores, metrics
	if sim.Pairs != nil {
		sim.Pairs = pairsOf(sim.Pairs, known)
	}
}

// pairsOf is the part of p between the known nodes.
func pairsOf(p *status.Pairs, known map[string]bool) *status.Pairs {
	out := &status.Pairs{}
	for node, c := range p.Coordinates {
		if known[node] {
			if out.Coordinates == nil {
				out.Coordinates = make(map[string]status.Coordinate, min(len(known), len(p.Coordinates)))
			}
			out.Coordinates[node] = c
		}
	}
	for _, m := range p.Measured {
		if known[m.From] && known[m.To] {
			out.Measured = append(out.Measured, m)
		}
	}
	return out
}

// statusSource returns the plugin's status as the publisher writes it: the
// one place that turns the plugin's state into a status.ProfileStatus. It
// is called from the publisher's goroutine only, and only reads: it never
// asks the simulator.
func (pl *CustomScore) statusSource(profileName string) func() status.ProfileStatus {
	started := time.Now()
	hostname, _ := os.Hostname()
	var described *network.Simulation
	var meta network.Meta
	var metrics map[string]status.NodeMetrics
	// pairs is the described answer's pairs, once a profile that scores
	// with NetworkPeers asked.
	var pairs *status.Pairs
	return func() status.ProfileStatus {
		scored, fallbacks := pl.metrics.counts()
		doc := status.ProfileStatus{
			Profile:       profileName,
			Instance:      hostname,
			Started:       started,
			RefreshMode:   string(pl.args.RefreshMode),
			Normalization: string(pl.args.Normalization),
			ScoredCycles:  scored,
			Fallbacks:     fallbacks,
		}
		doc.Scoring, _ = profile.Scoring(pl.handle)
		if pl.breaker != nil {
			doc.Breaker = pl.breaker.breakerState()
		}
		seen := pl.client.Observed()
		doc.Simulator = status.Simulator{URL: pl.shownURL, LastSuccess: seen.LastSuccess, LastFailure: seen.LastFailure, LastError: seen.LastError}
		if newest := seen.Newest; newest != nil {
			if newest != described {
				// Read once per answer, off the cycle.
				described, meta = newest, network.MetaOf(newest.Body)
				metrics, pairs = nil, nil
				for node, m := range meta.Metrics {
					if metrics == nil {
						metrics = map[string]status.NodeMetrics{}
					}
					metrics[node] = status.NodeMetrics{LatencyMs: m.LatencyMs, BandwidthMbps: m.BandwidthMbps, PacketLoss: m.PacketLoss,
						BandwidthAtLeast: m.BandwidthAtLeast, LinkUseMbps: m.LinkUseMbps}
				}
			}
			doc.Simulator.Simulation = &status.Simulation{
				Received:      seen.LastSuccess,
				Source:        meta.Source,
				Timestamp:     meta.Timestamp,
				WindowSeconds: meta.WindowSeconds,
				MilliScores:   newest.Scores,
				Unscored:      len(newest.Invalid),
				Metrics:       metrics,
			}
			if args := capacityArgs(doc.Scoring); args != nil && pl.pods != nil {
				// The pods placed since change from one publication to the next.
				doc.Simulator.Simulation.Metrics = pl.withCapacity(metrics, newest.Links(), *args, time.Now())
			}
			if scoresWith(doc.Scoring, status.NetworkPeers) {
				// What NetworkPeers ranks a pod's peers by, so that a
				// reader can cost them as it does.
				if pairs == nil {
					pairs = newest.Pairs().Status(func(string) bool { return true })
				}
				doc.Simulator.Simulation.Pairs = pairs
			}
			pl.knownNodesOnly(doc.Simulator.Simulation)
		}
		if pl.drift != nil {
			doc.Drift, doc.DriftOmitted = pl.drift.Update(doc.Simulator.Simulation)
			pl.metrics.driftedPods(len(doc.Drift) + doc.DriftOmitted)
		}
		return doc
	}
}

// scoresWith reports whether the profile scores with plugin.
func scoresWith(scoring []status.ScorePlugin, plugin string) bool {
	return slices.ContainsFunc(scoring, func(p status.ScorePlugin) bool { return p.Name == plugin })
}

// capacityArgs is NetworkCapacity's args when the profile scores with it.
func capacityArgs(scoring []status.ScorePlugin) *status.CapacityArgs {
	for _, p := range scoring {
		if p.Name == status.NetworkCapacity && p.Capacity != nil {
			return p.Capacity
		}
	}
	return nil
}

// withCapacity returns a copy of metrics in which each node whose link
// links describes has that link as NetworkCapacity counts it for a new pod
// at now (status.LinkCapacity): less its measured use and the need of the
// pods on the node the measurement does not hold yet, as the plugin
// counts them (capacity.Counted), from the scheduler's informer. A pod the
// scheduler has assumed and not bound yet is not there; it is a moment
// later.
func (pl *CustomScore) withCapacity(metrics map[string]status.NodeMetrics, links map[string]network.Link, args status.CapacityArgs, now time.Time) map[string]status.NodeMetrics {
	byNode := map[string][]*v1.Pod{}
	if pods, err := pl.pods.List(labels.Everything()); err == nil {
		for _, p := range pods {
			if _, ok := links[p.Spec.NodeName]; ok {
				byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
			}
		}
	}
	out := make(map[string]status.NodeMetrics, len(metrics))
	for node, m := range metrics {
		if l, ok := links[node]; ok {
			c := &status.LinkCapacity{RankedBandwidthMbps: l.RankedBandwidthMbps, CountedSince: capacity.CountedSince(l.WindowStart)}
			for _, p := range byNode[node] {
				if capacity.Counted(p, l.WindowStart, now) {
					c.CountedMbps += capacity.NeedMbps(p, args.DefaultPodMbps)
					c.CountedPods++
				}
			}
			use := 0.0
			if l.UseMeasured {
				use = l.UseMbps
			}
			c.FreeMbps, _ = capacity.Room(l.BandwidthMbps, use, c.CountedMbps, args.TargetUtilizationPercent)
			m.Capacity = c
		}
		out[node] = m
	}
	return out
}
