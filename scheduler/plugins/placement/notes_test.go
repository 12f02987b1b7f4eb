package placement

import (
	"reflect"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// testNote says "saw <node>" of the nodes it holds.
type testNote map[string]bool

func (n testNote) Clone() fwk.StateData { return n }

func (n testNote) NodeNote(node string) string {
	if n[node] {
		return "saw " + node
	}
	return ""
}

// notANote is state data under a registered key that is no Note.
type notANote struct{}

func (notANote) Clone() fwk.StateData { return notANote{} }

// TestNotes: Notes reads every registered key, in the keys' order, and
// leaves out a note silent on the node, a key nobody wrote, data that is no
// Note and keys nobody registered.
func TestNotes(t *testing.T) {
	for _, key := range []fwk.StateKey{"test/b", "test/a", "test/unwritten", "test/other", "test/a"} {
		RegisterNote(key)
	}
	state := framework.NewCycleState()
	state.Write("test/b", testNote{"n1": true})
	state.Write("test/a", testNote{"n1": true, "n2": true})
	state.Write("test/other", notANote{})
	state.Write("test/unregistered", testNote{"n1": true})

	if got, want := Notes(state, "n1"), []string{"saw n1", "saw n1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Notes(n1) = %q, want %q", got, want)
	}
	if got, want := Notes(state, "n2"), []string{"saw n2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Notes(n2) = %q, want %q (test/a's only)", got, want)
	}
	if got := Notes(state, "n3"); got != nil {
		t.Errorf("Notes(n3) = %q, want none", got)
	}
	if got := Notes(nil, "n1"); got != nil {
		t.Errorf("Notes of no state = %q, want none", got)
	}
}
