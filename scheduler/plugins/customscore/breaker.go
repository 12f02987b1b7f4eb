package customscore

import (
	"sync"
)

type breakerState int

const (
	breakerClosed breakerState = 0
	breakerOpen   breakerState = 1
)

func (s breakerState) String() string {
	if s == breakerOpen {
		return "open"
	}
	return "closed"
}

// cycleOutcome is how a scheduling cycle's call to the simulator ended.
type cycleOutcome int

const (
	cycleSucceeded cycleOutcome = iota
	// cycleFailedFast: refused, 5xx, bad body: the retries cost little.
	cycleFailedFast
	// cycleTimedOut: the last attempt waited its whole timeout, so the cycle
	// spent its whole retry budget.
	cycleTimedOut
	// cycleSlow: the simulator answered, slower than the latency budget. In
	// one process with other profiles, every cycle holds the one scheduling
	// loop, so a slow answer costs every pod of the cluster: it counts as a
	// failure, though its scores are used.
	cycleSlow
)

// breaker keeps a dead, hanging or slow simulator from stalling scheduling
// cycles. It opens after threshold cycles in a row fail fast or answer
// slower than the latency budget, or at once after a cycle that timed out:
// a second such cycle would cost another whole retry budget. While it is
// open no cycle calls the simulator; the prober (perCycle.probe, on the
// source's own goroutine) asks it off the cycle and closes the breaker on
// the first answer within the budget, so cycles only ever read the state.
//
// It lives across cycles by design, so it is the one piece of plugin state
// outside CycleState, and a mutex guards it.
type breaker struct {
	threshold int
	// onChange is called, under the lock, on every state change.
	onChange func(from, to breakerState, failures int)
	// opened receives a token each time the breaker opens; the prober waits on it.
	opened chan struct{}

	mu       sync.Mutex
	state    breakerState
	failures int
}

func newBreaker(threshold int, onChange func(from, to breakerState, failures int)) *breaker {
	return &breaker{threshold: threshold, onChange: onChange, opened: make(chan struct{}, 1)}
}

// allow reports whether this cycle may call the simulator.
func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == breakerClosed
}

// record takes the outcome of a scheduling cycle's call.
func (b *breaker) record(outcome cycleOutcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if outcome == cycleSucceeded {
		b.failures = 0
		return
	}
	b.failures++
	if b.state == breakerClosed && (outcome == cycleTimedOut || b.failures >= b.threshold) {
		b.set(breakerOpen)
		select {
		case b.opened <- struct{}{}:
		default: // the prober has a token to take already
		}
	}
}

// probeSucceeded closes the breaker: the simulator answers again.
func (b *breaker) probeSucceeded() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = 0
	if b.state != breakerClosed {
		b.set(breakerClosed)
	}
}

func (b *breaker) set(to breakerState) {
	from := b.state
	b.state = to
	if b.onChange != nil {
		b.onChange(from, to, b.failures)
	}
}
