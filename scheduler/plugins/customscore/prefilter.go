package customscore

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// PreFilter leaves the simulation the source holds (source.held) for the
// profile's Filter plugins that read the network (NetworkCapacity's),
// which run before PreScore takes the cycle's own. In Background mode it
// also marks the cycle's state, so that PreScore can tell a re-score
// inside a batch from a cycle of its own, and leaves the ranking a batch
// may reuse, for the placement event: a cycle that scores replaces it
// (batch.go). In PerCycle mode there is no batching. It never rejects a
// pod.
func (pl *CustomScore) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if pl.args.RefreshMode != apiconfig.RefreshBackground {
		// PerCycle asks in PreScore, after Filter: a filter reading the
		// network judges by the last answer, if young enough.
		pl.leaveHeld(state)
		return nil, nil
	}
	if pod.Spec.SchedulingGroup != nil {
		return nil, nil
	}
	markCycle(state)
	pl.leaveHeld(state)
	pl.offerRanking(state)
	return nil, nil
}

// leaveHeld leaves in state the simulation the source holds now, if any.
// Neither source asks the simulator for it.
func (pl *CustomScore) leaveHeld(state fwk.CycleState) {
	if sim := pl.source.held(pl.batch.now()); sim != nil {
		network.WriteHeld(state, sim)
	}
}

// PreFilterExtensions returns nil: the plugin keeps no per-node state.
func (pl *CustomScore) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// EventsToRegister returns no event: the plugin never rejects a pod, so no
// event can make one schedulable. (Without it the scheduler would register
// every event for the plugin's PreFilter.)
func (pl *CustomScore) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}
