package networkcapacity

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// ErrReasonLinkFull is Filter's reason for a node whose link has less free
// bandwidth than the pod declares. It names no figure, so that the
// scheduler's FailedScheduling event counts the nodes it rejected under one
// reason; the plugin's log at level 4 has each node's figures.
const ErrReasonLinkFull = "Insufficient free link bandwidth"

// filterKey is where PreFilter leaves what Filter needs.
const filterKey fwk.StateKey = Name + "/filter"

// filterCycle is what PreFilter found for the cycle's Filter: the links of
// the simulation CustomScorePlugin holds, what the pod declares, and the
// time assumed pods are placed at.
type filterCycle struct {
	links        map[string]network.Link
	declaredMbps float64
	now          time.Time
}

// Clone returns f itself: it is never written after PreFilter.
func (f *filterCycle) Clone() fwk.StateData { return f }

// The filter is opt-in: the profile enables the plugin at preFilter and
// filter (after CustomScorePlugin at preFilter, whose simulation it reads),
// in either refresh mode.
var (
	_ fwk.PreFilterPlugin = &NetworkCapacity{}
	_ fwk.FilterPlugin    = &NetworkCapacity{}
)

// PreFilter readies Filter for a pod that declares its bandwidth, from the
// simulation CustomScorePlugin's PreFilter holds: the newest in Background
// mode, the last answer in PerCycle mode (which asks anew only in
// PreScore, after Filter), either only while younger than
// maxSimulationAge. It skips, so that Filter lets every node through, for
// a pod that declares nothing (an estimate is no requirement), when no
// simulation is held, and when the simulator is warming up: it does not
// rank by such an answer, and the filter judges by nothing it does not
// rank by.
func (pl *NetworkCapacity) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	need, ok := capacity.DeclaredMbps(pod)
	if !ok {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	sim := network.Held(state)
	if sim == nil {
		klog.FromContext(ctx).V(4).Info("No simulation held before Filter: free bandwidth not filtered", "plugin", Name, "pod", klog.KObj(pod))
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if sim.WarmUp != nil {
		klog.FromContext(ctx).V(4).Info("Simulator warming up: free bandwidth not filtered", "plugin", Name, "pod", klog.KObj(pod))
		return nil, fwk.NewStatus(fwk.Skip)
	}
	links := sim.Links()
	if len(links) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	state.Write(filterKey, &filterCycle{links: links, declaredMbps: need, now: pl.now()})
	pl.retry.started()
	return nil, nil
}

// PreFilterExtensions returns nil: PreFilter keeps nothing per node, and
// Filter counts the pods of the NodeInfo it is given, which preemption's
// dry runs already hold without their victims.
func (pl *NetworkCapacity) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node whose link has less free bandwidth than the pod
// declares: bandwidth − measured use − the need of the pods placed since
// the measurement, as Score counts it. A link the simulation does not
// describe, or knows only as at least some bandwidth, passes: what was not
// measured is no reason to reject, and Score ranks it low.
func (pl *NetworkCapacity) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	data, err := state.Read(filterKey)
	if err != nil {
		// PreFilter writes it or skips, and a skip skips Filter too.
		return fwk.AsStatus(fmt.Errorf("reading %q from the cycle state (is %s enabled at preFilter as well as filter?): %w", filterKey, Name, err))
	}
	fc, ok := data.(*filterCycle)
	if !ok {
		return fwk.AsStatus(fmt.Errorf("%q holds %T, not a *networkcapacity.filterCycle", filterKey, data))
	}
	name := nodeInfo.Node().Name
	l, ok := fc.links[name]
	if !ok || l.BandwidthAtLeast {
		return nil
	}
	counted, pods := countPlacedSince(nodeInfo, l.WindowStart, fc.now, pl.args.DefaultPodMbps)
	if free := max(l.FreeMbps()-counted, 0); free < fc.declaredMbps {
		klog.FromContext(ctx).V(4).Info("Link has less free bandwidth than the pod declares", "plugin", Name, "pod", klog.KObj(pod), "node", name,
			"freeMbps", free, "bandwidthMbps", l.BandwidthMbps, "useMbps", l.UseMbps, "countedMbps", counted, "countedPods", pods, "declaredMbps", fc.declaredMbps)
		return fwk.NewStatus(fwk.Unschedulable, ErrReasonLinkFull)
	}
	return nil
}
