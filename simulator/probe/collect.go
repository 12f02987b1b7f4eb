package probe

import (
	"context"
	"math"
	"net/netip"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Collecting what agents measured between each other: each agent's
// random probes' samples once every CollectEvery, for the coordinates,
// and the pairs' measurements once every pairsEvery (pairs.go). Both are
// requests the prober pads to the room it wants for the answer, and both
// spend the probing budget.

const (
	// collectTick is how often the collect loop looks for what is due.
	collectTick = 100 * time.Millisecond
	// samplesShare is the share of the budget collecting samples keeps
	// within, stretching the time between two collections up to
	// maxCollectEvery to do so.
	samplesShare = 1.0 / 16
	// maxCollectEvery is the longest time between two collections from
	// one agent: it keeps 256 samples, four minutes of them.
	maxCollectEvery = 2 * time.Minute
	// samplesSlack is how many more samples than seconds since the last
	// collection the prober makes room for: an agent probes about once a
	// second, not exactly.
	samplesSlack = 1.25
)

// pendingRequest is a samples or pairs request awaiting its answer.
type pendingRequest struct {
	addr netip.AddrPort
	sent time.Time
	kind byte
	// peers are the peers a pairs request named, in its order.
	peers []pairRef
}

// samplesRequestSize is the size of a samples request with room for the
// samples of since.
func samplesRequestSize(since time.Duration) int {
	room := int(math.Ceil(since.Seconds()*samplesSlack)) + 8
	return min(wire.SamplesMinSize+room*wire.SampleRecordSize, wire.MaxDatagram)
}

// samplesWireBytes is what one collection of every's samples costs on
// the wire, request and answer.
func samplesWireBytes(every time.Duration) float64 {
	return float64(2 * (samplesRequestSize(every) + wire.Overhead))
}

// CollectEvery is how often the prober collects each of n agents'
// samples: once a window while that keeps within samplesShare of the
// budget, less often as it grows, at most maxCollectEvery apart.
func CollectEvery(cfg Config, n int) time.Duration {
	for every := cfg.Window; every < maxCollectEvery; every += time.Second {
		if CollectCost(cfg, n, every) <= samplesShare*cfg.BudgetBytesPerSecond {
			return every
		}
	}
	return maxCollectEvery
}

// CollectCost is what collecting n agents' samples every every costs,
// in bytes a second on the wire.
func CollectCost(cfg Config, n int, every time.Duration) float64 {
	return float64(n) * samplesWireBytes(every) / every.Seconds()
}

// collect asks agents for what they measured between each other until
// ctx ends.
func (p *Prober) collect(ctx context.Context) {
	tick := time.NewTicker(collectTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := p.now()
		p.expireRequests(now)
		p.collectSamples(now)
		p.requestPairs(now)
	}
}

// expireRequests forgets the requests unanswered for twice the timeout.
func (p *Prober) expireRequests(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, r := range p.requests {
		if now.Sub(r.sent) > lossAfter(p.cfg) {
			delete(p.requests, id)
		}
	}
}

type samplesDue struct {
	id       uint64
	addr     netip.AddrPort
	size     int
	epoch, c uint64
}

// collectSamples asks the agents whose turn it is for their samples:
// each once every CollectEvery, spread over it, as the budget allows.
func (p *Prober) collectSamples(now time.Time) {
	p.mu.Lock()
	named := p.namedLocked()
	every := CollectEvery(p.cfg, named)
	quota := int(math.Ceil(float64(named) * collectTick.Seconds() / every.Seconds()))
	var due []samplesDue
	for _, t := range p.order {
		if len(due) >= quota {
			break
		}
		if t.node == "" || t.silent || now.Sub(t.collectedAt) < every {
			continue
		}
		since := every
		if !t.collectedAt.IsZero() {
			since = now.Sub(t.collectedAt)
		}
		size := samplesRequestSize(since)
		if !p.budget.trySpend(now, float64(2*(size+wire.Overhead))) {
			break
		}
		t.collectedAt = now
		id := wire.NewID()
		p.requests[id] = pendingRequest{addr: t.addr, sent: now, kind: wire.TypeSamples}
		due = append(due, samplesDue{id, t.addr, size, t.epoch, t.cursor})
	}
	p.mu.Unlock()
	buf := make([]byte, wire.MaxDatagram)
	for _, d := range due {
		p.send(wire.EncodeSamplesRequest(buf, d.size, d.id, d.epoch, d.c, now), d.addr)
	}
}

// samplesAnswered takes an agent's samples, received at, if they answer
// a request in flight to from: each round trip moves the agent's node's
// coordinate against its peer's. A peer is named by the hash its answer
// carried; one no node or more than one node has is passed over.
func (p *Prober) samplesAnswered(b []byte, from netip.AddrPort, at time.Time) bool {
	id, epoch, cursor, _, samples, err := wire.DecodeSamples(b)
	if err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.requests[id]
	if !ok || r.addr != from || r.kind != wire.TypeSamples {
		return false
	}
	delete(p.requests, id)
	t := p.targets[from]
	if t == nil || t.node == "" {
		return true
	}
	t.epoch, t.cursor = epoch, cursor
	names := p.peerNamesLocked()
	for _, s := range samples {
		peer, ok := names[s.Peer]
		if !ok || peer == "" || s.RTT == wire.Lost {
			p.stats.samplesPassed.Add(1)
			continue
		}
		if p.coords.update(t.node, peer, s.RTT, at.Add(-s.Age)) {
			p.stats.samples.Add(1)
		}
	}
	return true
}

// peerNamesLocked maps PeerHash to the named nodes, "" where two nodes
// share one; rebuilt when the targets' names changed. Called with p.mu
// held.
func (p *Prober) peerNamesLocked() map[uint32]string {
	if p.peerNames != nil {
		return p.peerNames
	}
	names := map[uint32]string{}
	for _, t := range p.order {
		if t.node == "" {
			continue
		}
		h := wire.PeerHash(t.nodeHash)
		if other, ok := names[h]; ok && other != t.node {
			names[h] = ""
			continue
		}
		names[h] = t.node
	}
	p.peerNames = names
	return names
}
