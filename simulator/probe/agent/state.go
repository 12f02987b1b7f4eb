package agent

import (
	"net/netip"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Bounds of an agent's state: fixed, whatever arrives.
const (
	// maxTrainSources is how many senders' trains an agent remembers, and
	// maxTrainsPerSource how many trains of each: a report is asked for
	// right after its train, so a few suffice, and a sender's new trains
	// evict only its own.
	maxTrainSources    = 16
	maxTrainsPerSource = 4
	// maxLimitedSources is how many source addresses the answer limits
	// track.
	maxLimitedSources = 256
	// agentSourceRate is how many answers a second an agent gives one
	// source address, after a burst of agentSourceBurst: above what a
	// prober asks of one agent (at most 1,000 echoes a second, a hello
	// and a train's reports), far below what a flood sends. Only
	// authenticated, fresh requests reach it.
	agentSourceRate  = 1200
	agentSourceBurst = 200
	// trainSourceRate and trainSourceBurst bound the train packets an
	// agent counts of one source address: a prober's longest train
	// (1,000 packets) twice at once, a few a second.
	trainSourceRate  = 4000
	trainSourceBurst = 2000
)

// trainTable holds what an agent counted of each sender's last trains.
type trainTable struct {
	sources []sourceTrains
}

type sourceTrains struct {
	from netip.AddrPort
	// ids and counts are the sender's trains, in arrival order of their
	// first packet; a new one replaces the oldest.
	ids    [maxTrainsPerSource]uint64
	counts [maxTrainsPerSource]wire.TrainCount
	n      int
	next   int
	// last is when the sender's last train packet arrived: the sender
	// heard from longest ago is forgotten first.
	last time.Time
}

// count records one packet of from's train id, received at now.
func (tt *trainTable) count(from netip.AddrPort, id uint64, size int, now time.Time) {
	s := tt.source(from, now)
	s.last = now
	for i := range s.n {
		if s.ids[i] == id {
			c := &s.counts[i]
			c.Packets++
			c.Bytes += uint64(size)
			c.Last = now
			return
		}
	}
	i := s.next
	s.ids[i] = id
	s.counts[i] = wire.TrainCount{Packets: 1, Bytes: uint64(size), First: now, Last: now}
	s.next = (s.next + 1) % maxTrainsPerSource
	s.n = min(s.n+1, maxTrainsPerSource)
}

// source returns from's entry, making one, in place of the sender heard
// from longest ago if the table is full.
func (tt *trainTable) source(from netip.AddrPort, now time.Time) *sourceTrains {
	oldest := -1
	for i := range tt.sources {
		if tt.sources[i].from == from {
			return &tt.sources[i]
		}
		if oldest < 0 || tt.sources[i].last.Before(tt.sources[oldest].last) {
			oldest = i
		}
	}
	if len(tt.sources) < maxTrainSources {
		tt.sources = append(tt.sources, sourceTrains{from: from})
		return &tt.sources[len(tt.sources)-1]
	}
	tt.sources[oldest] = sourceTrains{from: from, last: now}
	return &tt.sources[oldest]
}

// get returns what arrived of from's train id: nothing when from sent no
// such train.
func (tt *trainTable) get(from netip.AddrPort, id uint64) wire.TrainCount {
	for i := range tt.sources {
		s := &tt.sources[i]
		if s.from != from {
			continue
		}
		for j := range s.n {
			if s.ids[j] == id {
				return s.counts[j]
			}
		}
	}
	return wire.TrainCount{}
}

// sourceLimits is a token bucket per source address.
type sourceLimits struct {
	rate, burst float64
	buckets     map[netip.Addr]*sourceBucket
}

type sourceBucket struct {
	tokens float64
	last   time.Time
}

func newSourceLimits(rate, burst float64) sourceLimits {
	return sourceLimits{rate: rate, burst: burst, buckets: map[netip.Addr]*sourceBucket{}}
}

// allow takes one answer from src's bucket, if there is one.
func (l *sourceLimits) allow(src netip.Addr, now time.Time) bool {
	b := l.buckets[src]
	if b == nil {
		if len(l.buckets) >= maxLimitedSources {
			l.forgetStalest()
		}
		b = &sourceBucket{tokens: l.burst, last: now}
		l.buckets[src] = b
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.tokens+l.rate*d.Seconds(), l.burst)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// forgetStalest drops the source heard from longest ago: its bucket has
// refilled the most.
func (l *sourceLimits) forgetStalest() {
	var stalest netip.Addr
	var at time.Time
	for src, b := range l.buckets {
		if at.IsZero() || b.last.Before(at) {
			stalest, at = src, b.last
		}
	}
	delete(l.buckets, stalest)
}
