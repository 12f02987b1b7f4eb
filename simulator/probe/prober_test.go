package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
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

// listenPair opens a request socket on loopback and the train socket on
// the port after it, as agent.Listen does, without kernel timestamps.
func listenPair(t testing.TB) (conn, trains *net.UDPConn) {
	t.Helper()
	conn, trains, err := listenPairOf()
	if err != nil {
		t.Fatal(err)
	}
	return conn, trains
}

// startAgent serves an agent for node on loopback ports until ctx ends,
// with opts; wrap, when not nil, wraps its request connection, and
// setup, when not nil, sets it up before it serves.
func startAgent(t *testing.T, ctx context.Context, node string, wrap func(net.PacketConn) net.PacketConn, setup func(*agent.Agent), opts ...agent.Option) string {
	t.Helper()
	udp, trains := listenPair(t)
	addr := udp.LocalAddr().String()
	var conn net.PacketConn = udp
	if wrap != nil {
		conn = wrap(conn)
	}
	a := agent.NewAgent(node, conn, testKey, append([]agent.Option{agent.WithTrainConn(trains)}, opts...)...)
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
	// The agent reads its clock from its echo and train goroutines. Each
	// reading is at least a packet's time at 20 Mbit/s after the last, and
	// never behind the real clock, which the requests' times are checked
	// against.
	var mu sync.Mutex
	var clock time.Time
	perPacket := time.Duration(wire.TrainPacketSize * 8 / (rateMbps * 1e6) * float64(time.Second))
	slow := startAgent(t, ctx, "slow", nil, nil, agent.WithClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = latest(clock.Add(perPacket), time.Now())
		return clock
	}))
	// Stamped by its kernel, as a deployed agent is.
	fineAgent, err := agent.Listen("127.0.0.1:0", "fine", testKey)
	if err != nil {
		t.Fatal(err)
	}
	go fineAgent.Serve(ctx)
	fine := fineAgent.Addr().String()
	// Bound and closed again: nothing answers there.
	dead, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.LocalAddr().String()
	dead.Close()

	p, err := NewProber(Config{Key: testKey,
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
	if got := l.PacketLoss.Value; math.Abs(got-loss) > 0.08 {
		t.Errorf("lossy node: loss %.3f over %d echoes, want %.2f ± 0.08", got, l.Echoes, loss)
	}
	if got := snap.Nodes["fine"].PacketLoss.Value; got > 0.02 {
		t.Errorf("fine node: loss %.3f, want about 0", got)
	}
	// The slow agent's clock also ticks for the echoes it reads while a
	// train arrives: a few ticks in 80, more on a loaded machine (6 % under
	// the race detector beside a benchmark).
	if got := snap.Nodes["slow"].BandwidthMbps; got.AtLeast || math.Abs(got.Value-rateMbps)/rateMbps > 0.1 {
		t.Errorf("slow node: bandwidth %+v Mbit/s, want %.0f, measured", *got, rateMbps)
	}
	// Loopback carries a train as fast as it is sent: a lower bound.
	if got := snap.Nodes["fine"].BandwidthMbps; !got.AtLeast || got.Value < 100 || !math.IsInf(got.High, 1) {
		t.Errorf("fine node: bandwidth %+v, want at least 100 Mbit/s, a lower bound", *got)
	}
	for name, m := range snap.Nodes {
		if m.LatencyMs == nil || m.LatencyMs.Value <= 0 || m.LatencyMs.Value > 300 {
			t.Errorf("%s: latency %v, want a round trip within the timeout", name, m.LatencyMs)
			continue
		}
		if l := m.LatencyMs; l.Low > l.Value || l.High < l.Value || l.Samples == 0 {
			t.Errorf("%s: latency %+v, want an interval around the median of its samples", name, *l)
		}
		if pl := m.PacketLoss; pl.Low > pl.Value || pl.High < pl.Value || pl.Samples != m.Echoes {
			t.Errorf("%s: loss %+v, want an interval around the share, of %d echoes", name, *pl, m.Echoes)
		}
	}
	if snap.OldestEcho > snap.Window {
		t.Errorf("oldest echo %s old, want within the window %s", snap.OldestEcho, snap.Window)
	}
}

// TestProberAgentGoesSilent checks a node whose agent stops answering is
// not kept at its last good numbers, nor read as a lossy link: once the
// window holds none of its answers, the node is unknown, and absent.
func TestProberAgentGoesSilent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agentCtx, stopAgent := context.WithCancel(ctx)
	addr := startAgent(t, agentCtx, "n1", nil, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: 2 * time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	loss := func() float64 {
		if m, ok := p.Snapshot().Nodes["n1"]; ok && m.PacketLoss != nil {
			return m.PacketLoss.Value
		}
		return -1
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		return loss() == 0 && p.Snapshot().Nodes["n1"].Echoes > 50, nil
	}); err != nil {
		t.Fatalf("n1 not measured without loss: loss %v", loss())
	}
	stopAgent()
	worst := 0.0
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		l := loss()
		worst = max(worst, l)
		return l == -1, nil
	}); err != nil {
		t.Fatalf("a silent agent's node is still served, loss %v", loss())
	}
	if worst > 0.1 {
		t.Errorf("a silent agent's node was served with loss %.2f before it left", worst)
	}
}

