package probe

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// prober is where the tests' requests come from: an ephemeral port.
var prober = netip.MustParseAddrPort("10.0.0.9:40000")

// TestAgentAnswers checks what an agent answers, whatever arrives: every
// answer is at most as long as its request, so an agent cannot multiply
// traffic toward a forged source address; and nothing but a well-formed
// request from a prober's port is answered.
func TestAgentAnswers(t *testing.T) {
	a := NewAgent("worker-with-a-long-name.example", nil)
	a.port = 10271
	buf := make([]byte, 2048)
	hello := encodeHello(make([]byte, HelloSize), 7, "")
	echo := encodeEcho(make([]byte, EchoSize), 9)
	report := encodeReport(make([]byte, ReportSize), 3, nil)
	train := encodeTrain(make([]byte, TrainPacketSize), 3, 0)
	with := func(b []byte, at int, v byte) []byte {
		b = append([]byte{}, b...)
		b[at] = v
		return b
	}
	for _, tc := range []struct {
		name     string
		in       []byte
		from     netip.AddrPort
		answered bool
	}{
		{"hello", hello, prober, true},
		{"hello cut short", hello[:HelloSize-1], prober, false},
		{"hello with id 0", encodeHello(make([]byte, HelloSize), 0, ""), prober, false},
		{"hello request carrying a name", with(with(hello, 15, 1), 16, 'x'), prober, false},
		{"echo", echo, prober, true},
		{"echo cut short", echo[:EchoSize-1], prober, false},
		{"echo padded", append(append([]byte{}, echo...), make([]byte, 500)...), prober, true},
		{"echo request carrying a time", with(echo, echoReceivedAt+7, 1), prober, false},
		{"echo request carrying link counters", with(echo, echoTxBytesAt+7, 1), prober, false},
		{"echo request carrying a reading's time", with(echo, echoLinkAtAt, 1), prober, false},
		{"echo request saying it has counters", with(echo, echoLinkFlags, linkValid), prober, false},
		{"train packet", train, prober, false},
		{"report", report, prober, true},
		{"report cut short", report[:ReportSize-1], prober, false},
		{"report request carrying counts", with(report, 17, 1), prober, false},
		{"not a probe", bytes.Repeat([]byte{'x'}, 100), prober, false},
		{"empty", nil, prober, false},
		{"version 1", with(echo, 5, 1), prober, false},
		{"from the agents' port", echo, netip.MustParseAddrPort("10.0.0.9:10271"), false},
		{"from a privileged port", echo, netip.MustParseAddrPort("10.0.0.9:53"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := a.answer(tc.in, buf, tc.from, time.Now())
			if (out != nil) != tc.answered {
				t.Fatalf("answered %v, want %v", out != nil, tc.answered)
			}
			if len(out) > len(tc.in) {
				t.Errorf("answer of %d bytes to %d", len(out), len(tc.in))
			}
		})
	}
	id, node, err := decodeHello(a.answer(hello, buf, prober, time.Now()))
	if err != nil || id != 7 || node != "worker-with-a-long-name.example" {
		t.Errorf("hello answer: id %d node %q err %v, want 7 and the agent's node", id, node, err)
	}
	received := time.Unix(1000, 5)
	key, stamps, err := decodeEcho(a.answer(echo, buf, prober, received))
	if err != nil || key != 9 || !stamps.Received.Equal(received) || stamps.NodeHash != nodeHash("worker-with-a-long-name.example") {
		t.Errorf("echo answer: key %d, received %s, node hash %x, err %v; want 9, %s and the node's hash", key, stamps.Received, stamps.NodeHash, err, received)
	}
}

// TestAgentNeverAnswersAnAnswer feeds each of an agent's answers back to
// an agent: none is answered, so two agents can never answer each other.
func TestAgentNeverAnswersAnAnswer(t *testing.T) {
	a := NewAgent("n", nil)
	buf, again := make([]byte, 2048), make([]byte, 2048)
	a.answer(encodeTrain(make([]byte, TrainPacketSize), 3, 0), buf, prober, time.Now())
	for _, req := range [][]byte{
		encodeHello(make([]byte, HelloSize), 7, ""),
		encodeEcho(make([]byte, EchoSize), 9),
		encodeReport(make([]byte, ReportSize), 3, nil),
		encodeReport(make([]byte, ReportSize), 4, nil),
	} {
		ans := a.answer(req, buf, prober, time.Now())
		if ans == nil {
			t.Fatalf("request %x not answered", req[:6])
		}
		if back := a.answer(ans, again, prober, time.Now()); back != nil {
			t.Errorf("the answer %x was answered with %x", ans[:6], back[:6])
		}
	}
}

