package agent

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// prober is where the tests' requests come from: an ephemeral port.
var prober = netip.MustParseAddrPort("10.0.0.9:40000")

// Signed requests as a prober sends them, at sent.
func helloReq(id uint64, sent time.Time) []byte {
	return testKey.Sign(wire.EncodeHello(make([]byte, wire.HelloSize), id, "", sent))
}

func echoReq(key uint64, sent time.Time) []byte {
	return testKey.Sign(wire.EncodeEcho(make([]byte, wire.EchoSize), key, sent))
}

func reportReq(id uint64, sent time.Time) []byte {
	return testKey.Sign(wire.EncodeReport(make([]byte, wire.ReportSize), id, nil, sent))
}

func trainPkt(b []byte, id uint64, i uint32, sent time.Time) []byte {
	return testKey.Sign(wire.EncodeTrain(b, id, i, sent))
}

// asRequest turns an answer into a request that carries what the answer
// does, signed: what a prober never sends.
func asRequest(b []byte) []byte {
	b[wire.TypeAt] &^= wire.AnswerBit
	return testKey.Sign(b)
}

// Where an echo answer carries its link reading's time and flags
// (wire.DecodeEcho reads them there; TestAgentAnswers checks it does).
const (
	echoLinkAtAt  = 62
	echoLinkFlags = 70
)

