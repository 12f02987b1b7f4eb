package probe

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
)

// rewritingConn is an agent's connection that passes each answer of kind
// through rewrite before it leaves: a lying or raced agent.
type rewritingConn struct {
	net.PacketConn
	kind    byte
	rewrite func(b []byte, to net.Addr) []byte
}

func (c *rewritingConn) WriteTo(b []byte, to net.Addr) (int, error) {
	if t, err := wire.Header(b); err == nil && t&^wire.AnswerBit == c.kind {
		b = c.rewrite(b, to)
	}
	return c.PacketConn.WriteTo(b, to)
}

// raceReports has a third party send, before each of the agent's report
// answers, a forged one for the same train to the same place: it claims
// the whole train arrived within a microsecond.
func raceReports(third net.PacketConn) func(net.PacketConn) net.PacketConn {
	return func(c net.PacketConn) net.PacketConn {
		return &rewritingConn{PacketConn: c, kind: wire.TypeReport, rewrite: func(b []byte, to net.Addr) []byte {
			if id, _, _, err := wire.DecodeReport(b); err == nil {
				at := time.Unix(1000, 0)
				forged := wire.TrainCount{Packets: 80, Bytes: 80 * wire.TrainPacketSize, First: at, Last: at.Add(time.Microsecond)}
				_, _ = third.WriteTo(wire.EncodeReport(make([]byte, wire.ReportSize), id, &forged, time.Now()), to)
			}
			return b
		}}
	}
}

// inflateReports makes an agent claim more than it was sent: a thousand
// packets, each a megabyte, within a microsecond.
func inflateReports(c net.PacketConn) net.PacketConn {
	return &rewritingConn{PacketConn: c, kind: wire.TypeReport, rewrite: func(b []byte, _ net.Addr) []byte {
		if id, got, _, err := wire.DecodeReport(b); err == nil && got.Packets > 0 {
			inflated := wire.TrainCount{Packets: 1000, Bytes: 1000 << 20, First: got.First, Last: got.First.Add(time.Microsecond)}
			// The agent holds the key: a lying agent signs its lie.
			return testKey.Sign(wire.EncodeReport(make([]byte, wire.ReportSize), id, &inflated, time.Now()))
		}
		return b
	}}
}

// TestProberRefusesForgedReports measures two agents: one whose every
// report is raced by a forged report from another address, and one that
// inflates its own reports. Neither forgery may give a rate above what
// the prober sent: no link on loopback is faster than 100 Gbit/s. The
// prober sends one train at a time, so once the seventh has gone, the
// first six (two to each agent) are decided.
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
	waitFor(t, 20*time.Second, "seven trains sent", func() bool { return p.Cost().Trains >= 7 })
	p.mu.Lock()
	defer p.mu.Unlock()
	rated := map[string]int{}
	for _, tg := range p.targets {
		for _, s := range tg.trains {
			rated[tg.node]++
			if s.mbps > 100_000 {
				t.Errorf("%s: a train of %.0f Mbit/s taken from a forged report", tg.node, s.mbps)
			}
		}
	}
	if rated["honest"] == 0 || rated["raced"] == 0 {
		t.Errorf("trains rated per node %v: the honest agent's and the raced agent's own reports must give rates", rated)
	}
	if rated["inflated"] != 0 {
		t.Errorf("%d trains rated from reports that claimed more than was sent", rated["inflated"])
	}
}

// TestProberRefusesUnaskedHello sends the prober a hello answer with id 0
// from a target's address before any hello went there: it must name no
// node. Nor may an agent name its node with a name that is not a node's.
// Each waits for the prober to have refused the answer.
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
	forged := wire.EncodeHello(make([]byte, wire.HelloSize), 0, "forged-node", time.Now())
	testKey.Sign(forged)
	prober := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p.conn.LocalAddr().(*net.UDPAddr).Port}
	if _, err := target.WriteTo(forged, prober); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the unasked hello answer refused", func() bool { return p.Cost().Refused >= 1 })
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
	// Only hellos go to an unnamed agent: what is refused is its answer.
	waitFor(t, 5*time.Second, "the invalid name refused", func() bool { return q.Cost().Refused >= 1 })
	q.mu.Lock()
	named = q.order[0].node
	q.mu.Unlock()
	if named != "" {
		t.Errorf("an agent named its node %q, not a node's name, and it was taken", named)
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
		echoes := &rewritingConn{PacketConn: c, kind: wire.TypeEcho, rewrite: func(b []byte, _ net.Addr) []byte {
			key, requested, s, _ := wire.DecodeEcho(b)
			out := wire.EncodeEchoAnswer(make([]byte, wire.EchoSize), key, requested, s.Received, wire.NodeHash(name.Load().(string)), s.Link)
			wire.StampEchoSent(out, s.Sent)
			return testKey.Sign(out)
		}}
		return &rewritingConn{PacketConn: echoes, kind: wire.TypeHello, rewrite: func(b []byte, _ net.Addr) []byte {
			id, _, sent, _ := wire.DecodeHello(b)
			return testKey.Sign(wire.EncodeHello(make([]byte, wire.HelloSize), id, name.Load().(string), sent))
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
	waitFor(t, 5*time.Second, "the stopped agent taken as gone", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.order[0].silent
	})
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go agent.NewAgent("n1", conn, testKey).Serve(ctx)
	restarted := time.Now()
	// Every summary until one whose loss window starts after the restart:
	// those are the windows that hold the agent's absence.
	worst := 0.0
	waitFor(t, 15*time.Second, "a loss window past the restart", func() bool {
		snap := p.Snapshot()
		if m, ok := snap.Nodes["n1"]; ok && m.PacketLoss != nil {
			worst = max(worst, m.PacketLoss.Value)
		}
		return snap.At.Sub(restarted) > snap.Window+lossAfter(p.cfg)
	})
	if worst > 0.05 {
		t.Errorf("after the agent's restart, its node's loss reached %.2f; the restart is not the link's loss", worst)
	}
}

// TestProberRefusesStrangersWithoutLocking: an answer from an address the
// prober does not probe, or one it cannot authenticate, is refused before
// the prober takes its lock, so a flood of them cannot hold up the
// prober's own bookkeeping; an agent's authenticated answer is taken.
func TestProberRefusesStrangersWithoutLocking(t *testing.T) {
	agentAddr := netip.MustParseAddrPort("127.0.0.1:10271")
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{agentAddr.String()}), Window: time.Second, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.conn.Close()
	p.discover(context.Background())
	answer := func() []byte {
		b := wire.EncodeEchoAnswer(make([]byte, wire.EchoSize), 42, time.Now(), time.Now(), 1, wire.LinkReading{})
		return testKey.Sign(b)
	}
	stranger := netip.MustParseAddrPort("127.0.0.1:40001")
	unsigned := answer()
	unsigned[len(unsigned)-1] ^= 1
	p.mu.Lock()
	done := make(chan [2]bool, 1)
	go func() {
		done <- [2]bool{
			p.dispatch(klog.Background(), answer(), stranger, time.Now()),
			p.dispatch(klog.Background(), unsigned, agentAddr, time.Now()),
		}
	}()
	select {
	case got := <-done:
		p.mu.Unlock()
		if got[0] || got[1] {
			t.Errorf("taken: from a stranger %v, unsigned %v; want both refused", got[0], got[1])
		}
	case <-time.After(5 * time.Second):
		p.mu.Unlock()
		<-done
		t.Fatal("refusing a stranger's or an unsigned answer waited for the prober's lock")
	}
}
