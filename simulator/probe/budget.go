package probe

import (
	"sync"
	"time"
)

// bucket is the probing budget: a token bucket of bytes on the wire,
// refilled at the budget's rate. Echoes spend first and unconditionally
// (their rate is bounded by EchoRate to half the budget); hellos and
// trains only spend what is there.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // bytes per second
	cap    float64
	tokens float64
	last   time.Time
}

func newBucket(rate, capacity float64, now time.Time) *bucket {
	return &bucket{rate: rate, cap: capacity, last: now}
}

func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.tokens+b.rate*d.Seconds(), b.cap)
		b.last = now
	}
}

// spend takes n bytes, going into debt if need be.
func (b *bucket) spend(now time.Time, n float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.tokens -= n
}

// trySpend takes n bytes if they are there.
func (b *bucket) trySpend(now time.Time, n float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// until is how long until n bytes are there.
func (b *bucket) until(now time.Time, n float64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens >= n {
		return 0
	}
	return time.Duration((n - b.tokens) / b.rate * float64(time.Second))
}
