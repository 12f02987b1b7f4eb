// Package explain says, node by node, why the KNS-3 scheduler put a pod
// where it did: the KNS-3 filter's verdict on the node's current labels
// and the pod's annotation (and upstream's checks that can be told from
// the pod and the node alone: cordons, taints, required node affinity),
// the node's score in the newest simulation and
// its link, what reaching the pod's peers costs from it, the score each
// KNS-3 plugin of the pod's profile makes of them among the candidates
// (points.go, peers.go), their sum at the profile's
// weights, which ranks the candidates, the plugin that decided, and the
// pod's placement event. Everything here is a pure function of objects
// the caller fetched, so it is table-tested without a cluster.
package explain

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/score"
)

// Input is what Build explains: the pod, every node, and what the
// scheduler published and the API server said.
type Input struct {
	Pod   *v1.Pod
	Nodes []v1.Node
	// Simulation is the newest simulation the pod's profile holds, as its
	// scheduler published it; nil when it has none (SimulatorError says
	// why).
	Simulation     *status.Simulation
	SimulatorError string
	// Absolute is CustomScorePlugin's normalization: Absolute when true,
	// MinMax (the default) when false.
	Absolute bool
	// Scoring is the KNS-3 plugins the profile scores with, with their
	// weights, as its scheduler published them; empty: CustomScorePlugin
	// alone is assumed (AssumedScoring).
	Scoring []status.ScorePlugin
	// Peers are the pods of the pod's namespace that its peers annotation
	// selects (PeerSelectors), as the API server lists them, for a profile
	// that scores with NetworkPeers; PeersError says why they could not be
	// listed.
	Peers      []v1.Pod
	PeersError string
	// PlacementEvent is the note of the pod's newest placement event and
	// LastFailedScheduling the message of its newest FailedScheduling
	// event (or its PodScheduled condition), "" when there is none.
	PlacementEvent       string
	LastFailedScheduling string
	// Now is when the explanation is made.
	Now time.Time
}

// AssumedScoring is how a profile whose scheduler published no scoring is
// taken to rank nodes: CustomScorePlugin alone, at the shipped profile's
// weight.
var AssumedScoring = []status.ScorePlugin{{Name: status.CustomScorePlugin, Weight: 10}}

// Build explains in.Pod's placement.
func Build(in Input) *output.Explanation {
	e := &output.Explanation{
		Namespace:            in.Pod.Namespace,
		Pod:                  in.Pod.Name,
		SchedulerName:        in.Pod.Spec.SchedulerName,
		Node:                 in.Pod.Spec.NodeName,
		PlacementEvent:       in.PlacementEvent,
		LastFailedScheduling: in.LastFailedScheduling,
		Normalization:        string(config.NormalizationMinMax),
		SimulatorError:       in.SimulatorError,
	}
	if in.Absolute {
		e.Normalization = string(config.NormalizationAbsolute)
	}
	scoring := in.Scoring
	if len(scoring) == 0 {
		scoring, e.ScoringAssumed = AssumedScoring, true
	}
	for _, p := range scoring {
		e.Scoring = append(e.Scoring, output.ScoringPlugin{Name: p.Name, Weight: p.Weight})
	}
	var scores map[string]int64
	var metrics map[string]status.NodeMetrics
	if s := in.Simulation; s != nil {
		metrics, scores = s.Metrics, s.MilliScores
		e.Simulation = &output.Simulation{Received: metav1.NewTime(s.Received), Source: s.Source, Timestamp: metav1.NewTime(s.Timestamp), WindowSeconds: s.WindowSeconds, Omitted: s.Omitted}
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(in.Pod)
	for _, n := range in.Nodes {
		v := placement.Judge(in.Pod, &n)
		row := output.Row{Node: n.Name, Filter: output.Pass, Other: cmp.Or(v.Other, affinityRejects(affinity, &n)), Chosen: n.Name == e.Node}
		if v.Filter != "" {
			row.Filter, row.FilterReason = output.Reject, v.Filter
		}
		if milli, ok := scores[n.Name]; ok {
			s := score.Float(milli)
			row.SimulatorScore = &s
		}
		if m, ok := metrics[n.Name]; ok {
			row.LatencyMs, row.BandwidthMbps, row.PacketLoss = m.LatencyMs, m.BandwidthMbps, m.PacketLoss
			row.BandwidthAtLeast, row.LinkUseMbps = m.BandwidthAtLeast, m.LinkUseMbps
		}
		e.Nodes = append(e.Nodes, row)
	}
	points := pluginPoints(e, in, scoring)
	rank(e.Nodes, points)
	worked := decide(e, points)
	e.Caveats = caveats(e, in, worked)
	slices.SortStableFunc(e.Nodes, func(a, b output.Row) int {
		if a.Candidate() != b.Candidate() {
			if a.Candidate() {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(pointsOf(b), pointsOf(a)), cmp.Compare(a.Node, b.Node))
	})
	return e
}

// ErrReasonNodeAffinity is a row's Other for a node the pod's required
// node affinity or node selector excludes, as upstream's NodeAffinity
// filter does.
const ErrReasonNodeAffinity = "node didn't match the pod's node affinity/selector"

// affinityRejects is why upstream's NodeAffinity filter rejects node for
// the pod whose required affinity is affinity, "" when it passes it. An
// affinity that does not parse is matched as the filter matches it,
// ignoring the parse errors.
func affinityRejects(affinity nodeaffinity.RequiredNodeAffinity, node *v1.Node) string {
	if match, _ := affinity.Match(node); !match {
		return ErrReasonNodeAffinity
	}
	return ""
}

// pointsOf is a row's points, -1 without any, for sorting.
func pointsOf(r output.Row) int64 {
	if r.Points == nil {
		return -1
	}
	return *r.Points
}

// rank sets each candidate's Scores, Points and Rank from the plugins'
// points, in the order of points: ties share a rank.
func rank(rows []output.Row, points []placement.PluginPoints) {
	if len(points) == 0 {
		return
	}
	for i := range rows {
		if !rows[i].Candidate() {
			continue
		}
		var sum int64
		for _, p := range points {
			n := p.Scores[rows[i].Node]
			rows[i].Scores = append(rows[i].Scores, output.PluginScore{Plugin: p.Plugin, Normalized: n})
			sum += p.Weight * n
		}
		rows[i].Points = &sum
	}
	for i := range rows {
		if rows[i].Points == nil {
			continue
		}
		rows[i].Rank = 1
		for _, other := range rows {
			if other.Points != nil && *other.Points > *rows[i].Points {
				rows[i].Rank++
			}
		}
	}
}

// decide names the plugin that decided: the placement event's word when
// it says, for a plugin the profile scores with; else what the points
// worked out here say of the pod's node against the runner-up, which it
// returns (nil when they say nothing of it). The runner-up is always the
// one here.
func decide(e *output.Explanation, points []placement.PluginPoints) *placement.Decision {
	var worked *placement.Decision
	if e.Node != "" {
		if d, ok := placement.Decide(points, e.Node); ok {
			worked = &d
			e.RunnerUp = d.RunnerUp
			e.DecidedBy, e.DecidedFrom = d.DecidedBy, output.DecidedFromStatus
		}
	}
	plugin, found := placement.DecidedBy(e.PlacementEvent)
	if found && (plugin == "" || slices.ContainsFunc(e.Scoring, func(p output.ScoringPlugin) bool { return p.Name == plugin })) {
		e.DecidedBy, e.DecidedFrom = plugin, output.DecidedFromEvent
	}
	return worked
}
