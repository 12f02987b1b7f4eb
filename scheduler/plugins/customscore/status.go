package customscore

import (
	"os"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// breakerReporter is a source with a circuit breaker, whose state the
// status shows.
type breakerReporter interface {
	// breakerState is status.BreakerClosed or status.BreakerOpen.
	breakerState() string
}

// knownNodesOnly leaves in sim the scores and metrics of the cluster's
// nodes only: the simulator may name anything (live measurements carry
// what agents say), and a name that is no node tells a reader nothing,
// and may be long or need escaping. Without a node lister it keeps all.
func (pl *CustomScore) knownNodesOnly(sim *status.Simulation) {
	if pl.nodes == nil {
		return
	}
	nodes, err := pl.nodes.List(labels.Everything())
	if err != nil {
		return
	}
	scores := make(map[string]int64, min(len(nodes), len(sim.MilliScores)))
	var metrics map[string]status.NodeMetrics
	for _, n := range nodes {
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
}

// statusSource returns the plugin's status as the publisher writes it: the
// one place that turns the plugin's state into a status.ProfileStatus. It
// is called from the publisher's goroutine only, and only reads: it never
// asks the simulator.
func (pl *CustomScore) statusSource(profile string) func() status.ProfileStatus {
	started := time.Now()
	hostname, _ := os.Hostname()
	var described *network.Simulation
	var meta network.Meta
	var metrics map[string]status.NodeMetrics
	return func() status.ProfileStatus {
		scored, fallbacks := pl.metrics.counts()
		doc := status.ProfileStatus{
			Profile:       profile,
			Instance:      hostname,
			Started:       started,
			RefreshMode:   string(pl.args.RefreshMode),
			Normalization: string(pl.args.Normalization),
			ScoredCycles:  scored,
			Fallbacks:     fallbacks,
		}
		if pl.breaker != nil {
			doc.Breaker = pl.breaker.breakerState()
		}
		seen := pl.client.Observed()
		doc.Simulator = status.Simulator{URL: pl.shownURL, LastSuccess: seen.LastSuccess, LastFailure: seen.LastFailure, LastError: seen.LastError}
		if newest := seen.Newest; newest != nil {
			if newest != described {
				// Read once per answer, off the cycle.
				described, meta = newest, network.MetaOf(newest.Body)
				metrics = nil
				for node, m := range meta.Metrics {
					if metrics == nil {
						metrics = map[string]status.NodeMetrics{}
					}
					metrics[node] = status.NodeMetrics{LatencyMs: m.LatencyMs, BandwidthMbps: m.BandwidthMbps, PacketLoss: m.PacketLoss, BandwidthAtLeast: m.BandwidthAtLeast}
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
			pl.knownNodesOnly(doc.Simulator.Simulation)
		}
		if pl.drift != nil {
			doc.Drift, doc.DriftOmitted = pl.drift.Update(doc.Simulator.Simulation)
			pl.metrics.driftedPods(len(doc.Drift) + doc.DriftOmitted)
		}
		return doc
	}
}
