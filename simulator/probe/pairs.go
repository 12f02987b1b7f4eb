package probe

import (
	"cmp"
	"maps"
	"math"
	"net/netip"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Pairs measured directly. The scheduler says which nodes host pods that
// other pods talk to (SetInterest); for each, the prober has its agent
// measure directly the Config.PairsPerNode nodes nearest to it by
// coordinates (all the others in a cluster that small): a stream of
// Config.PairEchoesPerSecond echoes to each, and a train every
// pairTrainEvery. It renews the list every pairsEvery, and collects what
// was measured with the same request. Each pair's latency, loss and
// bandwidth are summarised as a node's are, from the same estimators.

const (
	// pairsEvery is how often at least the prober renews each measuring
	// agent's list and collects what it measured: more often when a
	// second's echoes do not fit one datagram (pairsRequests).
	pairsEvery = time.Second
	// pairsShare is the most of the budget collecting pairs may take: the
	// measuring agents beyond it are left to the coordinates.
	pairsShare = 1.0 / 8
	// interestWindows is how many windows interest lasts unless renewed.
	interestWindows = 3
	// pairTrainWindows is how many windows apart a pair's trains are.
	pairTrainWindows = 2
	// pairsSlack is how much more room than the echoes of pairsEvery the
	// prober leaves for an answer.
	pairsSlack = 1.3
)

// pairKey names an unordered pair, a before b by name.
type pairKey struct{ a, b string }

func keyOf(x, y string) pairKey {
	if y < x {
		x, y = y, x
	}
	return pairKey{x, y}
}

// pairState is what was measured of one pair.
type pairState struct {
	// echoes are resolved echoes, oldest first, sent within the window.
	echoes []echo
	trains []trainSample
	// trainID is the id of the train last asked for, and trainAsked when.
	trainID    uint64
	trainAsked time.Time
}

// pairRef is one peer of a pairs request: the pair, and the node and
// address it was asked to measure.
type pairRef struct {
	key  pairKey
	node string
	hash uint32
	addr netip.AddrPort
}

// PairMetrics are one pair's measurements; nil is unknown.
type PairMetrics struct {
	// From and To name the pair's nodes, From first by name.
	From, To string
	// LatencyMs, PacketLoss and BandwidthMbps are as a node's (Metrics),
	// between the two nodes' agents.
	LatencyMs, PacketLoss, BandwidthMbps *Estimate
}

// SetInterest says which nodes host pods that other pods talk to: each
// one's nearest nodes are measured directly from now on, for
// interestWindows windows unless it is said again.
func (p *Prober) SetInterest(nodes []string) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	until := now.Add(interestWindows * p.cfg.Window)
	for _, n := range nodes {
		p.interest[n] = until
	}
	p.pairsChosen = time.Time{}
}

// pairsRequests is how one measuring agent naming peers peers at rate is
// asked: requests of size bytes, one every every, so that the answers hold
// the echoes of pairsEvery (with room to spare) and a train's result
// each, in datagrams no longer than wire.MaxDatagram.
func pairsRequests(peers, rate int) (size int, every time.Duration) {
	echoes := float64(rate) * pairsEvery.Seconds() * pairsSlack
	need := wire.PairsMinSize + peers*wire.PairBlockSize(int(math.Ceil(echoes)), true)
	n := max(1, int(math.Ceil(float64(need)/wire.MaxDatagram)))
	per := wire.PairsMinSize + peers*wire.PairBlockSize(int(math.Ceil(echoes/float64(n))), true)
	return min(max(wire.PairsRequestSize(peers), per), wire.MaxDatagram), pairsEvery / time.Duration(n)
}

// pairsCost is what asking one measuring agent for peers pairs costs a
// second on the wire, requests and answers.
func pairsCost(cfg Config, peers int) float64 {
	size, every := pairsRequests(peers, cfg.PairEchoesPerSecond)
	return float64(2*(size+wire.Overhead)) / every.Seconds()
}

