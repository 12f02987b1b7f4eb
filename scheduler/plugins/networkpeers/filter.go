package networkpeers

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
)

// ErrReasonPeersBandwidth is Filter's reason for a node from which a pair
// to a peer's node has less free bandwidth than the pod declares for the
// peers there. It names no figure, so that the scheduler's
// FailedScheduling event counts the nodes it rejected under one reason;
// the plugin's log at level 4 has each node's figures.
const ErrReasonPeersBandwidth = "Insufficient bandwidth to the pod's peers"

// filterKey is where PreFilter leaves what Filter needs.
const filterKey fwk.StateKey = Name + "/filter"

// filterCycle is what PreFilter found for the cycle's Filter: the peers'
// nodes the pod declares traffic to, and the pairs and links of the
// simulation CustomScorePlugin's PreFilter holds.
type filterCycle struct {
	hosts []peers.Host
	pairs *network.Pairs
	links map[string]network.Link
}

// Clone returns f itself: it is never written after PreFilter.
func (f *filterCycle) Clone() fwk.StateData { return f }

// The filter is opt-in: the profile enables the plugin at preFilter and
// filter, after CustomScorePlugin at preFilter, whose simulation it reads.
var (
	_ fwk.PreFilterPlugin   = &NetworkPeers{}
	_ fwk.FilterPlugin      = &NetworkPeers{}
	_ fwk.EnqueueExtensions = &NetworkPeers{}
)

// PreFilter readies Filter for a pod that declares the traffic to its
// peers, from the simulation CustomScorePlugin's PreFilter holds (in
// PerCycle mode the last answer, if young enough). It skips, so that
// Filter lets every node through, for a pod that declares no traffic, no
// placed peer, when no simulation with pairs is held, and while the
// simulator warms up: nothing is filtered by such an answer.
func (pl *NetworkPeers) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !peers.Declares(pod) {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	d := pl.declaration(ctx, state, pod)
	if !d.DeclaredTraffic() {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	sim := network.Held(state)
	if sim == nil || sim.WarmUp != nil || sim.Pairs() == nil {
		klog.FromContext(ctx).V(4).Info("No pairs held before Filter: bandwidth to peers not filtered", "plugin", Name, "pod", klog.KObj(pod))
		return nil, fwk.NewStatus(fwk.Skip)
	}
	nodes, err := pl.nodeInfos()
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("listing the snapshot's nodes: %w", err))
	}
	var hosts []peers.Host
	for _, h := range findPeers(nodes, pod, d) {
		if h.TrafficMbps > 0 {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	state.Write(filterKey, &filterCycle{hosts: hosts, pairs: sim.Pairs(), links: sim.Links()})
	return nil, nil
}

// PreFilterExtensions returns nil: a preemption's victims are the pods of
// lower priority on one node, and Filter judges that node's pairs to the
// other nodes, whose peers stay.
func (pl *NetworkPeers) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node from which a pair to a peer's node has less free
// bandwidth than the pod's traffic to the peers there: the pair's
// measured bandwidth less the traffic measured on the more loaded of the
// two nodes' links. A pair whose bandwidth is not measured, or known only
// as a lower bound, passes: what was not measured is no reason to reject.
func (pl *NetworkPeers) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	data, err := state.Read(filterKey)
	if err != nil {
		// PreFilter writes it or skips, and a skip skips Filter too.
		return fwk.AsStatus(fmt.Errorf("reading %q from the cycle state (is %s enabled at preFilter as well as filter?): %w", filterKey, Name, err))
	}
	fc, ok := data.(*filterCycle)
	if !ok {
		return fwk.AsStatus(fmt.Errorf("%q holds %T, not a *networkpeers.filterCycle", filterKey, data))
	}
	name := nodeInfo.Node().Name
	nodeLink, nodeKnown := fc.links[name]
	for _, h := range fc.hosts {
		pc := fc.pairs.Cost(name, h.Node)
		if pc.Source == network.CostSameNode || !pc.BandwidthKnown || pc.BandwidthAtLeast {
			continue
		}
		hostLink, hostKnown := fc.links[h.Node]
		if free := peers.FreeMbps(pc, nodeLink, hostLink, nodeKnown, hostKnown); free < h.TrafficMbps {
			klog.FromContext(ctx).V(4).Info("A pair to the pod's peers has less free bandwidth than the pod declares", "plugin", Name,
				"pod", klog.KObj(pod), "node", name, "peersNode", h.Node, "freeMbps", free, "bandwidthMbps", pc.BandwidthMbps, "trafficMbps", h.TrafficMbps)
			return fwk.NewStatus(fwk.Unschedulable, ErrReasonPeersBandwidth)
		}
	}
	return nil
}

// EventsToRegister registers what may turn Filter's rejection into a fit:
// a peer placed, leaving, or relabeled (the pod's traffic is shared among
// its peers, and a pair to a node without peers carries none of it), and
// a new node, whose pairs are not measured yet. A new measurement is no
// cluster event: a rejected pod waits for one of these, or for the
// scheduler's periodic retry of unschedulable pods.
func (pl *NetworkPeers) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Add | fwk.Delete | fwk.UpdatePodLabel}, QueueingHintFn: pl.isPeerChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
	}, nil
}

// isPeerChange queues pod when the pod that changed was or is one of its
// peers; any other pod's change leaves its pairs as they were.
func (pl *NetworkPeers) isPeerChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	d, err := pl.read(pod)
	if err != nil || d == nil {
		return fwk.QueueSkip, nil
	}
	for _, obj := range []any{oldObj, newObj} {
		p, ok := obj.(*v1.Pod)
		if !ok || p == nil || p.Namespace != pod.Namespace {
			continue
		}
		for _, g := range d.Groups {
			if g.Matches(labels.Set(p.Labels)) {
				logger.V(5).Info("A peer of the pod changed: its pairs may fit", "plugin", Name, "pod", klog.KObj(pod), "peer", klog.KObj(p))
				return fwk.Queue, nil
			}
		}
	}
	return fwk.QueueSkip, nil
}