// drainingConn slows its reader down to one datagram every gap for
// starved once every period, as an agent's process starved of CPU on a
// busy node is: it still answers, more slowly than echoes come, and what
// arrives meanwhile waits in the socket.
// Its datagrams keep the kernel's receive times, as a deployed agent's do.
type drainingConn struct {
	*net.UDPConn
	gap, starved, period time.Duration
	start                time.Time
}

func (c *drainingConn) ReadMsgUDPAddrPort(b, oob []byte) (n, oobn, flags int, addr netip.AddrPort, err error) {
	if time.Since(c.start)%c.period < c.starved {
		time.Sleep(c.gap)
	}
	return c.UDPConn.ReadMsgUDPAddrPort(b, oob)
}

// TestLateAnswerIsNotLoss checks that echoes an agent answers after the
// timeout, because it was starved of CPU, are counted late and not lost:
// a busy node's link is not a lossy one. The agent reads a quarter of
// what it is sent for three timeouts in every eight, so its backlog
// grows past twice the timeout.
func TestLateAnswerIsNotLoss(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const timeout = 200 * time.Millisecond
	addr := startAgent(t, ctx, "busy", func(c net.PacketConn) net.PacketConn {
		udp := c.(*net.UDPConn)
		if err := wire.EnableTimestamps(udp); err != nil {
			t.Skipf("no kernel receive times here (%v): the agent could not tell how long an echo waited in its socket", err)
		}
		return &drainingConn{UDPConn: udp, gap: 40 * time.Millisecond, starved: 3 * timeout, period: 8 * timeout, start: time.Now()}
	}, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: 2 * time.Second, Timeout: timeout, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	var m Metrics
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		m = p.Snapshot().Nodes["busy"]
		return m.PacketLoss != nil && m.Echoes >= 150, nil
	}); err != nil {
		t.Fatalf("busy not measured over a window: %+v", m)
	}
	// Several windows, each with stalls in it.
	worst := 0.0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if m = p.Snapshot().Nodes["busy"]; m.PacketLoss != nil {
			worst = max(worst, m.PacketLoss.Value)
		}
	}
	late := p.Cost().EchoesLate
	if late == 0 {
		t.Fatal("no echo was answered after the timeout: the agent's stalls did not delay any")
	}
	if worst > 0 {
		t.Errorf("%d echoes answered late; the busy agent's link was served with loss up to %.3f, want 0", late, worst)
	}
	if m.LatencyMs == nil || m.LatencyMs.Value >= float64(timeout/time.Millisecond) {
		t.Errorf("latency %+v: the median echo was not delayed, so the median round trip should be below the timeout", m.LatencyMs)
	}
}

