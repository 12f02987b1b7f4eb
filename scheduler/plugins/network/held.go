package network

import (
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/apis/status"
)

// ScorePlugin is CustomScorePlugin's name: the plugin that asks the
// simulator and leaves its answer in the cycle state, for the profile's
// other plugins, under keys that carry its name, as upstream's keys do.
const ScorePlugin = status.CustomScorePlugin

// heldKey is where CustomScorePlugin's PreFilter leaves the simulation it
// holds as the cycle starts: a Filter plugin that reads the network runs
// before PreScore takes the cycle's own.
const heldKey fwk.StateKey = ScorePlugin + "/held"

// held is the simulation PreFilter left; never written after, so copies
// share it.
type held struct{ sim *Simulation }

func (h *held) Clone() fwk.StateData { return h }

// WriteHeld leaves sim in state for the cycle's Filter plugins.
func WriteHeld(state fwk.CycleState, sim *Simulation) {
	state.Write(heldKey, &held{sim: sim})
}

// Held returns the simulation CustomScorePlugin's PreFilter left in state,
// nil when it left none: PerCycle mode asks the simulator only in PreScore,
// after Filter, and Background mode may have none young enough.
func Held(state fwk.CycleState) *Simulation {
	data, err := state.Read(heldKey)
	if err != nil {
		return nil
	}
	if h, ok := data.(*held); ok {
		return h.sim
	}
	return nil
}
