package probe

import (
	"math"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// linkSample is one reading of a node link's byte counters as the prober
// keeps it.
type linkSample struct {
	rx, tx uint64
	// agentAt is when the agent read the counters, by its clock: rates
	// are taken between two such times, which one clock gave.
	agentAt time.Time
	// at is the same moment by the prober's clock, for the reading's age:
	// the answer's arrival less the time the reading waited in the agent.
	at time.Time
	// readings is how many readings this one stands for: itself and the
	// ones it replaced since the reading kept before it.
	readings int
}

// maxLinkClockJump is how much further the agent's clock may have moved
// between two readings than the prober's did: more, and the later
// reading's time is not to be trusted.
const maxLinkClockJump = time.Minute

// linkSpacing is the least time between kept readings, as a share of the
// window: a rate needs only the window's first and last readings, and
// readings this close together add nothing but memory.
const linkSpacing = 16

// minLinkSpan is the least time between the two readings a link use is
// taken from: the agent reads its counters at most once a second.
const minLinkSpan = time.Second

// addLink takes the link reading of an echo answer that the agent sent at
// sent (its clock) and the prober received at. It keeps the readings of
// the window before the newest, by the agent's clock. A counter that went
// back (the node restarted, or its interface did) starts the series
// afresh, and so does a reading a window after the last; a reading that
// goes back in time, or too far forward, is refused. It says whether the
// reading was taken, or was the one already taken.
func (t *target) addLink(r wire.LinkReading, sent, at time.Time, window time.Duration) bool {
	if !r.Valid() || r.At.IsZero() {
		return false
	}
	s := linkSample{rx: r.RxBytes, tx: r.TxBytes, agentAt: r.At, at: at, readings: 1}
	if waited := sent.Sub(r.At); !sent.IsZero() && waited > 0 && waited < window {
		s.at = at.Add(-waited)
	}
	if n := len(t.link); n > 0 {
		last := t.link[n-1]
		switch {
		case s.at.Sub(last.at) > window:
			t.link = t.link[:0]
		case s.agentAt.Equal(last.agentAt):
			return last.rx == s.rx && last.tx == s.tx
		case s.agentAt.Before(last.agentAt):
			return false
		case s.agentAt.Sub(last.agentAt) > s.at.Sub(last.at)+maxLinkClockJump:
			return false
		case s.rx < last.rx || s.tx < last.tx:
			t.link = t.link[:0]
		}
	}
	// The last reading is replaced until it is far enough from the one
	// before it to be kept.
	if n := len(t.link); n >= 2 && t.link[n-1].agentAt.Sub(t.link[n-2].agentAt) < window/linkSpacing {
		s.readings += t.link[n-1].readings
		t.link[n-1] = s
	} else {
		t.link = append(t.link, s)
	}
	i := 0
	for i < len(t.link)-1 && t.link[i].agentAt.Before(s.agentAt.Add(-window)) {
		i++
	}
	if i > 0 {
		t.link = append(t.link[:0], t.link[i:]...)
	}
	return true
}

// linkUse is the traffic on a node's link at now, from its readings: the
// larger of the bytes received and sent between the first reading and the
// last, in Mbit/s, over the time between them by the agent's clock. None
// when fewer than two readings a second apart are there, or when the last
// is older than maxAge. Counters are exact: the interval is the value.
// Its samples are the readings from the first to the last.
func linkUse(readings []linkSample, now time.Time, maxAge time.Duration) (Estimate, bool) {
	if len(readings) < 2 {
		return Estimate{}, false
	}
	first, last := readings[0], readings[len(readings)-1]
	span := last.agentAt.Sub(first.agentAt)
	if span < minLinkSpan || now.Sub(last.at) > maxAge {
		return Estimate{}, false
	}
	bytes := max(last.rx-first.rx, last.tx-first.tx)
	v := float64(bytes) * 8 / span.Seconds() / 1e6
	if !finite(v) || math.Signbit(v) {
		return Estimate{}, false
	}
	n := 1
	for _, r := range readings[1:] {
		n += r.readings
	}
	return Estimate{Value: v, Low: v, High: v, Samples: n, At: last.at}, true
}
