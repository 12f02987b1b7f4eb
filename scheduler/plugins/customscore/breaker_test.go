package customscore

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) step(d time.Duration) { c.t = c.t.Add(d) }
func newTestBreaker(threshold int, cooldown time.Duration) (*breaker, *fakeClock, *[]breakerState) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	var changes []breakerState
	b := newBreaker(threshold, cooldown, func(_, to breakerState, _ int) { changes = append(changes, to) })
	b.now = clock.now
	return b, clock, &changes
}

func mustAllow(t *testing.T, b *breaker, wantAllowed, wantProbe bool) {
	t.Helper()
	allowed, probe := b.allow()
	if allowed != wantAllowed || probe != wantProbe {
		t.Fatalf("allow() = (%v, %v), want (%v, %v) in state %v", allowed, probe, wantAllowed, wantProbe, b.current())
	}
}

func TestBreakerOpensAfterThresholdConsecutiveFailures(t *testing.T) {
	b, _, changes := newTestBreaker(3, 30*time.Second)
	for range 2 {
		mustAllow(t, b, true, false)
		b.record(false)
	}
	// A success resets the count: failures must be consecutive.
	b.record(true)
	for range 2 {
		b.record(false)
	}
	if b.current() != breakerClosed {
		t.Fatalf("state %v after 2 consecutive failures, want closed", b.current())
	}
	b.record(false)
	if b.current() != breakerOpen {
		t.Fatalf("state %v after 3 consecutive failures, want open", b.current())
	}
	mustAllow(t, b, false, false)
	if len(*changes) != 1 || (*changes)[0] != breakerOpen {
		t.Errorf("changes = %v, want [open]", *changes)
	}
}

func TestBreakerHalfOpenProbe(t *testing.T) {
	b, clock, changes := newTestBreaker(1, 30*time.Second)
	b.record(false)
	clock.step(29 * time.Second)
	mustAllow(t, b, false, false)

	clock.step(time.Second)
	mustAllow(t, b, true, true)
	if b.current() != breakerHalfOpen {
		t.Fatalf("state %v, want half-open", b.current())
	}
	// Only one probe at a time.
	mustAllow(t, b, false, false)

	// A failed probe opens the breaker for a whole new cool-down.
	b.record(false)
	clock.step(29 * time.Second)
	mustAllow(t, b, false, false)
	clock.step(time.Second)
	mustAllow(t, b, true, true)

	// A good probe closes it.
	b.record(true)
	if b.current() != breakerClosed {
		t.Fatalf("state %v, want closed", b.current())
	}
	mustAllow(t, b, true, false)
	want := []breakerState{breakerOpen, breakerHalfOpen, breakerOpen, breakerHalfOpen, breakerClosed}
	if len(*changes) != len(want) {
		t.Fatalf("changes = %v, want %v", *changes, want)
	}
	for i := range want {
		if (*changes)[i] != want[i] {
			t.Fatalf("changes = %v, want %v", *changes, want)
		}
	}
}

func TestBreakerStateNames(t *testing.T) {
	for s, want := range map[breakerState]string{breakerClosed: "closed", breakerOpen: "open", breakerHalfOpen: "half-open"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
}
