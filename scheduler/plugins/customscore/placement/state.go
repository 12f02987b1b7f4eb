package placement

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// ScorePlugin is CustomScorePlugin's name: the plugin whose PreScore
// writes the cycle state.
const ScorePlugin = "CustomScorePlugin"

// StateKey is where CustomScorePlugin's PreScore leaves the cycle in the
// scheduling cycle's state, for its Score and for CustomBindPlugin's
// placement event. It holds the plugin's name, as upstream's keys do.
const StateKey fwk.StateKey = ScorePlugin + "/simulation"

// Clone returns c itself: a Cycle is never written after PreScore, so the
// copies may share it.
func (c *Cycle) Clone() fwk.StateData { return c }

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