// TestAgentAnswers checks what an agent answers, whatever arrives: every
// answer is at most as long as its request, so an agent cannot multiply
// traffic toward a forged source address; and nothing but a well-formed,
// authenticated, fresh request from a prober's port is answered.
func TestAgentAnswers(t *testing.T) {
	a := NewAgent("worker-with-a-long-name.example", nil, testKey)
	a.port = 10271
	buf := make([]byte, 2048)
	now := time.Now()
	// with sets byte at of b to v and signs the result: a request the key
	// vouches for, refused for what it says.
	with := func(b []byte, at int, v byte) []byte {
		b = append([]byte{}, b...)
		b[at] = v
		return testKey.Sign(b)
	}
	unsigned := func(b []byte) []byte {
		b = append([]byte{}, b...)
		b[len(b)-1] ^= 1
		return b
	}
	otherKey := mustKey("another install's key, 32 bytes!")
	keyed := func(k *wire.Key, b []byte) []byte { return k.Sign(append([]byte{}, b...)) }
	for i, tc := range []struct {
		name     string
		in       func(n uint64) []byte
		from     netip.AddrPort
		answered bool
	}{
		{"hello", func(n uint64) []byte { return helloReq(n, now) }, prober, true},
		{"hello cut short", func(n uint64) []byte { return helloReq(n, now)[:wire.HelloSize-1] }, prober, false},
		{"hello with id 0", func(uint64) []byte { return helloReq(0, now) }, prober, false},
		{"hello request carrying a name", func(n uint64) []byte {
			return asRequest(wire.EncodeHello(make([]byte, wire.HelloSize), n, "x", now))
		}, prober, false},
		{"hello unsigned", func(n uint64) []byte { return unsigned(helloReq(n, now)) }, prober, false},
		{"echo", func(n uint64) []byte { return echoReq(n, now) }, prober, true},
		{"echo cut short", func(n uint64) []byte { return echoReq(n, now)[:wire.EchoSize-1] }, prober, false},
		{"echo padded", func(n uint64) []byte { return append(echoReq(n, now), make([]byte, 500)...) }, prober, true},
		{"echo request carrying a time", func(n uint64) []byte {
			return asRequest(wire.EncodeEchoAnswer(make([]byte, wire.EchoSize), n, now, now, 0, wire.LinkReading{}))
		}, prober, false},
		{"echo request carrying link counters", func(n uint64) []byte {
			return asRequest(wire.EncodeEchoAnswer(make([]byte, wire.EchoSize), n, now, time.Time{}, 0, wire.LinkReading{TxBytes: 1, At: now, Flags: wire.LinkValid}))
		}, prober, false},
		{"echo request carrying a reading's time", func(n uint64) []byte { return with(echoReq(n, now), echoLinkAtAt, 1) }, prober, false},
		{"echo request saying it has counters", func(n uint64) []byte { return with(echoReq(n, now), echoLinkFlags, wire.LinkValid) }, prober, false},
		{"echo unsigned", func(n uint64) []byte { return unsigned(echoReq(n, now)) }, prober, false},
		{"echo signed with another key", func(n uint64) []byte { return keyed(otherKey, echoReq(n, now)) }, prober, false},
		{"echo without a time", func(n uint64) []byte {
			return testKey.Sign(wire.EncodeEcho(make([]byte, wire.EchoSize), n, time.Time{}))
		}, prober, false},
		{"echo sent a minute ago", func(n uint64) []byte { return echoReq(n, now.Add(-time.Minute)) }, prober, false},
		{"echo sent a minute ahead", func(n uint64) []byte { return echoReq(n, now.Add(time.Minute)) }, prober, false},
		{"train packet", func(n uint64) []byte { return trainPkt(make([]byte, wire.TrainPacketSize), n, 0, now) }, prober, false},
		{"report", func(n uint64) []byte { return reportReq(n, now) }, prober, true},
		{"report cut short", func(n uint64) []byte { return reportReq(n, now)[:wire.ReportSize-1] }, prober, false},
		{"report request carrying counts", func(n uint64) []byte {
			return asRequest(wire.EncodeReport(make([]byte, wire.ReportSize), n, &wire.TrainCount{Packets: 1}, now))
		}, prober, false},
		{"report unsigned", func(n uint64) []byte { return unsigned(reportReq(n, now)) }, prober, false},
		{"not a probe", func(uint64) []byte { return bytes.Repeat([]byte{'x'}, 100) }, prober, false},
		{"empty", func(uint64) []byte { return nil }, prober, false},
		{"version 2", func(n uint64) []byte { return with(echoReq(n, now), 5, 2) }, prober, false},
		{"from the agents' port", func(n uint64) []byte { return echoReq(n, now) }, netip.MustParseAddrPort("10.0.0.9:10271"), false},
		{"from a privileged port", func(n uint64) []byte { return echoReq(n, now) }, netip.MustParseAddrPort("10.0.0.9:53"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in(uint64(100 + i))
			out := a.answer(in, buf, tc.from, now)
			if (out != nil) != tc.answered {
				t.Fatalf("answered %v, want %v", out != nil, tc.answered)
			}
			if len(out) > len(in) {
				t.Errorf("answer of %d bytes to %d", len(out), len(in))
			}
			if tc.answered {
				if again := a.answer(in, buf, tc.from, now.Add(time.Millisecond)); again != nil {
					t.Error("the same request, sent again, was answered again: a replay must cost nothing")
				}
			}
		})
	}
	// The offsets the cases above set are where the wire keeps the link
	// reading's time and flags.
	if _, _, s, _ := wire.DecodeEcho(with(with(echoReq(1, now), echoLinkAtAt, 1), echoLinkFlags, wire.LinkValid)); s.Link.At.IsZero() || !s.Link.Valid() {
		t.Errorf("bytes %d and %d decode as %+v, want the link reading's time and flags", echoLinkAtAt, echoLinkFlags, s.Link)
	}
	id, node, _, err := wire.DecodeHello(a.answer(helloReq(7, now), buf, prober, now))
	if err != nil || id != 7 || node != "worker-with-a-long-name.example" {
		t.Errorf("hello answer: id %d node %q err %v, want 7 and the agent's node", id, node, err)
	}
	received := now.Add(5)
	key, _, stamps, err := wire.DecodeEcho(a.answer(echoReq(9, now), buf, prober, received))
	if err != nil || key != 9 || !stamps.Received.Equal(received) || stamps.NodeHash != wire.NodeHash("worker-with-a-long-name.example") {
		t.Errorf("echo answer: key %d, received %s, node hash %x, err %v; want 9, %s and the node's hash", key, stamps.Received, stamps.NodeHash, err, received)
	}
	if unauth, stale, _ := a.Refused(); unauth < 4 || stale < 3 {
		t.Errorf("refusals counted: %d unauthenticated, %d stale; want at least 4 and 3", unauth, stale)
	}
}

