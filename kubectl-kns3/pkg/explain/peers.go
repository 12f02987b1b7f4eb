package explain

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
)

// maxPlacedAfter bounds the peers placed after the pod that are named.
const maxPlacedAfter = 5

// PeerSelectors are the label selectors, in the API server's syntax,
// whose pods in pod's namespace Build needs (Input.Peers) to work out
// NetworkPeers' points for pod in a profile that scores with scoring: the
// pod's peers annotation's. None when it needs none: the profile does not
// score with NetworkPeers, or the pod declares no peers by annotation, or
// declares them in a form the plugin cannot read.
func PeerSelectors(pod *v1.Pod, scoring []status.ScorePlugin) []string {
	if !slices.ContainsFunc(scoring, func(p status.ScorePlugin) bool { return p.Name == status.NetworkPeers }) || !peers.ByAnnotations(pod) {
		return nil
	}
	d, err := peers.FromAnnotations(pod)
	if err != nil || d == nil {
		return nil
	}
	var out []string
	for _, g := range d.Groups {
		for _, s := range g.Selectors {
			out = append(out, s.String())
		}
	}
	return out
}

// peersPoints are NetworkPeers' normalized scores of the candidates,
// worked out as the plugin works them out (scheduler/plugins/peers): the
// pod's declaration, its peers as the API server lists them now, each
// candidate's cost to their nodes by the pairs the status holds, tied and
// normalized as NormalizeScore does. It sets e.Peers and the candidates'
// PeersCost. nil when the plugin's PreScore would skip (e.Peers.Skipped
// says why, for a pod that declares peers); why says what is missing to
// work it out.
func peersPoints(e *output.Explanation, in Input, candidates []string) (scores map[string]int64, why string) {
	pod := in.Pod
	if !peers.Declares(pod) {
		return nil, ""
	}
	if !peers.ByAnnotations(pod) {
		return nil, fmt.Sprintf("the pod declares its peers through AppGroup %q, which kubectl kns3 does not read: AppGroup peers are not worked out",
			pod.Labels[peers.AppGroupLabel])
	}
	ep := &output.Peers{Selectors: pod.Annotations[peers.PeersAnnotation]}
	e.Peers = ep
	d, err := peers.FromAnnotations(pod)
	if err != nil || d == nil {
		ep.Invalid = fmt.Sprint(err)
		ep.Skipped = "the pod's annotations cannot be read, and it is placed as if it declared no peers"
		return nil, ""
	}
	for _, g := range d.Groups {
		ep.TrafficMbps += g.TrafficMbps
	}
	sim := in.Simulation
	switch {
	case sim == nil:
		ep.Skipped = "no simulation, so no pairs between nodes"
		return nil, ""
	case sim.PairsOmitted:
		return nil, "the status leaves out the pairs between nodes to stay within its bound"
	case sim.Pairs == nil:
		return nil, "the status holds no pairs between nodes (its scheduler is older than this kubectl kns3)"
	case in.PeersError != "":
		return nil, "the pod's peers could not be listed: " + in.PeersError
	}
	hosts := tallyPeers(ep, in, d)
	pairs := network.PairsFromStatus(sim.Pairs)
	switch {
	case len(hosts) == 0:
		ep.Skipped = "none of the pod's peers is placed"
		return nil, ""
	case pairs == nil:
		ep.Skipped = "the simulation says nothing of the pairs between nodes"
		return nil, ""
	}
	for i := range hosts {
		hosts[i].Pairs = pairs.Node(hosts[i].Node)
	}
	return costPeers(e, candidates, hosts, pairs, linkUses(sim)), ""
}

// tallyPeers finds the pod's peers among in.Peers and sets ep's hosts and
// the peers placed after the pod.
func tallyPeers(ep *output.Peers, in Input, d *peers.Declaration) []peers.Host {
	tally := peers.NewTally(in.Pod, d)
	placed := placedAt(in.Pod)
	for i := range in.Peers {
		p := &in.Peers[i]
		if p.Spec.NodeName == "" || !tally.Add(p.Spec.NodeName, p) {
			continue
		}
		if in.Pod.Spec.NodeName != "" && !placed.IsZero() && placedAt(p).After(placed) {
			ep.PlacedAfterCount++
			if len(ep.PlacedAfter) < maxPlacedAfter {
				ep.PlacedAfter = append(ep.PlacedAfter, p.Namespace+"/"+p.Name+" on "+p.Spec.NodeName)
			}
		}
	}
	hosts := tally.Hosts()
	for _, h := range hosts {
		ep.Hosts = append(ep.Hosts, output.PeerHost{Node: h.Node, Pods: h.Pods})
	}
	return hosts
}

// costPeers costs each candidate, sets its row's PeersCost, and returns
// the candidates' normalized scores; nil when no cost is known (PreScore
// then skips the plugin, and every node scores 0).
func costPeers(e *output.Explanation, candidates []string, hosts []peers.Host, pairs *network.Pairs, links map[string]network.Link) map[string]int64 {
	costs := make([]peers.NodeCost, len(candidates))
	for i, c := range candidates {
		costs[i] = peers.CostOf(c, hosts, pairs, links)
	}
	peers.RankCosts(candidates, costs)
	rows := map[string]*output.Row{}
	for i := range e.Nodes {
		rows[e.Nodes[i].Node] = &e.Nodes[i]
	}
	list := make(fwk.NodeScoreList, len(candidates))
	known := false
	for i, c := range candidates {
		cost := costs[i]
		known = known || cost.Known
		rows[c].PeersCost = &output.PeersCost{Known: cost.Known, Ms: cost.Ms, LowMs: cost.LowMs, HighMs: cost.HighMs, RankedMs: cost.RankedMs,
			Measured: cost.Measured, Estimated: cost.Estimated}
		list[i] = fwk.NodeScore{Name: c, Score: cost.RawScore()}
	}
	if !known {
		e.Peers.Skipped = "no candidate's cost to the peers' nodes is known"
		return nil
	}
	peers.Normalize(list)
	return byNode(list)
}

// linkUses are the nodes' links as the cost model reads them (their
// measured use), from the status's metrics as the plugin reads them from
// the answer: a node with a bandwidth from 0 to network.MaxMbps has a
// link, measured in use when its use is in that range too. None when the
// status leaves the metrics out (a caveat says so).
func linkUses(sim *status.Simulation) map[string]network.Link {
	links := map[string]network.Link{}
	for node, m := range sim.Metrics {
		if m.BandwidthMbps == nil || *m.BandwidthMbps < 0 || *m.BandwidthMbps > network.MaxMbps {
			continue
		}
		l := network.Link{BandwidthMbps: *m.BandwidthMbps}
		if u := m.LinkUseMbps; u != nil && *u >= 0 && *u <= network.MaxMbps {
			l.UseMbps, l.UseMeasured = *u, true
		}
		links[node] = l
	}
	return links
}

// placedAt is when p was placed: when its PodScheduled condition turned
// true, else when it was created (a pod bound without the scheduler).
func placedAt(p *v1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}
