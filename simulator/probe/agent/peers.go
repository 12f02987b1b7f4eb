package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Between nodes. With WithPeers, an agent also measures the other agents,
// from a socket of its own on an ephemeral port (agents refuse requests
// from the agents' port), with the same signed echoes the prober sends:
//
//   - about once a second, one echo to one random other agent; its round
//     trip, less the time it waited in that agent, or its loss, is a
//     sample the prober collects (wire.TypeSamples) for the network
//     coordinates;
//   - while the prober's pairs requests name peers, a stream of echoes to
//     each, and one train when a request carries a new train id for it;
//     what they gave is in the answer to the next request
//     (wire.TypePairs).
//
// It measures only agents its own lookup found (the headless Service's
// DNS, as the prober finds them), so a pairs request cannot point it at
// any other address, and it stops a stream that no request has named for
// pairTTL.
const (
	// peerEvery is how often, on average, an agent echoes a random peer.
	peerEvery = time.Second
	// peerLookupEvery is how often it looks its peers up again.
	peerLookupEvery = 30 * time.Second
	// maxSamples is how many samples the agent keeps for the prober: over
	// four minutes of them, more than the prober leaves between two
	// collections.
	maxSamples = 256
	// maxPairRate is the most echoes a second an agent sends one peer.
	maxPairRate = 100
	// pairTTL is how long a stream lasts after the last request naming it.
	pairTTL = 3 * time.Second
	// maxPairEchoes bounds the echoes a stream keeps until they are
	// reported: twenty seconds at the highest rate.
	maxPairEchoes = 2048
	// pairTrainPackets is a pair's train length, as the prober's.
	pairTrainPackets = 80
	// minPairTrainGap is the least time between two trains to one peer.
	minPairTrainGap = 5 * time.Second
	// peerTick is how often the agent sends what is due.
	peerTick = 10 * time.Millisecond
)

// WithPeers makes the agent measure its peers: find returns the agents'
// addresses (host:port of their probe port), and is called at start and
// every peerLookupEvery.
func WithPeers(find func(context.Context) ([]string, error)) Option {
	return func(a *Agent) { a.peers = &peerState{find: find} }
}

// peerState is what an agent knows and measures of its peers.
type peerState struct {
	find func(context.Context) ([]string, error)
	conn *net.UDPConn
	// stamped says conn's datagrams carry the kernel's receive time.
	stamped bool
	// started is set by init, before the agent serves and before any
	// goroutine writes known: readers test it without the lock.
	started bool

	mu sync.Mutex
	// found are the peers found, known the same as a set; self the
	// addresses that answered with the agent's own node (itself).
	found []netip.AddrPort
	known map[netip.AddrPort]bool
	self  map[netip.AddrPort]bool
	// hashes are PeerHash of the node each peer last answered for: a
	// loss names it too.
	hashes map[netip.AddrPort]uint32
	// pending are the echoes sent and not yet answered, by key.
	pending map[uint64]peerEcho
	// ring holds the last samples; seq numbers them, from epoch's start.
	ring        [maxSamples]sample
	seq, epoch  uint64
	nextRandom  time.Time
	streams     map[netip.AddrPort]*stream
	trainBusy   bool
	trainReport chan wire.TrainCount
	inflight    struct {
		peer netip.AddrPort
		id   uint64
	}
	rng *rand.Rand
	// train starts a pair's train, which keeps its result (pairTrain).
	train func(peer netip.AddrPort, id uint64)
}

type peerEcho struct {
	key  uint64
	peer netip.AddrPort
	sent time.Time
	// stream says a pair's stream sent it, not the random probe.
	stream bool
}

// sample is one random probe's result.
type sample struct {
	seq  uint64
	peer uint32
	rtt  time.Duration
	at   time.Time
}

// stream is one pair the prober asked for.
type stream struct {
	rate  int
	until time.Time
	next  time.Time
	// peer is PeerHash of the node that answered last.
	peer uint32
	// sent are the echoes not yet reported, in the order they were sent,
	// answered, lost or still pending: a stream reports the echoes in
	// order, up to the first still pending, so that a loss, decided
	// wire.PeerTimeout after it was sent, is reported in its place.
	sent []streamEcho
	// train: the last id sent, when, and the result not yet reported.
	trainID uint64
	trainAt time.Time
	result  *wire.PairTrain
}

