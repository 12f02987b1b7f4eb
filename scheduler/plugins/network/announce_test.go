package network

import (
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
)

// profileHandle stands for one profile's framework handle: only its
// identity matters here.
type profileHandle struct {
	fwk.Handle
	name string
}

// A listener hears the simulations announced to its own profile's handle,
// none of another's, and nothing once stopped.
func TestOnNewSimulation(t *testing.T) {
	a, b := &profileHandle{name: "a"}, &profileHandle{name: "b"}
	var heardA, heardB []*Simulation
	stopA := OnNewSimulation(a, func(s *Simulation) { heardA = append(heardA, s) })
	stopB := OnNewSimulation(b, func(s *Simulation) { heardB = append(heardB, s) })
	defer stopB()

	first, second := &Simulation{}, &Simulation{}
	AnnounceSimulation(a, first)
	AnnounceSimulation(b, second)
	if len(heardA) != 1 || heardA[0] != first {
		t.Errorf("profile a heard %v, want its one simulation", heardA)
	}
	if len(heardB) != 1 || heardB[0] != second {
		t.Errorf("profile b heard %v, want its one simulation", heardB)
	}

	stopA()
	AnnounceSimulation(a, second)
	if len(heardA) != 1 {
		t.Errorf("profile a heard %d simulations after it stopped listening, want 1", len(heardA))
	}
	listeners.Lock()
	_, kept := listeners.byHandle[a]
	listeners.Unlock()
	if kept {
		t.Error("a handle with no listener left is still kept")
	}
}
