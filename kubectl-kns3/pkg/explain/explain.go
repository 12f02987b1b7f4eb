// Package explain says, node by node, why the KNS-3 scheduler put a pod
// where it did: the KNS-3 filter's verdict on the node's current labels
// and the pod's annotation, the node's score in the newest simulation, the score
// CustomScorePlugin's NormalizeScore makes of it among the candidates, and
// the pod's placement event. Everything here is a pure function of objects
// the caller fetched, so it is table-tested without a cluster.
package explain

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

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
	// Absolute is the profile's normalization: Absolute when true, MinMax
	// (the default) when false.
	Absolute bool
	// PlacementEvent is the note of the pod's newest placement event and
	// LastFailedScheduling the message of its newest FailedScheduling
	// event (or its PodScheduled condition), "" when there is none.
	PlacementEvent       string
	LastFailedScheduling string
}

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
	var scores map[string]int64
	var metrics map[string]status.NodeMetrics
	if s := in.Simulation; s != nil {
		metrics = s.Metrics
		e.Simulation = &output.Simulation{Received: metav1.NewTime(s.Received), Source: s.Source, Timestamp: metav1.NewTime(s.Timestamp), WindowSeconds: s.WindowSeconds, Omitted: s.Omitted}
		scores = s.MilliScores
	}
	// The plugin's raw scores, as the scheduler published them: exactly
	// what its Score returned, whatever shape the simulator's answer had.
	raw := map[string]int64{}
	for _, n := range in.Nodes {
		v := placement.Judge(in.Pod, &n)
		row := output.Row{Node: n.Name, Filter: output.Pass, Other: v.Other, Chosen: n.Name == e.Node}
		if v.Filter != "" {
			row.Filter, row.FilterReason = output.Reject, v.Filter
		}
		if milli, ok := scores[n.Name]; ok {
			s := score.Float(milli)
			row.SimulatorScore = &s
			raw[n.Name] = milli
		}
		if m, ok := metrics[n.Name]; ok {
			row.LatencyMs, row.BandwidthMbps, row.PacketLoss = m.LatencyMs, m.BandwidthMbps, m.PacketLoss
			row.BandwidthAtLeast = m.BandwidthAtLeast
		}
		e.Nodes = append(e.Nodes, row)
	}
	rankAndNormalize(e.Nodes, raw, in.Absolute)
	slices.SortStableFunc(e.Nodes, func(a, b output.Row) int {
		if a.Candidate() != b.Candidate() {
			if a.Candidate() {
				return -1
			}
			return 1
		}
		if a.Candidate() {
			if c := cmp.Compare(raw[b.Node], raw[a.Node]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return e
}

// rankAndNormalize sets the candidates' Rank and NormalizedScore as one
// scheduling cycle of CustomScorePlugin would: an unscored candidate's raw
// score is 0, and when no candidate is scored the plugin is skipped.
func rankAndNormalize(rows []output.Row, raw map[string]int64, absolute bool) {
	var candidates []string
	var list fwk.NodeScoreList
	anyScored := false
	for _, r := range rows {
		if !r.Candidate() {
			continue
		}
		s, ok := raw[r.Node]
		anyScored = anyScored || ok
		candidates = append(candidates, r.Node)
		list = append(list, fwk.NodeScore{Name: r.Node, Score: s})
	}
	if !anyScored {
		return
	}
	for i := range rows {
		if rows[i].Candidate() {
			rows[i].Rank = score.Rank(raw, candidates, rows[i].Node)
		}
	}
	score.Normalize(list, absolute)
	normalized := make(map[string]int64, len(list))
	for _, ns := range list {
		normalized[ns.Name] = ns.Score
	}
	for i := range rows {
		if n, ok := normalized[rows[i].Node]; ok {
			rows[i].NormalizedScore = &n
		}
	}
}