type streamEcho struct {
	key     uint64
	sent    time.Time
	rtt     time.Duration
	decided bool
}

// startPeers opens the agent's socket for its peers and measures them
// until ctx ends.
func (a *Agent) startPeers(ctx context.Context) error {
	ps := a.peers
	if ps.conn == nil {
		conn, err := net.ListenUDP("udp", nil)
		if err != nil {
			return fmt.Errorf("opening a socket to measure the peers: %w", err)
		}
		ps.conn = conn
	}
	ps.stamped = wire.EnableTimestamps(ps.conn) == nil
	ps.init(func(peer netip.AddrPort, id uint64) { go a.pairTrain(peer, id) })
	go func() {
		<-ctx.Done()
		ps.conn.Close()
	}()
	go a.lookupPeers(ctx)
	go a.readPeers(ctx)
	go a.tickPeers(ctx)
	return nil
}

// init readies the state, before the agent serves; train starts a pair's
// train, and must not wait for it.
func (ps *peerState) init(train func(peer netip.AddrPort, id uint64)) {
	ps.known, ps.self, ps.hashes = map[netip.AddrPort]bool{}, map[netip.AddrPort]bool{}, map[netip.AddrPort]uint32{}
	ps.pending, ps.streams = map[uint64]peerEcho{}, map[netip.AddrPort]*stream{}
	ps.trainReport = make(chan wire.TrainCount, 4)
	ps.epoch = wire.NewID()
	ps.rng = rand.New(rand.NewPCG(wire.NewID(), wire.NewID()))
	ps.train = train
	ps.started = true
}

// lookupPeers finds the peers now and every peerLookupEvery.
func (a *Agent) lookupPeers(ctx context.Context) {
	tick := time.NewTicker(peerLookupEvery)
	defer tick.Stop()
	for {
		a.lookupPeersOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (a *Agent) lookupPeersOnce(ctx context.Context) {
	ps := a.peers
	addrs, err := ps.find(ctx)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Finding the peer agents failed; measuring those found before")
		return
	}
	known := map[netip.AddrPort]bool{}
	for _, s := range addrs {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			continue
		}
		known[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.known, ps.found = known, ps.found[:0]
	for ap := range known {
		if !ps.self[ap] {
			ps.found = append(ps.found, ap)
		}
	}
	// What is remembered of each address, only while it is a peer's:
	// agents come and go with new addresses.
	for ap := range ps.hashes {
		if !known[ap] {
			delete(ps.hashes, ap)
		}
	}
	for ap := range ps.self {
		if !known[ap] {
			delete(ps.self, ap)
		}
	}
}

// tickPeers sends what is due every peerTick.
func (a *Agent) tickPeers(ctx context.Context) {
	tick := time.NewTicker(peerTick)
	defer tick.Stop()
	buf := make([]byte, wire.EchoSize)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, e := range a.duePeerEchoes(a.now()) {
			a.key.Sign(wire.EncodeEcho(buf, e.key, e.sent))
			_, _ = a.peers.conn.WriteToUDPAddrPort(buf, e.peer)
		}
	}
}

type dueEcho struct {
	key  uint64
	peer netip.AddrPort
	sent time.Time
}

// duePeerEchoes decides the echoes gone unanswered for wire.PeerTimeout, drops
// the streams no request named for pairTTL, and returns the echoes due at
// now, noted as pending.
func (a *Agent) duePeerEchoes(now time.Time) []dueEcho {
	ps := a.peers
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for key, e := range ps.pending {
		if now.Sub(e.sent) > wire.PeerTimeout {
			delete(ps.pending, key)
			ps.decide(e, wire.Lost, 0)
		}
	}
	var due []dueEcho
	send := func(peer netip.AddrPort, stream bool) {
		key := ps.key()
		ps.pending[key] = peerEcho{key: key, peer: peer, sent: now, stream: stream}
		if s := ps.streams[peer]; stream && s != nil {
			if len(s.sent) >= maxPairEchoes {
				s.sent = s.sent[1:]
			}
			s.sent = append(s.sent, streamEcho{key: key, sent: now})
		}
		due = append(due, dueEcho{key, peer, now})
	}
	for peer, s := range ps.streams {
		if now.After(s.until) {
			delete(ps.streams, peer)
			continue
		}
		if now.Sub(s.next) > time.Second {
			s.next = now
		}
		for every := time.Second / time.Duration(s.rate); !s.next.After(now); s.next = s.next.Add(every) {
			send(peer, true)
		}
	}
	if !now.Before(ps.nextRandom) && len(ps.found) > 0 {
		send(ps.found[ps.rng.IntN(len(ps.found))], false)
		// About once a second, never in step with the other agents.
		ps.nextRandom = now.Add(time.Duration((0.5 + ps.rng.Float64()) * float64(peerEvery)))
	}
	return due
}

// key is a new echo's key, not pending already. Called with ps.mu held.
func (ps *peerState) key() uint64 {
	for {
		if k := ps.rng.Uint64(); k != 0 {
			if _, ok := ps.pending[k]; !ok {
				return k
			}
		}
	}
}

// decide records what became of e: its round trip, or Lost; peer is the
// hash of the node that answered, 0 for none. Called with ps.mu held.
func (ps *peerState) decide(e peerEcho, rtt time.Duration, peer uint32) {
	if peer != 0 {
		ps.hashes[e.peer] = peer
	} else {
		peer = ps.hashes[e.peer]
	}
	if e.stream {
		s := ps.streams[e.peer]
		if s == nil {
			return
		}
		if peer != 0 {
			s.peer = peer
		}
		for i := range s.sent {
			if s.sent[i].key == e.key {
				s.sent[i].rtt, s.sent[i].decided = rtt, true
				break
			}
		}
		return
	}
	ps.seq++
	ps.ring[ps.seq%maxSamples] = sample{seq: ps.seq, peer: peer, rtt: rtt, at: e.sent}
}

// readPeers takes the peers' answers until ctx ends.
func (a *Agent) readPeers(ctx context.Context) {
	ps := a.peers
	buf, oob := make([]byte, 2048), make([]byte, 128)
	for {
		n, oobn, _, from, err := ps.conn.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if ctx.Err() == nil {
				klog.FromContext(ctx).Error(err, "Reading the peers' answers failed")
			}
			return
		}
		at := time.Time{}
		if ps.stamped {
			at = wire.ReceiveTime(oob[:oobn])
		}
		if at.IsZero() {
			at = a.now()
		}
		a.peerAnswer(buf[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), at)
	}
}

