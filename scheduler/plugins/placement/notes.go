package placement

import (
	"slices"
	"sync"

	fwk "k8s.io/kube-scheduler/framework"
)

// Note is what a plugin found of the nodes in a scheduling cycle, for the
// placement event: the plugin leaves it in the cycle state under a key it
// registered (RegisterNote), and CustomBindPlugin adds what it says of the
// node the pod went to (Notes). So the event tells what every plugin of the
// profile found without CustomBindPlugin knowing them.
type Note interface {
	fwk.StateData
	// NodeNote is one short clause on node, "" when the note has nothing
	// to say of it.
	NodeNote(node string) string
}

// noteKeys are the cycle-state keys under which plugins leave their Note.
var noteKeys = struct {
	sync.Mutex
	keys []fwk.StateKey
}{}

// RegisterNote declares key as one under which a plugin leaves a Note in
// the cycle state. A plugin calls it once, from its package's init: the
// keys are the plugin's, not a profile's. Registering a key again does
// nothing.
func RegisterNote(key fwk.StateKey) {
	noteKeys.Lock()
	defer noteKeys.Unlock()
	if i, found := slices.BinarySearch(noteKeys.keys, key); !found {
		noteKeys.keys = slices.Insert(noteKeys.keys, i, key)
	}
}

// Notes returns what the notes in state say of node, in the order of their
// keys, leaving out notes that say nothing of it; nil for a nil state.
func Notes(state fwk.CycleState, node string) []string {
	if state == nil {
		return nil
	}
	noteKeys.Lock()
	keys := slices.Clone(noteKeys.keys)
	noteKeys.Unlock()
	var notes []string
	for _, key := range keys {
		data, err := state.Read(key)
		if err != nil {
			continue
		}
		if n, ok := data.(Note); ok {
			if s := n.NodeNote(node); s != "" {
				notes = append(notes, s)
			}
		}
	}
	return notes
}