// choosePairsLocked decides which agent measures which peers: each node
// of interest its PairsPerNode nearest, or all the others in a cluster
// that small, each pair once (by the first node of interest, by name,
// that chose it), as many measuring agents as pairsShare of the budget
// carries. Called with p.mu held.
func (p *Prober) choosePairsLocked(now time.Time) {
	var names []string
	byNode := map[string]*target{}
	for _, t := range p.order {
		if t.node != "" && !t.silent {
			names = append(names, t.node)
			byNode[t.node] = t
		}
	}
	slices.Sort(names)
	var interested []string
	for n, until := range p.interest {
		if now.After(until) {
			delete(p.interest, n)
		} else if byNode[n] != nil {
			interested = append(interested, n)
		}
	}
	slices.Sort(interested)
	k := p.cfg.PairsPerNode
	most := int(pairsShare * p.cfg.BudgetBytesPerSecond / pairsCost(p.cfg, min(k, wire.MaxPairPeers)))
	plan := map[string][]string{}
	chosen := map[pairKey]bool{}
	for _, n := range interested {
		if len(plan) >= most {
			klog.Background().V(2).Info("Pairs beyond the budget are left to the coordinates", "measuring", most, "interested", len(interested))
			break
		}
		near := p.coords.nearest(n, names, k)
		if len(names)-1 <= k {
			near = slices.DeleteFunc(slices.Clone(names), func(m string) bool { return m == n })
		}
		for _, m := range near {
			if key := keyOf(n, m); !chosen[key] && len(plan[n]) < wire.MaxPairPeers {
				chosen[key] = true
				plan[n] = append(plan[n], m)
			}
		}
	}
	p.plan, p.pairsChosen = plan, now
	for measurer := range p.pairsSent {
		if plan[measurer] == nil {
			delete(p.pairsSent, measurer)
		}
	}
	for key := range chosen {
		if p.pairs[key] == nil {
			p.pairs[key] = &pairState{}
		}
	}
}

type pairsDue struct {
	id    uint64
	addr  netip.AddrPort
	size  int
	peers []wire.PairPeer
}

// requestPairs renews each measuring agent's list and collects what it
// measured, as often as pairsRequests says, asking for a pair's train
// every pairTrainWindows windows.
func (p *Prober) requestPairs(now time.Time) {
	p.mu.Lock()
	if now.Sub(p.pairsChosen) >= p.cfg.Window {
		p.choosePairsLocked(now)
	}
	byNode := map[string]*target{}
	for _, t := range p.order {
		if t.node != "" && !t.silent {
			byNode[t.node] = t
		}
	}
	var due []pairsDue
	for _, measurer := range slices.Sorted(maps.Keys(p.plan)) {
		t := byNode[measurer]
		size, every := pairsRequests(len(p.plan[measurer]), p.cfg.PairEchoesPerSecond)
		if t == nil || now.Sub(p.pairsSent[measurer]) < every {
			continue
		}
		var refs []pairRef
		var peers []wire.PairPeer
		for _, m := range p.plan[measurer] {
			pt := byNode[m]
			if pt == nil {
				continue
			}
			ref := pairRef{key: keyOf(measurer, m), node: m, hash: wire.PeerHash(pt.nodeHash), addr: pt.addr}
			peers = append(peers, wire.PairPeer{Addr: pt.addr, TrainID: p.trainDueLocked(ref.key, now)})
			refs = append(refs, ref)
		}
		if !p.budget.trySpend(now, float64(2*(size+wire.Overhead))) {
			break
		}
		p.pairsSent[measurer] = now
		id := wire.NewID()
		p.requests[id] = pendingRequest{addr: t.addr, sent: now, kind: wire.TypePairs, peers: refs}
		due = append(due, pairsDue{id, t.addr, size, peers})
	}
	p.mu.Unlock()
	buf := make([]byte, wire.MaxDatagram)
	for _, d := range due {
		p.send(wire.EncodePairsRequest(buf, d.size, d.id, p.cfg.PairEchoesPerSecond, d.peers, now), d.addr)
	}
}

