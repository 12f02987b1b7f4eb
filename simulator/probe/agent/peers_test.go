package agent

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// peerAgent is an agent with peers, its state readied by hand and its
// trains recorded instead of sent, on a clock the test sets.
type peerAgent struct {
	*Agent
	now    time.Time
	mu     sync.Mutex
	trains []uint64
}

func newPeerAgent(t *testing.T, node string, peers ...string) *peerAgent {
	t.Helper()
	pa := &peerAgent{now: time.Unix(7000, 0)}
	pa.Agent = NewAgent(node, nil, testKey, WithClock(func() time.Time { return pa.now }),
		WithPeers(func(context.Context) ([]string, error) { return peers, nil }))
	pa.peers.init(func(_ netip.AddrPort, id uint64) {
		pa.mu.Lock()
		defer pa.mu.Unlock()
		pa.trains = append(pa.trains, id)
	})
	pa.lookupPeersOnce(context.Background())
	return pa
}

func samplesReq(size int, id, epoch, cursor uint64, sent time.Time) []byte {
	return testKey.Sign(wire.EncodeSamplesRequest(make([]byte, wire.MaxDatagram), size, id, epoch, cursor, sent))
}

func pairsReq(size, rate int, id uint64, peers []wire.PairPeer, sent time.Time) []byte {
	return testKey.Sign(wire.EncodePairsRequest(make([]byte, wire.MaxDatagram), size, id, rate, peers, sent))
}

// TestAgentAnswersSamples checks what an agent answers for its random
// probes' samples: those after the cursor, oldest first, as many as the
// request has room for and never more bytes; all it keeps for a cursor of
// another epoch; and nothing for a request that is not a prober's.
func TestAgentAnswersSamples(t *testing.T) {
	a := newPeerAgent(t, "n1", "10.0.0.2:10271")
	a.port = 10271
	ps := a.peers
	peer := netip.MustParseAddrPort("10.0.0.2:10271")
	for i := range 300 {
		ps.decide(peerEcho{peer: peer, sent: a.now.Add(time.Duration(i-300) * time.Second)}, time.Duration(i+1)*time.Microsecond, 0xbeef)
	}
	out := make([]byte, 2048)
	ask := func(size int, id, epoch, cursor uint64) (uint64, uint64, []wire.PeerSample) {
		t.Helper()
		req := samplesReq(size, id, epoch, cursor, a.now)
		ans := a.answer(req, out, prober, a.now)
		if ans == nil || len(ans) != len(req) {
			t.Fatalf("answer of %d bytes to a request of %d", len(ans), len(req))
		}
		_, e, c, _, samples, err := wire.DecodeSamples(ans)
		if err != nil {
			t.Fatal(err)
		}
		return e, c, samples
	}
	// Another epoch: the oldest kept, the 45th of 300 (256 kept), as many
	// as fit.
	epoch, cursor, got := ask(wire.SamplesMinSize+10*wire.SampleRecordSize, 1, 0, 0)
	if epoch != ps.epoch || len(got) != 10 || cursor != 300-maxSamples+10 || got[0].RTT != (300-maxSamples+1)*time.Microsecond || got[0].Peer != 0xbeef {
		t.Fatalf("first answer: epoch %d cursor %d %d samples from %+v", epoch, cursor, len(got), got[0])
	}
	// 256 s old: the wire's byte of seconds holds at most 255.
	if got[0].Age != 255*time.Second {
		t.Errorf("oldest sample %s old, want 255 s", got[0].Age)
	}
	// The same epoch: after the cursor, as many as a datagram holds, then
	// the rest.
	full := wire.SamplesRoom(wire.MaxDatagram)
	_, cursor2, got := ask(wire.MaxDatagram, 2, epoch, cursor)
	if len(got) != full || cursor2 != cursor+uint64(full) || got[0].RTT != time.Duration(cursor+1)*time.Microsecond {
		t.Errorf("second answer: cursor %d, %d samples from %+v; want %d after %d", cursor2, len(got), got[0], full, cursor)
	}
	_, cursor3, got := ask(wire.MaxDatagram, 3, epoch, cursor2)
	if len(got) != 300-int(cursor2) || cursor3 != 300 {
		t.Errorf("third answer: cursor %d, %d samples; want the rest, to 300", cursor3, len(got))
	}
	if _, c, got := ask(wire.MaxDatagram, 4, epoch, cursor3); len(got) != 0 || c != cursor3 {
		t.Errorf("nothing new: %d samples, cursor %d", len(got), c)
	}
	// What no prober sends.
	carrying := testKey.Sign(wire.EncodeSamples(make([]byte, wire.MaxDatagram), 100, 9, 0, 0, a.now, []wire.PeerSample{{Peer: 1}}))
	carrying[wire.TypeAt] &^= wire.AnswerBit
	testKey.Sign(carrying)
	for name, req := range map[string][]byte{
		"a request carrying samples": carrying,
		"unsigned":                   samplesReq(100, 10, 0, 0, a.now)[:99],
		"stale":                      samplesReq(100, 11, 0, 0, a.now.Add(-time.Minute)),
		"id 0":                       samplesReq(100, 0, 0, 0, a.now),
	} {
		if ans := a.answer(req, out, prober, a.now); ans != nil {
			t.Errorf("%s: answered", name)
		}
	}
	if ans := a.answer(samplesReq(100, 12, 0, 0, a.now), out, netip.MustParseAddrPort("10.0.0.9:10271"), a.now); ans != nil {
		t.Error("a request from the agents' port: answered")
	}
}

