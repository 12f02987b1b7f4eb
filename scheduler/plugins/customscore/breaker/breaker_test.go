package breaker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestBreaker(threshold int) (*Breaker, *[]State) {
	var changes []State
	b := New(threshold, func(_, to State, _ int) { changes = append(changes, to) })
	return b, &changes
}

// opened reports whether the breaker signalled the prober, taking the token.
func opened(b *Breaker) bool {
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
		outcomes  []Outcome
		want      State
		wantOpens bool
	}{
		{"fast failures under the threshold", 3, []Outcome{FailedFast, FailedFast}, Closed, false},
		{"fast failures reach the threshold", 3, []Outcome{FailedFast, FailedFast, FailedFast}, Open, true},
		{"a success resets the count", 3, []Outcome{FailedFast, FailedFast, Succeeded, FailedFast, FailedFast}, Closed, false},
		// A timed-out cycle spent its whole retry budget: one is enough.
		{"one timed-out cycle opens it", 3, []Outcome{TimedOut}, Open, true},
		{"a timeout after fast failures", 3, []Outcome{FailedFast, TimedOut}, Open, true},
		// So does one far over the latency budget: it cost as much.
		{"one cycle far over the budget opens it", 3, []Outcome{FarOverBudget}, Open, true},
		{"slow cycles under the threshold", 3, []Outcome{Slow, Slow}, Closed, false},
		{"slow cycles reach the threshold", 3, []Outcome{Slow, FailedFast, Slow}, Open, true},
		{"threshold 1", 1, []Outcome{FailedFast}, Open, true},
		{"successes only", 1, []Outcome{Succeeded, Succeeded}, Closed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(tt.threshold)
			for _, o := range tt.outcomes {
				b.Record(o)
			}
			if got := stateOf(b); got != tt.want {
				t.Errorf("state %v, want %v", got, tt.want)
			}
			if got := b.Allow(); got != (tt.want == Closed) {
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
	b.Record(FailedFast)
	b.Record(FailedFast)
	// Cycles that still report while open (they started before it opened)
	// neither reopen it nor signal the prober again.
	b.Record(TimedOut)
	if !opened(b) || opened(b) {
		t.Fatal("want exactly one signal to the prober per opening")
	}
	if b.Allow() {
		t.Fatal("open breaker allowed a cycle")
	}
	b.ProbeSucceeded()
	if stateOf(b) != Closed || !b.Allow() {
		t.Fatalf("state %v after a good probe, want closed", stateOf(b))
	}
	want := []State{Open, Closed}
	if diff := cmp.Diff(want, *changes); diff != "" {
		t.Errorf("state changes (-want,+got):\n%s", diff)
	}
	// Failures counted before the close do not carry over.
	b.Record(FailedFast)
	if stateOf(b) != Closed {
		t.Errorf("threshold 2: state %v after one failure since closing, want closed", stateOf(b))
	}
}

func stateOf(b *Breaker) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}