// TestAgentNeverAnswersAnAnswer feeds each of an agent's answers back to
// an agent: none is answered, so two agents can never answer each other.
func TestAgentNeverAnswersAnAnswer(t *testing.T) {
	a := NewAgent("n", nil, testKey)
	buf, again := make([]byte, 2048), make([]byte, 2048)
	now := time.Now()
	a.answer(trainPkt(make([]byte, wire.TrainPacketSize), 3, 0, now), buf, prober, now)
	for _, req := range [][]byte{helloReq(7, now), echoReq(9, now), reportReq(3, now), reportReq(4, now)} {
		ans := a.answer(req, buf, prober, now)
		if ans == nil {
			t.Fatalf("request %x not answered", req[:6])
		}
		testKey.Sign(ans)
		if back := a.answer(ans, again, prober, now); back != nil {
			t.Errorf("the answer %x was answered with %x", ans[:6], back[:6])
		}
	}
}

// TestAgentCountsTrains checks a report says what arrived of its train
// only, to the sender of the train only, and counts each packet once.
func TestAgentCountsTrains(t *testing.T) {
	a := NewAgent("n", nil, testKey)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	buf := make([]byte, 2048)
	pkt := make([]byte, wire.TrainPacketSize)
	for i := range 5 {
		a.answer(trainPkt(pkt, 1, uint32(i), t0), buf, prober, at(i))
		a.answer(trainPkt(pkt, 2, uint32(i), t0), buf, prober, at(i))
	}
	a.answer(trainPkt(pkt, 2, 5, t0), buf, prober, at(9))
	// The same packet again, sent by anyone: not counted twice.
	a.answer(trainPkt(pkt, 2, 5, t0), buf, prober, at(10))
	asked := 0
	report := func(from netip.AddrPort, id uint64) wire.TrainCount {
		t.Helper()
		asked++
		got, c, _, err := wire.DecodeReport(a.answer(reportReq(id, at(20+asked)), buf, from, at(20+asked)))
		if err != nil || got != id {
			t.Fatalf("report of train %d: id %d, err %v", id, got, err)
		}
		return c
	}
	for _, tc := range []struct {
		id      uint64
		packets uint32
	}{{1, 5}, {2, 6}, {3, 0}} {
		c := report(prober, tc.id)
		if c.Packets != tc.packets || c.Bytes != uint64(tc.packets)*wire.TrainPacketSize {
			t.Errorf("report of train %d: %d packets, %d bytes; want %d packets", tc.id, c.Packets, c.Bytes, tc.packets)
		}
		if tc.id == 2 && (!c.First.Equal(at(0)) || !c.Last.Equal(at(9))) {
			t.Errorf("train 2 from %s to %s, want its first and last arrivals, %s and %s", c.First, c.Last, at(0), at(9))
		}
	}
	other := netip.MustParseAddrPort("10.0.0.10:40000")
	if c := report(other, 2); c.Packets != 0 {
		t.Errorf("another address asked for train 2's report and got %d packets, want none", c.Packets)
	}
}

// TestAgentTrainTableIsBounded checks who can evict a train: a sender
// without the key never reaches the table, however many trains it sends
// from however many addresses; a prober's new trains evict only its own
// oldest; and the table holds a fixed number of probers, whatever
// arrives.
func TestAgentTrainTableIsBounded(t *testing.T) {
	a := NewAgent("n", nil, testKey)
	buf := make([]byte, 2048)
	pkt := make([]byte, wire.TrainPacketSize)
	now := time.Unix(1000, 0)
	a.answer(trainPkt(pkt, 1, 0, now), buf, prober, now)
	for id := range uint64(1000) {
		other := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, byte(id >> 8), byte(id)}), 40000)
		a.answer(wire.EncodeTrain(pkt, 100+id, 0, now), buf, other, now.Add(time.Millisecond))
	}
	if c := a.trains.get(prober, 1); c.Packets != 1 {
		t.Errorf("after 1,000 unsigned trains from 1,000 addresses, the prober's train holds %d packets, want 1", c.Packets)
	}
	if n := len(a.trains.sources); n != 1 {
		t.Errorf("unsigned trains reached the table: %d senders held, want the prober alone", n)
	}
	for id := range uint64(maxTrainsPerSource) {
		a.answer(trainPkt(pkt, 10+id, 0, now), buf, prober, now.Add(2*time.Millisecond))
	}
	if c := a.trains.get(prober, 1); c.Packets != 0 {
		t.Errorf("after %d newer trains of its own sender, train 1 is still held", maxTrainsPerSource)
	}
	for i := range 3 * maxTrainSources {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i), 1}), 40000)
		a.answer(trainPkt(pkt, 5, 0, now.Add(time.Duration(i))), buf, from, now.Add(time.Duration(3+i)*time.Millisecond))
	}
	if n := len(a.trains.sources); n != maxTrainSources {
		t.Errorf("%d senders' trains held, want the bound %d", n, maxTrainSources)
	}
}