func TestConfigValidate(t *testing.T) {
	base := func() Config {
		c := Config{Agents: StaticAgents(nil), Key: testKey}
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
		{"key", func(c *Config) { c.Key = nil }},
		{"window", func(c *Config) { c.Window = 500 * time.Millisecond }},
		{"timeout", func(c *Config) { c.Timeout = c.Window }},
		{"budget", func(c *Config) { c.BudgetBytesPerSecond = 10 }},
		{"echoes per node per second", func(c *Config) { c.EchoesPerNodePerSecond = -1 }},
		{"train packets", func(c *Config) { c.TrainPackets = 2 }},
		{"budget", func(c *Config) { c.BudgetBytesPerSecond = math.NaN() }},
		{"budget", func(c *Config) { c.BudgetBytesPerSecond = math.Inf(1) }},
		{"echoes per node per second", func(c *Config) { c.EchoesPerNodePerSecond = math.NaN() }},
		{"echoes per node per second", func(c *Config) { c.EchoesPerNodePerSecond = math.Inf(1) }},
	} {
		c := base()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.field, err, tc.field)
		}
	}
}

// manyTrains are 21 trains of one instant, 90 to 110 Mbit/s by 1, and one
// slowed to 30: the median's 95 % interval is the 6th to the 16th of the
// 21 paced trains (95 and 105), widened to the resolution.
func manyTrains(at time.Time) []trainSample {
	out := []trainSample{{at: at, mbps: 30}}
	for v := 90.0; v <= 110; v++ {
		out = append(out, trainSample{at: at, mbps: v})
	}
	return out
}

