package placement

import (
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// ScorePlugin is CustomScorePlugin's name (network.ScorePlugin): the
// plugin whose PreScore leaves the Cycle a placement is read from.
const ScorePlugin = network.ScorePlugin

// StateKey is where CustomScorePlugin's PreScore leaves the cycle in the
// scheduling cycle's state, for its Score and for CustomBindPlugin's
// placement event. It holds the plugin's name, as upstream's keys do.
const StateKey fwk.StateKey = ScorePlugin + "/simulation"

// Clone returns c itself: a Cycle is never written after PreScore, so the
// copies may share it. (Its Reuse, shared too, is written once, when the
// copy proves the reuse: see Reuse.)
func (c *Cycle) Clone() fwk.StateData { return c }

// Reuse marks a Cycle that holds an earlier cycle's ranking: in Background
// mode CustomScorePlugin's PreFilter leaves the ranking upstream's
// opportunistic batching may reuse, and a cycle that then ranks for itself
// replaces it. Kept to the binding cycle, it means the pod's own cycle
// ran no PreScore: the scheduler took the node from the reused ranking,
// or the node was the only feasible one (which the plugin cannot tell
// apart), unless Confirm was called. The scheduler re-scores the node the
// previous pod took (with PreScore, on a copy of the cycle's state) only
// when it reuses a ranking, so that PreScore confirms it.
type Reuse struct {
	confirmed atomic.Bool
}

// Confirm records that the scheduler reused the ranking.
func (r *Reuse) Confirm() { r.confirmed.Store(true) }

// Confirmed reports whether Confirm was called.
func (r *Reuse) Confirmed() bool { return r != nil && r.confirmed.Load() }

// Write leaves c in state for the rest of the scheduling and binding cycle.
func Write(state fwk.CycleState, c *Cycle) { state.Write(StateKey, c) }

// Read returns the Cycle PreScore left in state.
func Read(state fwk.CycleState) (*Cycle, error) {
	data, err := state.Read(StateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from the cycle state: %w", StateKey, err)
	}
	c, ok := data.(*Cycle)
	if !ok {
		return nil, fmt.Errorf("%q holds %T, not a *placement.Cycle", StateKey, data)
	}
	return c, nil
}

// FromCycleState places pod on node after the cycle state holds:
// what CustomBindPlugin's placement event says. Without PreScore's Cycle
// (state nil, or PreScore did not run), the scheduler did not score.
func FromCycleState(state fwk.CycleState, pod *v1.Pod, node string) Placement {
	if state != nil {
		if c, err := Read(state); err == nil {
			return Of(c, pod, node)
		}
	}
	return Of(nil, pod, node)
}