// peerAnswer takes one datagram from a peer, received at: an echo's
// answer or a report on the train in flight, authenticated, from where
// the request went; anything else is dropped.
func (a *Agent) peerAnswer(b []byte, from netip.AddrPort, at time.Time) {
	t, err := wire.Header(b)
	if err != nil || t&wire.AnswerBit == 0 || !a.key.Verify(b) {
		return
	}
	ps := a.peers
	switch t &^ wire.AnswerBit {
	case wire.TypeEcho:
		key, _, stamps, err := wire.DecodeEcho(b)
		if err != nil {
			return
		}
		ps.mu.Lock()
		defer ps.mu.Unlock()
		e, ok := ps.pending[key]
		if !ok || e.peer != from {
			return
		}
		delete(ps.pending, key)
		if stamps.NodeHash == a.nodeHash {
			// Its own address: not a peer.
			ps.self[from] = true
			ps.found = deleteAddr(ps.found, from)
			return
		}
		rtt := at.Sub(e.sent)
		if res := stamps.Residence(); res < rtt {
			rtt -= res
		}
		ps.decide(e, max(rtt, 0), wire.PeerHash(stamps.NodeHash))
	case wire.TypeReport:
		id, c, _, err := wire.DecodeReport(b)
		if err != nil {
			return
		}
		ps.mu.Lock()
		ours := ps.inflight.id != 0 && ps.inflight.id == id && ps.inflight.peer == from
		ps.mu.Unlock()
		if ours {
			select {
			case ps.trainReport <- c:
			default:
			}
		}
	}
}

func deleteAddr(list []netip.AddrPort, a netip.AddrPort) []netip.AddrPort {
	out := list[:0]
	for _, x := range list {
		if x != a {
			out = append(out, x)
		}
	}
	return out
}