// trainDueLocked is the id of the train to ask for on pair key now: a new
// one every pairTrainWindows windows, else the last (which the agent
// sends once), 0 for none. Called with p.mu held.
func (p *Prober) trainDueLocked(key pairKey, now time.Time) uint64 {
	ps := p.pairs[key]
	if ps == nil {
		return 0
	}
	if ps.trainAsked.IsZero() || now.Sub(ps.trainAsked) >= pairTrainWindows*p.cfg.Window {
		ps.trainID, ps.trainAsked = wire.NewID(), now
	}
	return ps.trainID
}

// pairsAnswered takes a measuring agent's answer, received at, if it
// answers a pairs request in flight to from. Each result's echoes were
// sent about 1/rate apart, the newest NewestAge before the answer; a
// result from another node than the one asked for is passed over.
func (p *Prober) pairsAnswered(b []byte, from netip.AddrPort, at time.Time) bool {
	id, _, results, err := wire.DecodePairs(b)
	if err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.requests[id]
	if !ok || r.addr != from || r.kind != wire.TypePairs {
		return false
	}
	delete(p.requests, id)
	every := time.Second / time.Duration(max(p.cfg.PairEchoesPerSecond, 1))
	for _, res := range results {
		if res.Index >= len(r.peers) || res.Refused {
			continue
		}
		ref := r.peers[res.Index]
		ps := p.pairs[ref.key]
		if ps == nil || (res.Peer != 0 && res.Peer != ref.hash) {
			continue
		}
		newest := at.Add(-res.NewestAge)
		for i, rtt := range res.Echoes {
			sent := newest.Add(-time.Duration(len(res.Echoes)-1-i) * every)
			// A round trip past the timeout is lost, as a node's is.
			lost := rtt == wire.Lost || rtt > p.cfg.Timeout
			ps.echoes = append(ps.echoes, echo{sent: sent, rtt: max(rtt, 0), lost: lost})
		}
		if tr := res.Train; tr != nil && tr.ID == ps.trainID {
			ps.trains = append(ps.trains, trainSample{at: at, mbps: tr.Mbps, atLeast: tr.AtLeast})
			if len(ps.trains) > maxTrainSamples {
				ps.trains = ps.trains[1:]
			}
		}
	}
	return true
}

// pairsDecided is the time before which every echo of a pair is reported
// at now: an agent decides an echo within wire.PeerTimeout, and reports
// it at the next request.
func pairsDecided(now time.Time) time.Time {
	return now.Add(-wire.PeerTimeout - 2*pairsEvery)
}

// summarisePairsLocked summarises every pair measured within the window,
// as a node's echoes and trains are, and forgets the pairs no longer
// chosen once their window is empty. Called with p.mu held.
func (p *Prober) summarisePairsLocked(now time.Time, bandwidthMaxAge time.Duration) []PairMetrics {
	decided := pairsDecided(now)
	from := decided.Add(-p.cfg.Window)
	chosen := map[pairKey]bool{}
	for measurer, peers := range p.plan {
		for _, m := range peers {
			chosen[keyOf(measurer, m)] = true
		}
	}
	var out []PairMetrics
	for key, ps := range p.pairs {
		ps.forgetEchoes(from)
		m, _, ok := echoMetrics(ps.echoes, decided)
		if !ok {
			if !chosen[key] {
				delete(p.pairs, key)
			}
			continue
		}
		pm := PairMetrics{From: key.a, To: key.b, LatencyMs: m.LatencyMs, PacketLoss: m.PacketLoss}
		if e, ok := bandwidth(ps.trains, now, p.cfg.Window, bandwidthMaxAge); ok {
			pm.BandwidthMbps = &e
		}
		out = append(out, pm)
	}
	slices.SortFunc(out, func(a, b PairMetrics) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return out
}

func (ps *pairState) forgetEchoes(from time.Time) {
	i := 0
	for i < len(ps.echoes) && ps.echoes[i].sent.Before(from) {
		i++
	}
	ps.echoes = append(ps.echoes[:0], ps.echoes[i:]...)
}
