package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// lossyConn drops a share of the datagrams it reads, as a lossy link into
// the node would.
type lossyConn struct {
	net.PacketConn
	mu   sync.Mutex
	rand *rand.Rand
	loss float64
}

func (c *lossyConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, from, err := c.PacketConn.ReadFrom(b)
		c.mu.Lock()
		drop := err == nil && c.rand.Float64() < c.loss
		c.mu.Unlock()
		if !drop {
			return n, from, err
		}
	}
}

// startAgent serves an agent for node on a loopback port; wrap, when not
// nil, wraps its connection.
func startAgent(t *testing.T, ctx context.Context, node string, wrap func(net.PacketConn) net.PacketConn, setup func(*Agent)) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := conn.LocalAddr().String()
	if wrap != nil {
		conn = wrap(conn)
	}
	a := NewAgent(node, conn)
	if setup != nil {
		setup(a)
	}
	go a.Serve(ctx)
	return addr
}

// TestProberMeasures runs agents on loopback, one behind a link that loses
// 20 % of what it receives and one whose train packets arrive at 20 Mbit/s
// (by its clock), and checks what the prober reports for each, and that an
// address no agent answers at is not reported at all.
func TestProberMeasures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const loss, rateMbps = 0.2, 20.0
	lossy := startAgent(t, ctx, "lossy", func(c net.PacketConn) net.PacketConn {
		return &lossyConn{PacketConn: c, rand: rand.New(rand.NewPCG(1, 2)), loss: loss}
	}, nil)
	slow := startAgent(t, ctx, "slow", nil, func(a *Agent) {
		clock := time.Unix(1000, 0)
		perPacket := time.Duration(TrainPacketSize * 8 / (rateMbps * 1e6) * float64(time.Second))
		a.now = func() time.Time { clock = clock.Add(perPacket); return clock }
	})
	fine := startAgent(t, ctx, "fine", nil, nil)
	// Bound and closed again: nothing answers there.
	dead, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.LocalAddr().String()
	dead.Close()

	p, err := NewProber(Config{
		Agents: StaticAgents([]string{lossy, slow, fine, deadAddr}),
		Window: 2 * time.Second, Timeout: 300 * time.Millisecond, EchoesPerNodePerSecond: 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	var snap Snapshot
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, false, func(context.Context) (bool, error) {
		snap = p.Snapshot()
		l, s := snap.Nodes["lossy"], snap.Nodes["slow"]
		// A full window of echoes, and a train to each.
		return l.Echoes >= 300 && s.BandwidthMbps != nil && snap.Nodes["fine"].BandwidthMbps != nil, nil
	})
	if err != nil {
		t.Fatalf("no full window measured: %+v", snap)
	}
	if len(snap.Nodes) != 3 || snap.Agents != 4 {
		t.Errorf("%d nodes reported of %d agents, want lossy, slow and fine of 4: %v", len(snap.Nodes), snap.Agents, snap.Nodes)
	}
	l := snap.Nodes["lossy"]
	// An echo is lost when its request or its answer is: the agent
	// drops requests only.
	if got := *l.PacketLoss; math.Abs(got-loss) > 0.08 {
		t.Errorf("lossy node: loss %.3f over %d echoes, want %.2f ± 0.08", got, l.Echoes, loss)
	}
	if got := *snap.Nodes["fine"].PacketLoss; got > 0.02 {
		t.Errorf("fine node: loss %.3f, want about 0", got)
	}
	if got := *snap.Nodes["slow"].BandwidthMbps; math.Abs(got-rateMbps)/rateMbps > 0.01 {
		t.Errorf("slow node: bandwidth %.2f Mbit/s, want %.0f", got, rateMbps)
	}
	for name, m := range snap.Nodes {
		if m.LatencyMs == nil || *m.LatencyMs <= 0 || *m.LatencyMs > 300 {
			t.Errorf("%s: latency %v, want a round trip within the timeout", name, m.LatencyMs)
		}
	}
	if snap.OldestEcho > snap.Window {
		t.Errorf("oldest echo %s old, want within the window %s", snap.OldestEcho, snap.Window)
	}
}

