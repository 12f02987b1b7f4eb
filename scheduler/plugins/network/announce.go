package network

import (
	"sync"

	fwk "k8s.io/kube-scheduler/framework"
)

// A new measurement is no cluster event: a pod a filter rejected because
// of it would wait for the scheduler's periodic retry of unschedulable
// pods (podMaxInUnschedulablePodsDuration, 5 minutes by default), however
// soon the network changed. So CustomScorePlugin announces each new
// answer its client gets, whoever asked (a cycle, the refresh loop, the
// status's keeper, the breaker's prober), to the plugins of its profile
// that listen. The plugins of one profile share its framework
// handle, which keys them: two schedulers, or two profiles, in one process
// never hear each other.
var listeners = struct {
	sync.Mutex
	byHandle map[fwk.Handle][]*listener
}{byHandle: map[fwk.Handle][]*listener{}}

type listener struct{ heard func(*Simulation) }

// OnNewSimulation calls heard with every new simulation h's profile gets,
// until stop is called. heard runs on the goroutine that asked: it must
// not block.
func OnNewSimulation(h fwk.Handle, heard func(*Simulation)) (stop func()) {
	l := &listener{heard: heard}
	listeners.Lock()
	defer listeners.Unlock()
	listeners.byHandle[h] = append(listeners.byHandle[h], l)
	return func() {
		listeners.Lock()
		defer listeners.Unlock()
		rest := []*listener{}
		for _, other := range listeners.byHandle[h] {
			if other != l {
				rest = append(rest, other)
			}
		}
		if len(rest) == 0 {
			delete(listeners.byHandle, h)
			return
		}
		listeners.byHandle[h] = rest
	}
}

// AnnounceSimulation tells the listeners of h's profile of sim, a new
// simulation the profile took.
func AnnounceSimulation(h fwk.Handle, sim *Simulation) {
	listeners.Lock()
	heard := append([]*listener(nil), listeners.byHandle[h]...)
	listeners.Unlock()
	for _, l := range heard {
		l.heard(sim)
	}
}
