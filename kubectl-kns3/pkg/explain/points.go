package explain

import (
	fwk "k8s.io/kube-scheduler/framework"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/score"
)

// defaultCapacityArgs are NetworkCapacity's defaults, for a scheduler that
// published its weight but not its args.
var defaultCapacityArgs = status.CapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 80}

// pluginPoints works out, for each KNS-3 plugin of scoring, the normalized
// scores its NormalizeScore would give e's candidates, the way the plugin
// computes them, from the published status. A plugin its PreScore would
// skip (no candidate scored) gives none, as in a cycle; a plugin that
// cannot be worked out is named in e.Unrecomputed and left out.
func pluginPoints(e *output.Explanation, in Input, scoring []status.ScorePlugin) []placement.PluginPoints {
	var candidates []string
	for _, r := range e.Nodes {
		if r.Candidate() {
			candidates = append(candidates, r.Node)
		}
	}
	var points []placement.PluginPoints
	for _, p := range scoring {
		var scores map[string]int64
		switch p.Name {
		case status.CustomScorePlugin:
			scores = simulatorPoints(in, candidates)
		case status.NetworkCapacity:
			args := defaultCapacityArgs
			if p.Capacity != nil {
				args = *p.Capacity
			}
			var why string
			scores, why = capacityPoints(e, in, candidates, args)
			if why != "" {
				e.Unrecomputed = append(e.Unrecomputed, p.Name+": "+why)
				continue
			}
		case status.NetworkPeers:
			var why string
			scores, why = peersPoints(e, in, candidates)
			if why != "" {
				e.Unrecomputed = append(e.Unrecomputed, p.Name+": "+why)
				continue
			}
		default:
			e.Unrecomputed = append(e.Unrecomputed, p.Name+": a plugin this kubectl kns3 does not know")
			continue
		}
		if scores != nil {
			points = append(points, placement.PluginPoints{Plugin: p.Name, Weight: int64(p.Weight), Scores: scores})
		}
	}
	return points
}

// simulatorPoints are CustomScorePlugin's normalized scores of the
// candidates: the published raw scores, an unscored candidate at 0,
// through score.Normalize; nil when no candidate is scored (PreScore then
// skips the plugin).
func simulatorPoints(in Input, candidates []string) map[string]int64 {
	if in.Simulation == nil {
		return nil
	}
	list := make(fwk.NodeScoreList, len(candidates))
	anyScored := false
	for i, c := range candidates {
		s, ok := in.Simulation.MilliScores[c]
		anyScored = anyScored || ok
		list[i] = fwk.NodeScore{Name: c, Score: s}
	}
	if !anyScored {
		return nil
	}
	score.Normalize(list, in.Absolute)
	return byNode(list)
}

// capacityPoints are NetworkCapacity's normalized scores of the
// candidates, counted as the plugin counts them (capacity): each link's
// ranked bandwidth less its measured use and the need of the pods placed
// since the measurement, as the status has them, ranked and scaled in
// proportion, a roomy lower bound as the most free; a node whose link the
// simulation does not describe at 0. The status is read after the
// placement, and counts the pod itself against its node when it was
// placed since the measurement: its own need is taken off again there,
// so that the pod is not held against its own node. It sets the rows'
// FreeMbps. nil when no candidate's link is described (PreScore then
// skips the plugin); why says what is missing to work it out.
func capacityPoints(e *output.Explanation, in Input, candidates []string, args status.CapacityArgs) (scores map[string]int64, why string) {
	if in.Simulation == nil {
		return nil, ""
	}
	if in.Simulation.MetricsOmitted {
		return nil, "the status leaves out the links' metrics to stay within its bound"
	}
	rows := map[string]*output.Row{}
	for i := range e.Nodes {
		rows[e.Nodes[i].Node] = &e.Nodes[i]
	}
	need := capacity.NeedMbps(in.Pod, args.DefaultPodMbps)
	list := make(fwk.NodeScoreList, 0, len(candidates))
	var roomy map[string]bool
	described := false
	for _, c := range candidates {
		m, ok := in.Simulation.Metrics[c]
		if !ok || m.BandwidthMbps == nil {
			list = append(list, fwk.NodeScore{Name: c})
			continue
		}
		described = true
		bandwidth, ranked, use, counted := *m.BandwidthMbps, *m.BandwidthMbps, 0.0, 0.0
		if m.LinkUseMbps != nil {
			use = *m.LinkUseMbps
		}
		if lc := m.Capacity; lc != nil {
			ranked, counted = lc.RankedBandwidthMbps, lc.CountedMbps
			if c == e.Node && capacity.CountedAfter(in.Pod, lc.CountedSince, in.Now) {
				own := min(need, counted)
				counted -= own
				rows[c].OwnNeedMbps = own
			}
		}
		free, below := capacity.Room(bandwidth, use, counted, args.TargetUtilizationPercent)
		rows[c].FreeMbps = &free
		if m.BandwidthAtLeast && below >= need {
			if roomy == nil {
				roomy = map[string]bool{}
			}
			roomy[c] = true
		}
		// Ranked at the ranked bandwidth, as Score ranks it.
		rank := capacity.RankMbps(capacity.Room(ranked, use, counted, args.TargetUtilizationPercent))
		list = append(list, fwk.NodeScore{Name: c, Score: capacity.RankMilli(rank)})
	}
	if !described {
		return nil, ""
	}
	capacity.Normalize(list, func(node string) bool { return roomy[node] })
	return byNode(list), ""
}

func byNode(list fwk.NodeScoreList) map[string]int64 {
	out := make(map[string]int64, len(list))
	for _, s := range list {
		out[s.Name] = s.Score
	}
	return out
}
