package agent

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// countingConn counts the datagrams an agent reads.
type countingConn struct {
	net.PacketConn
	reads atomic.Int64
}

func (c *countingConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, from, err := c.PacketConn.ReadFrom(b)
	if err == nil {
		c.reads.Add(1)
	}
	return n, from, err
}

// listenPair opens a request socket on loopback and the train socket on
// the port after it, as Listen does, without kernel timestamps.
func listenPair(t testing.TB) (conn, trains *net.UDPConn) {
	t.Helper()
	for range 100 {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		port := c.LocalAddr().(*net.UDPAddr).Port
		tc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(wire.TrainPort(uint16(port)))})
		if err == nil {
			t.Cleanup(func() { c.Close(); tc.Close() })
			return c, tc
		}
		c.Close()
	}
	t.Fatal("no two free ports in a row on loopback")
	return nil, nil
}

// serveAgent serves an agent for node on loopback ports until ctx ends,
// its request connection wrapped by wrap when not nil, and returns its
// address.
func serveAgent(t *testing.T, ctx context.Context, node string, wrap func(net.PacketConn) net.PacketConn) string {
	t.Helper()
	udp, trains := listenPair(t)
	var conn net.PacketConn = udp
	if wrap != nil {
		conn = wrap(conn)
	}
	go NewAgent(node, conn, testKey, WithTrainConn(trains)).Serve(ctx)
	return udp.LocalAddr().String()
}

// TestForgedDatagramBetweenAgents sends agent A one datagram of each kind
// from agent B's own address and port, as a pod forging B's source would,
// and counts what the two agents read: A's answer reaches B, which never
// answers an answer, so A reads the forged datagram and B reads A's
// answer, and nothing more. Agents answering each other's answers would
// read thousands.
//
// Nothing waits for time to pass: after the forged datagram, a hello to
// A, then one to B, then one to A again are each answered before the next
// is sent. A datagram on loopback reaches its socket before the call that
// sent it returns, and an agent reads its socket in order, so each answer
// comes after the agent read everything sent to it before: by the last
// one, A has read whatever B sent it in answer.
func TestForgedDatagramBetweenAgents(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"echo", echoReq(42, time.Now())},
		{"hello", helloReq(42, time.Now())},
		{"report", reportReq(42, time.Now())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var a *countingConn
			aAddr := serveAgent(t, ctx, "a", func(c net.PacketConn) net.PacketConn { a = &countingConn{PacketConn: c}; return a })
			bConn, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			b := &countingConn{PacketConn: bConn}
			go NewAgent("b", b, testKey).Serve(ctx)
			to, err := net.ResolveUDPAddr("udp", aAddr)
			if err != nil {
				t.Fatal(err)
			}
			// B's socket sends it: the source is B's address and port.
			if _, err := bConn.WriteTo(tc.msg, to); err != nil {
				t.Fatal(err)
			}
			for _, addr := range []string{aAddr, bConn.LocalAddr().String(), aAddr} {
				if _, err := Check(addr, 5*time.Second, testKey); err != nil {
					t.Fatal(err)
				}
			}
			if ra, rb := a.reads.Load(), b.reads.Load(); ra != 3 || rb != 2 {
				t.Errorf("one forged %s: agent A read %d datagrams, agent B %d; want 3 and 2 (the forged one or its answer, and the hellos)", tc.name, ra, rb)
			}
		})
	}
}

// TestAgentTrainsSurviveAFlood sends one train from the prober's address,
// then a flood of trains with other ids from another address, and checks
// the first train's report still counts all of it: no other sender can
// evict a train. All of it reaches the agent's one socket, in order,
// before the report is asked for.
func TestAgentTrainsSurviveAFlood(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp, _ := listenPair(t)
	go NewAgent("n", udp, testKey).Serve(ctx)
	to := udp.LocalAddr()
	prober, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer prober.Close()
	flooder, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer flooder.Close()
	pkt := make([]byte, wire.TrainPacketSize)
	const id, packets = 77, 20
	for i := range packets {
		if _, err := prober.WriteTo(trainPkt(pkt, id, uint32(i), time.Now()), to); err != nil {
			t.Fatal(err)
		}
	}
	small := make([]byte, wire.HeaderSize+12)
	for i := range 200 {
		if _, err := flooder.WriteTo(wire.EncodeTrain(pkt, uint64(1000+i), 0, time.Now())[:len(small)], to); err != nil {
			t.Fatal(err)
		}
	}
	got := askReport(t, prober, to, id)
	if got.Packets != packets {
		t.Errorf("after a flood of other trains from another address, the report counts %d packets, want %d", got.Packets, packets)
	}
}

// askReport asks the agent at to for train id's report from conn.
func askReport(t *testing.T, conn net.PacketConn, to net.Addr, id uint64) wire.TrainCount {
	t.Helper()
	buf := make([]byte, 2048)
	for range 20 {
		if _, err := conn.WriteTo(reportReq(id, time.Now()), to); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			continue
		}
		if typ, err := wire.Header(buf[:n]); err != nil || typ&^wire.AnswerBit != wire.TypeReport {
			continue
		}
		if got, c, _, err := wire.DecodeReport(buf[:n]); err == nil && got == id {
			return c
		}
	}
	t.Fatalf("no report on train %d", id)
	return wire.TrainCount{}
}

// TestAgentLimitsEachSource floods an agent with echoes from one address,
// all at one instant of its clock and then a tenth of a second later: it
// answers its burst, then its rate, and no more, so a flood cannot turn
// the agent into a reflector or take its time from the prober. Another
// source is still answered.
func TestAgentLimitsEachSource(t *testing.T) {
	now := time.Unix(5000, 0)
	a := NewAgent("n", nil, testKey, WithClock(func() time.Time { return now }))
	buf := make([]byte, 2048)
	flood := func(from netip.AddrPort, first, n int) int {
		answered := 0
		for i := range n {
			if a.answer(echoReq(uint64(first+i), now), buf, from, now) != nil {
				answered++
			}
		}
		return answered
	}
	if got := flood(prober, 1, 5000); got != agentSourceBurst {
		t.Errorf("5,000 echoes from one source at once: %d answered, want its burst, %d", got, agentSourceBurst)
	}
	now = now.Add(100 * time.Millisecond)
	if got, want := flood(prober, 10_000, 5000), agentSourceRate/10; got != want {
		t.Errorf("5,000 more a tenth of a second later: %d answered, want the rate's tenth, %d", got, want)
	}
	other := netip.MustParseAddrPort("10.0.0.10:40000")
	if got := flood(other, 20_000, 10); got != 10 {
		t.Errorf("another source: %d of 10 answered, want all", got)
	}
	if _, _, limited := a.Refused(); limited != int64(2*5000-agentSourceBurst-agentSourceRate/10) {
		t.Errorf("%d refusals counted as over their source's rate, want %d", limited, 2*5000-agentSourceBurst-agentSourceRate/10)
	}
}