// TestAgentCountsTrains checks a report says what arrived of its train
// only, to the sender of the train only.
func TestAgentCountsTrains(t *testing.T) {
	a := NewAgent("n", nil)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	buf := make([]byte, 2048)
	pkt := make([]byte, TrainPacketSize)
	for i := range 5 {
		a.answer(encodeTrain(pkt, 1, uint32(i)), buf, prober, at(i))
		a.answer(encodeTrain(pkt, 2, uint32(i)), buf, prober, at(i))
	}
	a.answer(encodeTrain(pkt, 2, 5), buf, prober, at(9))
	report := func(from netip.AddrPort, id uint64) trainCount {
		t.Helper()
		got, c, err := decodeReport(a.answer(encodeReport(make([]byte, ReportSize), id, nil), buf, from, time.Now()))
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
		if c.Packets != tc.packets || c.Bytes != uint64(tc.packets)*TrainPacketSize {
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

// TestAgentTrainTableIsBounded checks who can evict a train: a sender's
// new trains evict only its own oldest, and a crowd of senders evicts the
// one heard from longest ago, within fixed bounds.
func TestAgentTrainTableIsBounded(t *testing.T) {
	a := NewAgent("n", nil)
	buf := make([]byte, 2048)
	pkt := make([]byte, TrainPacketSize)
	now := time.Unix(1000, 0)
	a.answer(encodeTrain(pkt, 1, 0), buf, prober, now)
	other := netip.MustParseAddrPort("10.0.0.10:40000")
	for id := range uint64(1000) {
		a.answer(encodeTrain(pkt, 100+id, 0), buf, other, now.Add(time.Millisecond))
	}
	if c := a.trains.get(prober, 1); c.Packets != 1 {
		t.Errorf("after another sender's 1,000 trains, the prober's train holds %d packets, want 1", c.Packets)
	}
	for id := range uint64(maxTrainsPerSource) {
		a.answer(encodeTrain(pkt, 10+id, 0), buf, prober, now.Add(2*time.Millisecond))
	}
	if c := a.trains.get(prober, 1); c.Packets != 0 {
		t.Errorf("after %d newer trains of its own sender, train 1 is still held", maxTrainsPerSource)
	}
	for i := range 3 * maxTrainSources {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i), 1}), 40000)
		a.answer(encodeTrain(pkt, 5, 0), buf, from, now.Add(time.Duration(3+i)*time.Millisecond))
	}
	if n := len(a.trains.sources); n != maxTrainSources {
		t.Errorf("%d senders' trains held, want the bound %d", n, maxTrainSources)
	}
}

func TestTrainRate(t *testing.T) {
	at := time.Unix(0, 0)
	for _, tc := range []struct {
		name string
		c    trainCount
		want float64
		ok   bool
	}{
		// 10 packets of 1250 bytes; the 9 after the first (90,000 bits)
		// took 9 ms: 10 Mbit/s.
		{"10 Mbit/s", trainCount{Packets: 10, Bytes: 12500, First: at, Last: at.Add(9 * time.Millisecond)}, 10, true},
		{"too few", trainCount{Packets: minTrainPackets - 1, Bytes: 1000, First: at, Last: at.Add(time.Second)}, 0, false},
		{"no span", trainCount{Packets: 50, Bytes: 50000, First: at, Last: at}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.c.Mbps()
			if ok != tc.ok || (ok && (got < tc.want*0.999 || got > tc.want*1.001)) {
				t.Errorf("Mbps() = %g, %v; want %g, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestAgentKernelTimestamps holds a listening agent's train reader while
// a train arrives, 2 ms between packets, and for 200 ms after: with the
// kernel's receive times the report spans the train's 18 ms; with the
// agent's own clock its last packets would be stamped when the reader was
// let go, 200 ms later.
func TestAgentKernelTimestamps(t *testing.T) {
	if !kernelTimestamps {
		t.Skip("no kernel receive timestamps on this platform: the agent's clock is used")
	}
	a, err := Listen("127.0.0.1:0", "n")
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
	trainAddr := &net.UDPAddr{IP: probeAddr.IP, Port: int(TrainPort(uint16(probeAddr.Port)))}
	sendTrain := func(id uint64, gap time.Duration) {
		pkt := make([]byte, TrainPacketSize)
		for i := range 10 {
			if _, err := conn.WriteTo(encodeTrain(pkt, id, uint32(i)), trainAddr); err != nil {
				t.Fatal(err)
			}
			time.Sleep(gap)
		}
	}
	report := func(id uint64) trainCount {
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