// TestProberAgentGoesSilent checks a node whose agent stops answering is
// reported as losing everything, not kept at its last good numbers.
func TestProberAgentGoesSilent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agentCtx, stopAgent := context.WithCancel(ctx)
	addr := startAgent(t, agentCtx, "n1", nil, nil)
	p, err := NewProber(Config{Agents: StaticAgents([]string{addr}), Window: time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	loss := func() float64 {
		if m, ok := p.Snapshot().Nodes["n1"]; ok && m.PacketLoss != nil {
			return *m.PacketLoss
		}
		return -1
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		return loss() == 0 && p.Snapshot().Nodes["n1"].Echoes > 50, nil
	}); err != nil {
		t.Fatalf("n1 not measured without loss: loss %v", loss())
	}
	stopAgent()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		return loss() == 1, nil
	}); err != nil {
		t.Fatalf("a silent agent's node has loss %v, want 1", loss())
	}
}

func TestConfigValidate(t *testing.T) {
	base := func() Config {
		c := Config{Agents: StaticAgents(nil)}
		c.Defaults()
		return c
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		field string
		mod   func(*Config)
	}{
		{"agents", func(c *Config) { c.Agents = nil }},
		{"window", func(c *Config) { c.Window = 500 * time.Millisecond }},
		{"timeout", func(c *Config) { c.Timeout = c.Window }},
		{"budget", func(c *Config) { c.BudgetBytesPerSecond = 10 }},
		{"echoes per node per second", func(c *Config) { c.EchoesPerNodePerSecond = -1 }},
		{"train packets", func(c *Config) { c.TrainPackets = 2 }},
	} {
		c := base()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.field, err, tc.field)
		}
	}
}

func TestBandwidthOfTrains(t *testing.T) {
	t0 := time.Unix(1000, 0)
	trains := []trainSample{{t0, 900}, {t0.Add(5 * time.Second), 120}, {t0.Add(10 * time.Second), 600}, {t0.Add(15 * time.Second), 20}}
	for _, tc := range []struct {
		from time.Time
		want float64
	}{
		{t0, 900},                      // the window's highest
		{t0.Add(time.Second), 600},     // the 900 is out of the window
		{t0.Add(12 * time.Second), 20}, // only the last is in it
		{t0.Add(time.Minute), 20},      // none in it: the last
	} {
		if got, ok := bandwidth(trains, tc.from); !ok || got.mbps != tc.want {
			t.Errorf("bandwidth from %s = %v, want %v", tc.from.Sub(t0), got.mbps, tc.want)
		}
	}
	if _, ok := bandwidth(nil, t0); ok {
		t.Error("a bandwidth without trains")
	}
}

// forgingConn answers with another key (or hello id) than the one asked:
// what a guesser who cannot see the request would send.
type forgingConn struct {
	net.PacketConn
	kind byte
}

func (c *forgingConn) WriteTo(b []byte, to net.Addr) (int, error) {
	if t, err := header(b); err == nil && t == c.kind {
		b = append([]byte{}, b...)
		b[13]++ // the key's or id's last byte
	}
	return c.PacketConn.WriteTo(b, to)
}

// TestProberIgnoresForgedAnswers checks only an answer carrying the
// request's unguessable key counts: echoes answered with another key are
// lost, and a hello answered with another id names no node.
func TestProberIgnoresForgedAnswers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	echoes := startAgent(t, ctx, "forged-echoes", func(c net.PacketConn) net.PacketConn { return &forgingConn{c, typeEcho} }, nil)
	hellos := startAgent(t, ctx, "forged-hellos", func(c net.PacketConn) net.PacketConn { return &forgingConn{c, typeHello} }, nil)
	honest := startAgent(t, ctx, "honest", nil, nil)
	p, err := NewProber(Config{Agents: StaticAgents([]string{echoes, hellos, honest}), Window: time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	var snap Snapshot
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		snap = p.Snapshot()
		return snap.Nodes["honest"].Echoes > 50 && snap.Nodes["forged-echoes"].Echoes > 50, nil
	}); err != nil {
		t.Fatalf("not measured: %+v", snap.Nodes)
	}
	if got := *snap.Nodes["forged-echoes"].PacketLoss; got != 1 {
		t.Errorf("echoes answered with other keys: loss %v, want 1", got)
	}
	if got := *snap.Nodes["honest"].PacketLoss; got != 0 {
		t.Errorf("honest agent: loss %v, want 0", got)
	}
	if _, ok := snap.Nodes["forged-hellos"]; ok {
		t.Error("a hello answered with another id named a node")
	}
}