func TestBandwidthOfTrains(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const window, maxAge = 10 * time.Second, 40 * time.Second
	measured := []trainSample{{at: t0, mbps: 19}, {at: t0.Add(5 * time.Second), mbps: 21}, {at: t0.Add(8 * time.Second), mbps: 20}}
	steady := []trainSample{{at: t0, mbps: 900, atLeast: true}, {at: t0.Add(5 * time.Second), mbps: 20},
		{at: t0.Add(10 * time.Second), mbps: 120, atLeast: true}, {at: t0.Add(20 * time.Second), mbps: 640, atLeast: true}, {at: t0.Add(30 * time.Second), mbps: 90, atLeast: true}}
	slowedDown := []trainSample{{at: t0, mbps: 5953.8, atLeast: true}, {at: t0.Add(4 * time.Second), mbps: 900, atLeast: true}, {at: t0.Add(9 * time.Second), mbps: 20}}
	for _, tc := range []struct {
		name   string
		trains []trainSample
		now    time.Time
		want   Estimate
	}{
		{"the median of the last half window's trains", measured, t0.Add(9 * time.Second),
			Estimate{Value: 20.5, Low: 0.9 * 20.5, High: 1.1 * 20.5, Samples: 2, At: t0.Add(8 * time.Second)}},
		{"a train slowed by other traffic widens nothing",
			[]trainSample{{at: t0, mbps: 10}, {at: t0, mbps: 21}}, t0,
			Estimate{Value: 21, Low: 0.9 * 21, High: 1.1 * 21, Samples: 1, At: t0}},
		// A steady 100 Mbit/s link, one of its trains slowed to 20: it must
		// not reach down to a steady 50 Mbit/s link's.
		{"one slowed train of four", []trainSample{{at: t0, mbps: 99}, {at: t0, mbps: 20}, {at: t0, mbps: 101}, {at: t0, mbps: 100}}, t0,
			Estimate{Value: 100, Low: 90, High: 110, Samples: 3, At: t0}},
		{"many trains: the order statistics that bound the median", manyTrains(t0), t0,
			Estimate{Value: 100, Low: 90, High: 110, Samples: 21, At: t0}},
		{"two trains further apart than the resolution: their range", []trainSample{{at: t0, mbps: 80}, {at: t0, mbps: 100}}, t0,
			Estimate{Value: 90, Low: 80, High: 100, Samples: 2, At: t0}},
		{"none in the last half window: the last train", measured, t0.Add(30 * time.Second),
			Estimate{Value: 20, Low: 18, High: 22, Samples: 1, At: t0.Add(8 * time.Second)}},
		{"a link that slowed down shows within half a window", slowedDown, t0.Add(10 * time.Second),
			Estimate{Value: 20, Low: 18, High: 22, Samples: 1, At: t0.Add(9 * time.Second)}},
		{"a lower bound, rounded down, with no upper end", slowedDown[:2], t0.Add(4 * time.Second),
			Estimate{Value: 5900, Low: 5900, High: math.Inf(1), AtLeast: true, Samples: 2, At: t0.Add(4 * time.Second)}},
		{"lower bounds only: every one since the link last slowed, within the age limit", steady, t0.Add(32 * time.Second),
			Estimate{Value: 640, Low: 640, High: math.Inf(1), AtLeast: true, Samples: 3, At: t0.Add(30 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := bandwidth(tc.trains, tc.now, window, maxAge)
			near := func(a, b float64) bool { return a == b || math.Abs(a-b) < 1e-9 }
			if !ok || !near(got.Value, tc.want.Value) || !near(got.Low, tc.want.Low) || !near(got.High, tc.want.High) ||
				got.AtLeast != tc.want.AtLeast || got.Samples != tc.want.Samples || !got.At.Equal(tc.want.At) {
				t.Errorf("bandwidth = %+v, %v; want %+v", got, ok, tc.want)
			}
		})
	}
	if _, ok := bandwidth(measured, t0.Add(time.Minute), window, maxAge); ok {
		t.Error("a bandwidth from trains older than the age limit")
	}
	if _, ok := bandwidth(nil, t0, window, maxAge); ok {
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
	if t, err := wire.Header(b); err == nil && t&^wire.AnswerBit == c.kind {
		b = append([]byte{}, b...)
		b[wire.IDAt+7]++ // the key's or id's last byte
	}
	return c.PacketConn.WriteTo(b, to)
}

// TestProberIgnoresForgedAnswers checks only an answer carrying the
// request's unguessable key counts: echoes answered with another key are
// lost, and a hello answered with another id names no node. It waits for
// the forged answers to have been refused, not for time to pass.
func TestProberIgnoresForgedAnswers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	echoes := startAgent(t, ctx, "forged-echoes", func(c net.PacketConn) net.PacketConn { return &forgingConn{c, wire.TypeEcho} }, nil)
	hellos := startAgent(t, ctx, "forged-hellos", func(c net.PacketConn) net.PacketConn { return &forgingConn{c, wire.TypeHello} }, nil)
	honest := startAgent(t, ctx, "honest", nil, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{echoes, hellos, honest}), Window: time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The forged echoes' agent is named by its honest hello answer; its
	// echo answers all carry another key. Once it has gone silent, every
	// echo it was sent is decided, and no answer counted.
	forgedEchoes := netip.MustParseAddrPort(echoes)
	go p.Run(ctx)
	waitFor(t, 10*time.Second, "the forged echoes refused until their agent counts as silent", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		tg := p.targets[forgedEchoes]
		return tg != nil && tg.silent && p.stats.refused.Load() >= silentEchoes
	})
	waitFor(t, 10*time.Second, "honest measured", func() bool { return p.Snapshot().Nodes["honest"].Echoes > 50 })
	p.mu.Lock()
	tg := p.targets[forgedEchoes]
	answered := !tg.lastAnswer.IsZero()
	for _, e := range tg.echoes {
		answered = answered || !e.lost
	}
	p.mu.Unlock()
	if answered {
		t.Error("an echo answered with another key was counted as answered")
	}
	if got := p.Snapshot().Nodes["honest"].PacketLoss.Value; got != 0 {
		t.Errorf("honest agent: loss %v, want 0", got)
	}
	// A hello answered with another id than the one in flight: by hand,
	// from the agent's address, as its forgingConn would send it.
	forgedHellos := netip.MustParseAddrPort(hellos)
	p.mu.Lock()
	ht := p.targets[forgedHellos]
	ht.helloID = 41
	p.mu.Unlock()
	ans := wire.EncodeHello(make([]byte, wire.HelloSize), 42, "forged-hellos", time.Now())
	if p.dispatch(klog.Background(), testKey.Sign(ans), forgedHellos, time.Now()) {
		t.Error("a hello answer with another id than the one in flight was taken")
	}
	p.mu.Lock()
	named := ht.node
	p.mu.Unlock()
	if named != "" {
		t.Errorf("a hello answered with another id named the node %q", named)
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
