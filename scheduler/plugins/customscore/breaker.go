package customscore

import (
	"sync"
	"time"
)

type breakerState int

const (
	breakerClosed   breakerState = 0
	breakerOpen     breakerState = 1
	breakerHalfOpen breakerState = 2
)

func (s breakerState) String() string {
	switch s {
	case breakerOpen:
		return "open"
	case breakerHalfOpen:
		return "half-open"
	}
	return "closed"
}

// breaker keeps a dead or hanging simulator from stalling every scheduling
// cycle. After threshold failed cycles in a row it opens: calls are skipped
// for cooldown. Then one cycle may probe; its success closes the breaker, its
// failure opens it again. It lives across cycles by design, so it is the one
// piece of plugin state outside CycleState, and it is guarded by a mutex.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time
	// onChange is called, under the lock, on every state change.
	onChange func(from, to breakerState, failures int)

	mu       sync.Mutex
	state    breakerState
	failures int
	openedAt time.Time
}

func newBreaker(threshold int, cooldown time.Duration, onChange func(from, to breakerState, failures int)) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown, now: time.Now, onChange: onChange}
}

// allow reports whether this cycle may call the simulator, and whether the
// call is the single probe of a half-open breaker.
func (b *breaker) allow() (allowed, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case breakerOpen:
		if b.now().Sub(b.openedAt) < b.cooldown {
			return false, false
		}
		b.set(breakerHalfOpen)
		return true, true
	case breakerHalfOpen:
		// A probe is already out (cycles are serial, so this is rare): skip.
		return false, false
	}
	return true, false
}

// record takes the outcome of a cycle's call.
func (b *breaker) record(success bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if success {
		b.failures = 0
		if b.state != breakerClosed {
			b.set(breakerClosed)
		}
		return
	}
	b.failures++
	if b.state == breakerHalfOpen || b.failures >= b.threshold {
		b.openedAt = b.now()
		if b.state != breakerOpen {
			b.set(breakerOpen)
		}
	}
}

func (b *breaker) current() breakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

func (b *breaker) set(to breakerState) {
	from := b.state
	b.state = to
	if b.onChange != nil {
		b.onChange(from, to, b.failures)
	}
}