// TestAgentAnswersPairs drives an agent's pairs by hand: it measures only
// the peers its lookup found, stops a stream no request names, reports
// what its streams decided as it fits (the rest next time), and sends a
// train once per id, no sooner than minPairTrainGap after the last.
func TestAgentAnswersPairs(t *testing.T) {
	b, c := netip.MustParseAddrPort("10.0.0.2:10271"), netip.MustParseAddrPort("10.0.0.3:10271")
	stranger := netip.MustParseAddrPort("192.0.2.1:10271")
	a := newPeerAgent(t, "n1", b.String(), c.String())
	out := make([]byte, 2048)
	ask := func(id uint64, size int, peers ...wire.PairPeer) []wire.PairResult {
		t.Helper()
		req := pairsReq(size, 50, id, peers, a.now)
		ans := a.answer(req, out, prober, a.now)
		if ans == nil || len(ans) != len(req) {
			t.Fatalf("answer of %d bytes to a request of %d", len(ans), len(req))
		}
		_, _, results, err := wire.DecodePairs(ans)
		if err != nil {
			t.Fatal(err)
		}
		return results
	}
	res := ask(1, wire.MaxDatagram, wire.PairPeer{Addr: b, TrainID: 77}, wire.PairPeer{Addr: stranger}, wire.PairPeer{Addr: c})
	if len(res) != 3 || res[0].Refused || !res[1].Refused || res[2].Refused {
		t.Fatalf("results %+v: want b and c measured, the stranger refused", res)
	}
	a.peers.mu.Lock()
	streams := len(a.peers.streams)
	a.peers.mu.Unlock()
	if streams != 2 {
		t.Errorf("%d streams, want b's and c's", streams)
	}
	// Half a second's echoes due to each, then decided, within the
	// streams' life: b answers all, c none.
	a.now = a.now.Add(500 * time.Millisecond)
	due := a.duePeerEchoes(a.now)
	if len(due) < 50 {
		t.Fatalf("%d echoes due after half a second at 50 a second to two peers", len(due))
	}
	for _, e := range due {
		if e.peer == b {
			a.peers.mu.Lock()
			pe := a.peers.pending[e.key]
			delete(a.peers.pending, e.key)
			a.peers.decide(pe, 300*time.Microsecond, 0x1234)
			a.peers.mu.Unlock()
		}
	}
	a.now = a.now.Add(wire.PeerTimeout + time.Millisecond)
	a.duePeerEchoes(a.now)
	// Room for b's block and twenty of its echoes only. The echoes due
	// since are pending, and wait for the next.
	size := wire.PairsRequestSize(2)
	if room := wire.PairBlockSize(20, false); size < wire.PairsMinSize+room {
		size = wire.PairsMinSize + room
	}
	res = ask(2, size, wire.PairPeer{Addr: b, TrainID: 77}, wire.PairPeer{Addr: c})
	if len(res) != 1 || len(res[0].Echoes) != 20 || res[0].Peer != 0x1234 || res[0].Echoes[0] != 300*time.Microsecond {
		t.Fatalf("results %+v: want b's first twenty echoes alone, c's waiting", res)
	}
	res = ask(3, wire.MaxDatagram, wire.PairPeer{Addr: b, TrainID: 77}, wire.PairPeer{Addr: c})
	if len(res) != 2 || len(res[0].Echoes) == 0 || len(res[1].Echoes) < 25 || slices.ContainsFunc(res[1].Echoes, func(d time.Duration) bool { return d != wire.Lost }) {
		t.Fatalf("results %+v: want b's other echoes and c's, all lost", res)
	}
	// One train per id; a new id not within minPairTrainGap.
	a.now = a.now.Add(time.Second)
	ask(4, wire.MaxDatagram, wire.PairPeer{Addr: b, TrainID: 78})
	a.peers.mu.Lock()
	a.peers.trainBusy = false
	a.peers.mu.Unlock()
	a.now = a.now.Add(minPairTrainGap)
	ask(5, wire.MaxDatagram, wire.PairPeer{Addr: b, TrainID: 78})
	a.mu.Lock()
	trains := slices.Clone(a.trains)
	a.mu.Unlock()
	if !slices.Equal(trains, []uint64{77, 78}) {
		t.Errorf("trains sent %v, want 77 once, then 78 once %s later", trains, minPairTrainGap)
	}
	// c no longer named: its stream stopped.
	a.peers.mu.Lock()
	_, cStream := a.peers.streams[c]
	a.peers.mu.Unlock()
	if cStream {
		t.Error("a stream no request names any more goes on")
	}
}

