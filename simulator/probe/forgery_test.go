package probe

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
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

// TestForgedDatagramBetweenAgents sends agent A one datagram of each kind
// from agent B's own address and port, as a pod forging B's source would,
// and counts what the two agents read after: a request answered once is
// one datagram read by B, and nothing more. Agents answering each other's
// answers would read thousands.
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
			var a, b *countingConn
			aAddr := startAgent(t, ctx, "a", func(c net.PacketConn) net.PacketConn { a = &countingConn{PacketConn: c}; return a }, nil)
			bConn, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			b = &countingConn{PacketConn: bConn}
			go NewAgent("b", b, testKey).Serve(ctx)
			to, err := net.ResolveUDPAddr("udp", aAddr)
			if err != nil {
				t.Fatal(err)
			}
			// B's socket sends it: the source is B's address and port.
			if _, err := bConn.WriteTo(tc.msg, to); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			if ra, rb := a.reads.Load(), b.reads.Load(); ra > 1 || rb > 1 {
				t.Errorf("one forged %s: agent A read %d datagrams, agent B %d; want at most 1 each", tc.name, ra, rb)
			}
		})
	}
}

// TestAgentTrainsSurviveAFlood sends one train from the prober's address,
// then a flood of trains with other ids from another address, and checks
// the first train's report still counts all of it: no other sender can
// evict a train.
func TestAgentTrainsSurviveAFlood(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := startAgent(t, ctx, "n", nil, nil)
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
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
	pkt := make([]byte, TrainPacketSize)
	const id, packets = 77, 20
	for i := range packets {
		if _, err := prober.WriteTo(trainPkt(pkt, id, uint32(i), time.Now()), to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	small := make([]byte, headerSize+12)
	for i := range 200 {
		if _, err := flooder.WriteTo(encodeTrain(pkt, uint64(1000+i), 0, time.Now())[:len(small)], to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	got := askReport(t, prober, to, id)
	if got.Packets != packets {
		t.Errorf("after a flood of other trains from another address, the report counts %d packets, want %d", got.Packets, packets)
	}
}

// askReport asks the agent at to for train id's report from conn.
func askReport(t *testing.T, conn net.PacketConn, to net.Addr, id uint64) trainCount {
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
		if typ, err := header(buf[:n]); err != nil || typ&^answerBit != typeReport {
			continue
		}
		if got, c, _, err := decodeReport(buf[:n]); err == nil && got == id {
			return c
		}
	}
	t.Fatalf("no report on train %d", id)
	return trainCount{}
}

// rewritingConn is an agent's connection that passes each answer of kind
// through rewrite before it leaves: a lying or raced agent.
type rewritingConn struct {
	net.PacketConn
	kind    byte
	rewrite func(b []byte, to net.Addr) []byte
}

func (c *rewritingConn) WriteTo(b []byte, to net.Addr) (int, error) {
	if t, err := header(b); err == nil && t&^answerBit == c.kind {
		b = c.rewrite(b, to)
	}
	return c.PacketConn.WriteTo(b, to)
}

// raceReports has a third party send, before each of the agent's report
// answers, a forged one for the same train to the same place: it claims
// the whole train arrived within a microsecond.
func raceReports(third net.PacketConn) func(net.PacketConn) net.PacketConn {
	return func(c net.PacketConn) net.PacketConn {
		return &rewritingConn{PacketConn: c, kind: typeReport, rewrite: func(b []byte, to net.Addr) []byte {
			if id, _, _, err := decodeReport(b); err == nil {
				at := time.Unix(1000, 0)
				forged := trainCount{Packets: 80, Bytes: 80 * TrainPacketSize, First: at, Last: at.Add(time.Microsecond)}
				_, _ = third.WriteTo(encodeReport(make([]byte, ReportSize), id, &forged, time.Now()), to)
			}
			return b
		}}
	}
}

// inflateReports makes an agent claim more than it was sent: a thousand
// packets, each a megabyte, within a microsecond.
func inflateReports(c net.PacketConn) net.PacketConn {
	return &rewritingConn{PacketConn: c, kind: typeReport, rewrite: func(b []byte, _ net.Addr) []byte {
		if id, got, _, err := decodeReport(b); err == nil && got.Packets > 0 {
			inflated := trainCount{Packets: 1000, Bytes: 1000 << 20, First: got.First, Last: got.First.Add(time.Microsecond)}
			// The agent holds the key: a lying agent signs its lie.
			return testKey.sign(encodeReport(make([]byte, ReportSize), id, &inflated, time.Now()))
		}
		return b
	}}
}

// TestProberRefusesForgedReports measures two agents: one whose every
// report is raced by a forged report from another address, and one that
// inflates its own reports. Neither forgery may give a rate above what
// the prober sent: no link on loopback is faster than 100 Gbit/s.
func TestProberRefusesForgedReports(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	third, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	raced := startAgent(t, ctx, "raced", raceReports(third), nil)
	inflated := startAgent(t, ctx, "inflated", inflateReports, nil)
	honest := startAgent(t, ctx, "honest", nil, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{raced, inflated, honest}), Window: 2 * time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 50})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	deadline := time.Now().Add(6 * time.Second)
	forged := map[string]float64{}
	for time.Now().Before(deadline) {
		snap := p.Snapshot()
		for _, name := range []string{"raced", "inflated", "honest"} {
			if m := snap.Nodes[name]; m.BandwidthMbps != nil && m.BandwidthMbps.Value > 100_000 {
				forged[name] = max(forged[name], m.BandwidthMbps.Value)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, mbps := range forged {
		t.Errorf("%s: %.0f Mbit/s served from a forged report", name, mbps)
	}
	if m := p.Snapshot().Nodes["honest"]; m.BandwidthMbps == nil {
		t.Error("the honest agent's bandwidth was never measured")
	}
}

// TestProberRefusesUnaskedHello sends the prober a hello answer with id 0
// from a target's address before any hello went there: it must name no
// node. Nor may an agent name its node with a name that is not a node's.
func TestProberRefusesUnaskedHello(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	target, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{target.LocalAddr().String()}), Window: time.Second, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.discover(ctx)
	go p.read(ctx)
	defer p.conn.Close()
	forged := encodeHello(make([]byte, HelloSize), 0, "forged-node", time.Now())
	forged[4] |= answerBit
	testKey.sign(forged)
	prober := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p.conn.LocalAddr().(*net.UDPAddr).Port}
	if _, err := target.WriteTo(forged, prober); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	p.mu.Lock()
	named := p.order[0].node
	p.mu.Unlock()
	if named != "" {
		t.Errorf("an unasked hello answer with id 0 named the target %q", named)
	}

	bad := startAgent(t, ctx, "Not_A_Node!", nil, nil)
	q, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{bad}), Window: time.Second, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go q.Run(ctx)
	time.Sleep(1500 * time.Millisecond)
	if _, ok := q.Snapshot().Nodes["Not_A_Node!"]; ok {
		t.Error("an agent named its node with an invalid name, and it was served")
	}
}

// TestProberChecksNamesWithEveryEcho changes the node an address answers
// for: within a few echoes the prober asks its name again and serves the
// new name, not the old.
func TestProberChecksNamesWithEveryEcho(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := &atomic.Value{}
	name.Store("first")
	addr := startAgent(t, ctx, "ignored", func(c net.PacketConn) net.PacketConn {
		echoes := &rewritingConn{PacketConn: c, kind: typeEcho, rewrite: func(b []byte, _ net.Addr) []byte {
			binary.BigEndian.PutUint64(b[echoNodeHashAt:], nodeHash(name.Load().(string)))
			return testKey.sign(b)
		}}
		return &rewritingConn{PacketConn: echoes, kind: typeHello, rewrite: func(b []byte, _ net.Addr) []byte {
			id, _, sent, _ := decodeHello(b)
			return testKey.sign(encodeHello(make([]byte, HelloSize), id, name.Load().(string), sent))
		}}
	}, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 50})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	waitFor(t, 5*time.Second, "first named", func() bool { _, ok := p.Snapshot().Nodes["first"]; return ok })
	name.Store("second")
	waitFor(t, 5*time.Second, "renamed to second", func() bool {
		nodes := p.Snapshot().Nodes
		_, second := nodes["second"]
		_, first := nodes["first"]
		return second && !first
	})
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentLimitsEachSource floods an agent with echoes from one address:
// it answers a bounded number, so a flood cannot turn the agent into a
// reflector or take its time from the prober.
func TestAgentLimitsEachSource(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := startAgent(t, ctx, "n", nil, nil)
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	flooder, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer flooder.Close()
	var answered atomic.Int64
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := flooder.ReadFrom(buf); err != nil {
				return
			}
			answered.Add(1)
		}
	}()
	const sent = 5000
	start := time.Now()
	for i := range sent {
		if _, err := flooder.WriteTo(echoReq(uint64(i+1), time.Now()), to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	elapsed := time.Since(start)
	limit := int64(agentSourceBurst + agentSourceRate*elapsed.Seconds())
	if got := answered.Load(); got > limit {
		t.Errorf("%d echoes from one source in %s: %d answered, want at most %d", sent, elapsed, got, limit)
	}
}

// TestStaleBandwidthIsNotServedAsCurrent gives a node fresh echoes and a
// bandwidth sample ten windows old: the snapshot must not serve that
// bandwidth as the node's.
func TestStaleBandwidthIsNotServedAsCurrent(t *testing.T) {
	const window = 15 * time.Second
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents(nil), Window: window})
	if err != nil {
		t.Fatal(err)
	}
	defer p.conn.Close()
	now := time.Unix(10_000, 0)
	p.now = func() time.Time { return now }
	tg := &target{addr: netip.MustParseAddrPort("127.0.0.1:1"), node: "n",
		echoes: []echo{{sent: now.Add(-time.Second), rtt: time.Millisecond}},
		trains: []trainSample{{at: now.Add(-10 * window), mbps: 900}}}
	p.targets[tg.addr], p.order = tg, []*target{tg}
	p.summarise()
	m, ok := p.Snapshot().Nodes["n"]
	if !ok {
		t.Fatal("the node with fresh echoes is not served")
	}
	if m.BandwidthMbps != nil && now.Sub(m.BandwidthMbps.At) > 4*window {
		t.Errorf("a bandwidth measured %s ago is served as the node's (%.0f Mbit/s)", now.Sub(m.BandwidthMbps.At), m.BandwidthMbps.Value)
	}
}

// TestAgentRestartIsNotLoss restarts an agent on the same address: the
// echoes sent while it was down are not the link's loss.
func TestAgentRestartIsNotLoss(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agentCtx, stopAgent := context.WithCancel(ctx)
	addr := startAgent(t, agentCtx, "n1", nil, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: 4 * time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	waitFor(t, 5*time.Second, "n1 measured", func() bool { return p.Snapshot().Nodes["n1"].Echoes > 50 })
	stopAgent()
	time.Sleep(1500 * time.Millisecond)
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go NewAgent("n1", conn, testKey).Serve(ctx)
	restarted := time.Now()
	worst := 0.0
	for time.Since(restarted) < 3*time.Second {
		if m, ok := p.Snapshot().Nodes["n1"]; ok && m.PacketLoss != nil {
			worst = max(worst, m.PacketLoss.Value)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if worst > 0.05 {
		t.Errorf("after the agent's restart, its node's loss reached %.2f; the restart is not the link's loss", worst)
	}
}
