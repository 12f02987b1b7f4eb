package agent

import (
	"net/netip"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// answerSamples builds the answer of size bytes to a samples request:
// the random probes' samples after cursor, oldest first, as many as fit,
// and the cursor of the last. A cursor of another epoch (the agent
// restarted since) takes every sample kept. Without peers, none.
func (a *Agent) answerSamples(out []byte, size int, id, epoch, cursor uint64, sent, now time.Time) []byte {
	ps := a.peers
	if ps == nil || !ps.started {
		return wire.EncodeSamples(out, size, id, 0, 0, sent, nil)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if epoch != ps.epoch || cursor > ps.seq {
		cursor = 0
	}
	from := max(cursor+1, ps.seq-min(ps.seq, maxSamples-1))
	var samples []wire.PeerSample
	room := wire.SamplesRoom(size)
	for seq := from; seq <= ps.seq && len(samples) < room; seq++ {
		s := ps.ring[seq%maxSamples]
		samples = append(samples, wire.PeerSample{Peer: s.peer, RTT: s.rtt, Age: now.Sub(s.at)})
		cursor = seq
	}
	return wire.EncodeSamples(out, size, id, ps.epoch, cursor, sent, samples)
}

// answerPairs builds the answer of size bytes to a pairs request naming
// peers, each to be echoed rate times a second: it starts or renews a
// stream to each peer the agent found (and starts a train where the
// request asks for a new one), stops the streams the request does not
// name, and answers with what the streams measured since the last
// request, oldest first, as much as fits; the rest waits for the next.
// A peer the agent did not find is refused. Without peers, every one is.
func (a *Agent) answerPairs(out []byte, size, rate int, id uint64, peers []wire.PairPeer, sent, now time.Time) []byte {
	ps := a.peers
	results := make([]wire.PairResult, 0, len(peers))
	room := wire.PairsRoom(size)
	if ps == nil || !ps.started {
		for i := range peers {
			if room >= wire.PairBlockSize(0, false) {
				results = append(results, wire.PairResult{Index: i, Refused: true})
				room -= wire.PairBlockSize(0, false)
			}
		}
		return wire.EncodePairs(out, size, id, rate, sent, results)
	}
	rate = min(max(rate, 1), maxPairRate)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	named := map[netip.AddrPort]bool{}
	for i, p := range peers {
		r := wire.PairResult{Index: i}
		s := ps.streams[p.Addr]
		switch {
		case !ps.known[p.Addr] || ps.self[p.Addr] || named[p.Addr]:
			r.Refused = true
		case s == nil:
			s = &stream{next: now}
			ps.streams[p.Addr] = s
		}
		if s != nil && !r.Refused {
			named[p.Addr] = true
			s.rate, s.until = rate, now.Add(pairTTL)
			a.maybeTrain(p, s, now)
			r = s.drain(r, room, now)
		}
		if need := wire.PairBlockSize(len(r.Echoes), r.Train != nil); need <= room {
			results = append(results, r)
			room -= need
		}
	}
	for peer := range ps.streams {
		if !named[peer] {
			delete(ps.streams, peer)
		}
	}
	return wire.EncodePairs(out, size, id, rate, sent, results)
}

// drain moves into r what s measured that fits in room, oldest first: a
// train's result first, then the echoes decided, in the order they were
// sent, up to the first still pending.
func (s *stream) drain(r wire.PairResult, room int, now time.Time) wire.PairResult {
	r.Peer = s.peer
	if s.result != nil && room >= wire.PairBlockSize(0, true) {
		r.Train, s.result = s.result, nil
	}
	head := wire.PairBlockSize(0, r.Train != nil)
	most := max(0, room-head) / wire.PairEchoSize
	n := 0
	for n < len(s.sent) && n < most && s.sent[n].decided {
		r.Echoes = append(r.Echoes, s.sent[n].rtt)
		n++
	}
	if n == 0 {
		return r
	}
	r.NewestAge = max(now.Sub(s.sent[n-1].sent), 0)
	s.sent = append(s.sent[:0], s.sent[n:]...)
	return r
}

// maybeTrain starts the train p asks for, if its id is new, the peer had
// none for minPairTrainGap, and no other train is on its way: one at a
// time, so that two trains never share the agent's link. Called with
// ps.mu held.
func (a *Agent) maybeTrain(p wire.PairPeer, s *stream, now time.Time) {
	ps := a.peers
	if p.TrainID == 0 || p.TrainID == s.trainID || ps.trainBusy || (!s.trainAt.IsZero() && now.Sub(s.trainAt) < minPairTrainGap) {
		return
	}
	s.trainID, s.trainAt, ps.trainBusy = p.TrainID, now, true
	ps.inflight.peer, ps.inflight.id = p.Addr, p.TrainID
	ps.train(p.Addr, p.TrainID)
}

// pairTrain sends train id to peer's train port, asks peer for its report
// until the count settles, and keeps the rate for the stream's next
// answer.
func (a *Agent) pairTrain(peer netip.AddrPort, id uint64) {
	ps := a.peers
	defer func() {
		ps.mu.Lock()
		ps.trainBusy, ps.inflight.id = false, 0
		ps.mu.Unlock()
	}()
	for len(ps.trainReport) > 0 {
		<-ps.trainReport
	}
	first, last, sent := wire.SendTrain(ps.conn, a.key, peer, id, pairTrainPackets, a.now)
	var got wire.TrainCount
	seen := false
	buf := make([]byte, wire.ReportSize)
	for range 10 {
		a.key.Sign(wire.EncodeReport(buf, id, nil, a.now()))
		if _, err := ps.conn.WriteToUDPAddrPort(buf, peer); err != nil {
			return
		}
		var c wire.TrainCount
		select {
		case c = <-ps.trainReport:
		case <-time.After(wire.PeerTimeout / 8):
			continue
		}
		if !wire.TrainHeld(c, sent) {
			return
		}
		if seen && c.Packets == got.Packets {
			break
		}
		got, seen = c, true
		if int(got.Packets) == sent {
			break
		}
		time.Sleep(wire.PeerTimeout / 20)
	}
	mbps, atLeast, ok := wire.TrainRate(got, first, last, sent)
	if !ok {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if s := ps.streams[peer]; s != nil && s.trainID == id {
		s.result = &wire.PairTrain{ID: id, Mbps: mbps, AtLeast: atLeast}
	}
}
