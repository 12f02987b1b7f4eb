package agent

import "time"

// Freshness: an agent takes a request sent within maxRequestSkew of its
// own clock, either way, and each request once. Nodes' clocks are kept
// within milliseconds of each other by NTP; seconds of skew are a broken
// node, and its agent's refusals are counted (Agent.Refused).
const (
	maxRequestSkew = 10 * time.Second
	// maxRemembered bounds the requests an agent remembers: the probers'
	// rates over twice maxRequestSkew, with room. Only authenticated
	// requests are remembered, so only a prober can fill it.
	maxRemembered = 1 << 18
)

// replayGuard remembers the requests an agent took while they could still
// be fresh.
type replayGuard struct {
	seen  map[uint64]struct{}
	order []remembered
	head  int
}

type remembered struct {
	id uint64
	at time.Time
}

// fresh says the request whose identity is id, sent at sent, may be taken
// at now: sent within maxRequestSkew of now, and not taken before. It
// remembers it when so.
func (g *replayGuard) fresh(id uint64, sent, now time.Time) bool {
	if sent.IsZero() || sent.Sub(now).Abs() > maxRequestSkew {
		return false
	}
	g.forget(now)
	if _, ok := g.seen[id]; ok {
		return false
	}
	if len(g.seen) >= maxRemembered {
		return false
	}
	if g.seen == nil {
		g.seen = map[uint64]struct{}{}
	}
	g.seen[id] = struct{}{}
	g.order = append(g.order, remembered{id, now})
	return true
}

// forget drops what was taken longer ago than a request can be fresh.
func (g *replayGuard) forget(now time.Time) {
	for g.head < len(g.order) && now.Sub(g.order[g.head].at) > 2*maxRequestSkew {
		delete(g.seen, g.order[g.head].id)
		g.head++
	}
	if g.head > len(g.order)/2 && g.head > 1024 {
		g.order = append(g.order[:0], g.order[g.head:]...)
		g.head = 0
	}
}

// requestID is the identity a request is remembered by: its type, id, for
// a train packet its index, and the time it was sent (a prober asks for a
// train's report more than once, each time anew), mixed so that two
// requests never collide in practice.
func requestID(t byte, id uint64, index uint32, sent time.Time) uint64 {
	x := id ^ uint64(t)<<56 ^ uint64(index)*0x9e3779b97f4a7c15 ^ uint64(sent.UnixNano())*0xd1b54a32d192ed03
	// splitmix64's finaliser.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