// TestAgentsMeasureEachOther runs three agents on loopback that find each
// other, each asked by a prober's socket for its samples until every one
// has sampled both others: each sample names the peer by its node, and
// no agent samples itself.
func TestAgentsMeasureEachOther(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var addrs []string
	var conns []*net.UDPConn
	for range 3 {
		udp, _ := listenPair(t)
		conns = append(conns, udp)
		addrs = append(addrs, udp.LocalAddr().String())
	}
	names := []string{"n0", "n1", "n2"}
	find := func(context.Context) ([]string, error) { return addrs, nil }
	for i, conn := range conns {
		go NewAgent(names[i], conn, testKey, WithPeers(find)).Serve(ctx)
	}
	byHash := map[uint32]string{}
	for _, n := range names {
		byHash[wire.PeerHash(wire.NodeHash(n))] = n
	}
	prober, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer prober.Close()
	sampled := map[string]map[string]bool{}
	buf := make([]byte, 2048)
	deadline := time.Now().Add(20 * time.Second)
	for done := false; !done; {
		if time.Now().After(deadline) {
			t.Fatalf("not every agent sampled both others in 20 s: %v", sampled)
		}
		done = true
		for i, addr := range addrs {
			to, _ := net.ResolveUDPAddr("udp", addr)
			if _, err := prober.WriteTo(samplesReq(wire.MaxDatagram, wire.NewID(), 0, 0, time.Now()), to); err != nil {
				t.Fatal(err)
			}
			_ = prober.SetReadDeadline(time.Now().Add(time.Second))
			n, _, err := prober.ReadFrom(buf)
			if err != nil {
				done = false
				continue
			}
			_, _, _, _, samples, err := wire.DecodeSamples(buf[:n])
			if err != nil || !testKey.Verify(buf[:n]) {
				t.Fatalf("answer from %s: %v", names[i], err)
			}
			for _, s := range samples {
				peer := byHash[s.Peer]
				if peer == names[i] {
					t.Fatalf("%s sampled itself", names[i])
				}
				if s.RTT == wire.Lost || peer == "" {
					continue
				}
				if sampled[names[i]] == nil {
					sampled[names[i]] = map[string]bool{}
				}
				sampled[names[i]][peer] = true
			}
			done = done && len(sampled[names[i]]) == 2
		}
		if !done {
			time.Sleep(500 * time.Millisecond)
		}
	}
}
