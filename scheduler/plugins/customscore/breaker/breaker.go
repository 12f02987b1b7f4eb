// Package breaker is CustomScorePlugin's circuit breaker: it keeps a dead,
// hanging or slow simulator from stalling scheduling cycles in PerCycle
// mode. Cycles record how their call ended and read whether they may call;
// the prober, off the cycle, waits for Opened and closes the breaker.
package breaker

import (
	"sync"
)

// State is the breaker's state: Closed while cycles call the simulator.
type State int

const (
	Closed State = 0
	Open   State = 1
)

func (s State) String() string {
	if s == Open {
		return "open"
	}
	return "closed"
}

// Outcome is how a scheduling cycle's call to the simulator ended.
type Outcome int

const (
	Succeeded Outcome = iota
	// FailedFast: refused, 5xx, bad body: the retries cost little.
	FailedFast
	// TimedOut: the last attempt waited its whole timeout, so the cycle
	// spent its whole retry budget.
	TimedOut
	// Slow: the simulator answered, slower than the latency budget. In one
	// process with other profiles, every cycle holds the one scheduling
	// loop, so a slow answer costs every pod of the cluster: it counts as a
	// failure, though its scores are used.
	Slow
	// FarOverBudget: the simulator answered, far slower than the latency
	// budget: as costly as a timeout to every pod queued behind the cycle.
	FarOverBudget
)

// Breaker opens after threshold cycles in a row fail fast or answer
// slower than the latency budget, or at once after a cycle that timed out
// or answered far over the budget: a second such cycle would cost every
// queued pod as much again. While it is open no cycle calls the simulator;
// the prober (the PerCycle source's goroutine) asks it off the cycle and
// closes the breaker on the first answer within the budget, so cycles only
// ever read the state.
//
// It lives across cycles by design, so it is the one piece of plugin state
// outside CycleState, and a mutex guards it.
type Breaker struct {
	threshold int
	// onChange is called, under the lock, on every state change.
	onChange func(from, to State, failures int)
	// opened receives a token each time the breaker opens; the prober waits on it.
	opened chan struct{}

	mu       sync.Mutex
	state    State
	failures int
}

// New returns a closed breaker that opens after threshold failed cycles in
// a row; onChange, when set, is told every change of state.
func New(threshold int, onChange func(from, to State, failures int)) *Breaker {
	return &Breaker{threshold: threshold, onChange: onChange, opened: make(chan struct{}, 1)}
}

// Opened receives a token each time the breaker opens.
func (b *Breaker) Opened() <-chan struct{} { return b.opened }

// Allow reports whether this cycle may call the simulator.
func (b *Breaker) Allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == Closed
}

// Record takes the outcome of a scheduling cycle's call.
func (b *Breaker) Record(outcome Outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if outcome == Succeeded {
		b.failures = 0
		return
	}
	b.failures++
	if b.state == Closed && (outcome == TimedOut || outcome == FarOverBudget || b.failures >= b.threshold) {
		b.set(Open)
		select {
		case b.opened <- struct{}{}:
		default: // the prober has a token to take already
		}
	}
}

// ProbeSucceeded closes the breaker: the simulator answers again.
func (b *Breaker) ProbeSucceeded() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = 0
	if b.state != Closed {
		b.set(Closed)
	}
}

func (b *Breaker) set(to State) {
	from := b.state
	b.state = to
	if b.onChange != nil {
		b.onChange(from, to, b.failures)
	}
}