// TestAgentKernelTimestamps holds a listening agent's train reader while
// a train arrives, 2 ms between packets, and for 200 ms after: with the
// kernel's receive times the report spans the train's 18 ms; with the
// agent's own clock its last packets would be stamped when the reader was
// let go, 200 ms later.
func TestAgentKernelTimestamps(t *testing.T) {
	if !wire.KernelTimestamps {
		t.Skip("no kernel receive timestamps on this platform: the agent's clock is used")
	}
	a, err := Listen("127.0.0.1:0", "n", testKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Serve(ctx)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	probeAddr := a.Addr().(*net.UDPAddr)
	trainAddr := &net.UDPAddr{IP: probeAddr.IP, Port: int(wire.TrainPort(uint16(probeAddr.Port)))}
	sendTrain := func(id uint64, gap time.Duration) {
		pkt := make([]byte, wire.TrainPacketSize)
		for i := range 10 {
			if _, err := conn.WriteTo(trainPkt(pkt, id, uint32(i), time.Now()), trainAddr); err != nil {
				t.Fatal(err)
			}
			time.Sleep(gap)
		}
	}
	report := func(id uint64) wire.TrainCount {
		t.Helper()
		c := askReport(t, conn, probeAddr, id)
		for c.Packets < 10 {
			c = askReport(t, conn, probeAddr, id)
		}
		return c
	}
	// A first train, read as it comes: the agent is up, and the kernel
	// stamps what its sockets receive (it starts doing so shortly after
	// it is asked to).
	sendTrain(1, 0)
	report(1)

	// The reader blocks on the first packet until the test lets go; the
	// others wait in the socket with the kernel's stamps.
	a.mu.Lock()
	sendTrain(7, 2*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	a.mu.Unlock()
	c := report(7)
	if span := c.Last.Sub(c.First); span < 18*time.Millisecond || span >= 100*time.Millisecond {
		t.Errorf("train arrivals from %s to %s (span %s): want the kernel's receive times, 18 ms or more apart", c.First, c.Last, span)
	}
}

// testKey is the probe key every test's prober and agents share.
var testKey = mustKey("kns-3 tests' probe key, 32 bytes")

func mustKey(secret string) *wire.Key {
	k, err := wire.NewKey([]byte(secret))
	if err != nil {
		panic(err)
	}
	return k
}

// TestAgentLimitsTrainsOfEachSource sends an agent far more signed train
// packets from one source, at one instant, than a prober's trains ever
// hold: it counts a bounded number, so no key holder's flood costs it
// more than its train table's few entries.
func TestAgentLimitsTrainsOfEachSource(t *testing.T) {
	a := NewAgent("n", nil, testKey)
	buf := make([]byte, 2048)
	pkt := make([]byte, wire.TrainPacketSize)
	now := time.Unix(1000, 0)
	const sent = 3 * trainSourceBurst
	for i := range uint32(sent) {
		a.answer(trainPkt(pkt, 7, i, now), buf, prober, now)
	}
	c := a.trains.get(prober, 7)
	if c.Packets == 0 || c.Packets > trainSourceBurst {
		t.Errorf("%d signed train packets from one source at one instant: %d counted, want some and at most %d", sent, c.Packets, trainSourceBurst)
	}
	if _, _, limited := a.Refused(); limited < sent-trainSourceBurst {
		t.Errorf("%d refused over the source's rate, want at least %d", limited, sent-trainSourceBurst)
	}
}
