package customscore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestBreaker(threshold int) (*breaker, *[]breakerState) {
	var changes []breakerState
	b := newBreaker(threshold, func(_, to breakerState, _ int) { changes = append(changes, to) })
	return b, &changes
}

// opened reports whether the breaker signalled the prober, taking the token.
func opened(b *breaker) bool {
	select {
	case <-b.opened:
		return true
	default:
		return false
	}
}

func TestBreaker(t *testing.T) {
	tests := []struct {
		name      string
		threshold int
		outcomes  []cycleOutcome
		want      breakerState
		wantOpens bool
	}{
		{"fast failures under the threshold", 3, []cycleOutcome{cycleFailedFast, cycleFailedFast}, breakerClosed, false},
		{"fast failures reach the threshold", 3, []cycleOutcome{cycleFailedFast, cycleFailedFast, cycleFailedFast}, breakerOpen, true},
		{"a success resets the count", 3, []cycleOutcome{cycleFailedFast, cycleFailedFast, cycleSucceeded, cycleFailedFast, cycleFailedFast}, breakerClosed, false},
		// A timed-out cycle spent its whole retry budget: one is enough.
		{"one timed-out cycle opens it", 3, []cycleOutcome{cycleTimedOut}, breakerOpen, true},
		{"a timeout after fast failures", 3, []cycleOutcome{cycleFailedFast, cycleTimedOut}, breakerOpen, true},
		{"threshold 1", 1, []cycleOutcome{cycleFailedFast}, breakerOpen, true},
		{"successes only", 1, []cycleOutcome{cycleSucceeded, cycleSucceeded}, breakerClosed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(tt.threshold)
			for _, o := range tt.outcomes {
				b.record(o)
			}
			if got := stateOf(b); got != tt.want {
				t.Errorf("state %v, want %v", got, tt.want)
			}
			if got := b.allow(); got != (tt.want == breakerClosed) {
				t.Errorf("allow() = %v in state %v", got, tt.want)
			}
			if got := opened(b); got != tt.wantOpens {
				t.Errorf("prober signalled = %v, want %v", got, tt.wantOpens)
			}
		})
	}
}

func TestBreakerProbeCycle(t *testing.T) {
	b, changes := newTestBreaker(2)
	b.record(cycleFailedFast)
	b.record(cycleFailedFast)
	// Cycles that still report while open (they started before it opened)
	// neither reopen it nor signal the prober again.
	b.record(cycleTimedOut)
	if !opened(b) || opened(b) {
		t.Fatal("want exactly one signal to the prober per opening")
	}
	if b.allow() {
		t.Fatal("open breaker allowed a cycle")
	}
	b.probeSucceeded()
	if stateOf(b) != breakerClosed || !b.allow() {
		t.Fatalf("state %v after a good probe, want closed", stateOf(b))
	}
	want := []breakerState{breakerOpen, breakerClosed}
	if diff := cmp.Diff(want, *changes); diff != "" {
		t.Errorf("state changes (-want,+got):\n%s", diff)
	}
	// Failures counted before the close do not carry over.
	b.record(cycleFailedFast)
	if stateOf(b) != breakerClosed {
		t.Errorf("threshold 2: state %v after one failure since closing, want closed", stateOf(b))
	}
}

func stateOf(b *breaker) breakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}
