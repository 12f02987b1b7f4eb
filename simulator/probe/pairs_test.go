package probe

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
)

// TestProberMeasuresBetweenNodes runs three agents on loopback that find
// each other, one behind a link that loses 20 % of what it receives, and
// a prober told, once a window, that node a matters: it serves every node's coordinate,
// and the pairs from a to the two others, measured directly: the lossy
// one's loss near 20 %, the other's near none, each with a latency and a
// bandwidth, each with its samples.
func TestProberMeasuresBetweenNodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type node struct {
		name string
		conn *net.UDPConn
		wrap func(net.PacketConn) net.PacketConn
	}
	nodes := []node{{name: "a"}, {name: "b"}, {name: "lossy", wrap: func(c net.PacketConn) net.PacketConn {
		return &lossyConn{PacketConn: c, rand: rand.New(rand.NewPCG(5, 6)), loss: 0.2}
	}}}
	var addrs []string
	var trains []*net.UDPConn
	for i := range nodes {
		udp, tr := listenPair(t)
		nodes[i].conn = udp
		trains = append(trains, tr)
		addrs = append(addrs, udp.LocalAddr().String())
	}
	for i, n := range nodes {
		var conn net.PacketConn = n.conn
		if n.wrap != nil {
			conn = n.wrap(conn)
		}
		go agent.NewAgent(n.name, conn, testKey, agent.WithTrainConn(trains[i]), agent.WithPeers(StaticAgents(addrs))).Serve(ctx)
	}
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents(addrs), Window: 2 * time.Second, Timeout: 200 * time.Millisecond,
		EchoesPerNodePerSecond: 20, PairsPerNode: DefaultPairsPerNode, PairEchoesPerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	p.SetInterest([]string{"a"})
	pair := func(snap Snapshot, from, to string) *PairMetrics {
		for i := range snap.Pairs {
			if snap.Pairs[i].From == from && snap.Pairs[i].To == to {
				return &snap.Pairs[i]
			}
		}
		return nil
	}
	var snap Snapshot
	measured := func() bool {
		snap = p.Snapshot()
		for _, to := range []string{"b", "lossy"} {
			m := pair(snap, "a", to)
			if m == nil || m.PacketLoss == nil || m.PacketLoss.Samples < 150 || m.BandwidthMbps == nil {
				return false
			}
		}
		return len(snap.Coordinates) == 3
	}
	// The scheduler says it again once a window; interest lapses after
	// three.
	renewed := time.Now()
	for deadline := time.Now().Add(30 * time.Second); !measured(); time.Sleep(50 * time.Millisecond) {
		if time.Since(renewed) > p.cfg.Window {
			p.SetInterest([]string{"a"})
			renewed = time.Now()
		}
		if time.Now().After(deadline) {
			for _, m := range snap.Pairs {
				t.Logf("pair %s-%s: latency %+v loss %+v bandwidth %+v", m.From, m.To, m.LatencyMs, m.PacketLoss, m.BandwidthMbps)
			}
			t.Fatalf("both pairs of a not measured over a window with a train each, and every coordinate, within 30 s: %d coordinates, cost %+v", len(snap.Coordinates), p.Cost())
		}
	}
	if len(snap.Pairs) != 2 {
		t.Errorf("pairs %+v: want a's two and no other", snap.Pairs)
	}
	lossy, fine := pair(snap, "a", "lossy"), pair(snap, "a", "b")
	if got := lossy.PacketLoss.Value; math.Abs(got-0.2) > 0.1 {
		t.Errorf("a to lossy: loss %.3f over %d echoes, want 0.2 ± 0.1", got, lossy.PacketLoss.Samples)
	}
	if got := fine.PacketLoss.Value; got > 0.03 {
		t.Errorf("a to b: loss %.3f, want about 0", got)
	}
	for _, m := range []*PairMetrics{lossy, fine} {
		l := m.LatencyMs
		if l == nil || l.Value <= 0 || l.Value > 200 || l.Low > l.Value || l.High < l.Value || l.Samples == 0 {
			t.Errorf("%s to %s: latency %+v, want a round trip within the timeout, with its interval", m.From, m.To, l)
		}
		if pl := m.PacketLoss; pl.Low > pl.Value || pl.High < pl.Value {
			t.Errorf("%s to %s: loss %+v, want an interval around the share", m.From, m.To, *pl)
		}
		// Loopback carries a train about as fast as it is sent: a lower
		// bound, or, where the agent read it late, a rate well above any
		// shaped link's.
		if bw := m.BandwidthMbps; bw.Value < 100 || bw.Samples == 0 || bw.Low > bw.Value || bw.High < bw.Value {
			t.Errorf("%s to %s: bandwidth %+v, want a train's rate of 100 Mbit/s or more", m.From, m.To, *bw)
		}
	}
	for name, c := range snap.Coordinates {
		if c.Samples == 0 || c.Coordinate == nil || len(c.Coordinate.Vec) != 8 || c.At.IsZero() {
			t.Errorf("%s: coordinate %+v, want serf's, updated by samples", name, c)
		}
	}
	if cost := p.Cost(); cost.Samples == 0 {
		t.Errorf("cost %+v: no sample taken", cost)
	}
}

var testLogger = klog.Background()

// namedProber is a prober, not running, with targets named nodes, on a
// clock the test sets.
func namedProber(t *testing.T, cfg Config, nodes ...string) (*Prober, *time.Time) {
	t.Helper()
	cfg.Key, cfg.Agents = testKey, StaticAgents(nil)
	p, err := NewProber(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.conn.Close() })
	now := time.Unix(20_000, 0)
	p.now = func() time.Time { return now }
	// A budget as large as the tests ask.
	p.budget = newBucket(1e9, 1e9, now.Add(-time.Second))
	for i, n := range nodes {
		tg := &target{addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 10271), node: n, nodeHash: wire.NodeHash(n)}
		p.targets[tg.addr] = tg
		p.order = append(p.order, tg)
	}
	known := map[netip.AddrPort]struct{}{}
	for ap := range p.targets {
		known[ap] = struct{}{}
	}
	p.known.Store(&known)
	return p, &now
}

// TestChoosePairs checks which pairs are measured: a node of interest's
// nearest by coordinates (two zones, far apart: its own zone's), each
// pair once, none once the interest has lapsed; and every other node in a
// cluster no larger than the pairs per node.
func TestChoosePairs(t *testing.T) {
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("z%d-%02d", i%2, i))
	}
	p, now := namedProber(t, Config{Window: 10 * time.Second, PairsPerNode: 3}, names...)
	// Zone 0 and zone 1 nodes 0.3 ms apart within, 20 ms across.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		i, j := rng.IntN(len(names)), rng.IntN(len(names))
		rtt := 300 * time.Microsecond
		if i%2 != j%2 {
			rtt = 20 * time.Millisecond
		}
		p.coords.update(names[i], names[j], rtt, *now)
	}
	p.SetInterest([]string{"z0-00", "z0-02"})
	p.mu.Lock()
	p.choosePairsLocked(*now)
	plan := p.plan
	p.mu.Unlock()
	measured := map[pairKey]int{}
	for measurer, peers := range plan {
		for _, m := range peers {
			if m[:2] != measurer[:2] {
				t.Errorf("%s measures %s, in another zone", measurer, m)
			}
			measured[keyOf(measurer, m)]++
		}
	}
	if len(plan["z0-00"]) != 3 || len(plan["z0-02"]) < 2 {
		t.Errorf("plan %v: want z0-00's three nearest, and z0-02's that z0-00 did not take", plan)
	}
	for k, n := range measured {
		if n != 1 {
			t.Errorf("pair %v measured %d times", k, n)
		}
	}
	*now = now.Add(interestWindows*p.cfg.Window + time.Second)
	p.mu.Lock()
	p.choosePairsLocked(*now)
	lapsed := len(p.plan)
	p.mu.Unlock()
	if lapsed != 0 {
		t.Errorf("%d nodes measuring after the interest lapsed", lapsed)
	}

	small, snow := namedProber(t, Config{Window: 10 * time.Second, PairsPerNode: 8}, "a", "b", "c")
	small.SetInterest([]string{"b"})
	small.mu.Lock()
	small.choosePairsLocked(*snow)
	got := slices.Clone(small.plan["b"])
	small.mu.Unlock()
	if slices.Sort(got); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("in a cluster of three, b measures %v, want a and c, without coordinates", got)
	}
}

// TestPairsAnswerChecked answers a pairs request by hand: an answer from
// another address than the one asked, or to no request, is refused; a
// result from another node than the one asked for, and a train the
// prober did not ask for, are passed over; the echoes are placed back in
// time from the newest's age at the pair's rate.
func TestPairsAnswerChecked(t *testing.T) {
	p, now := namedProber(t, Config{Window: 10 * time.Second, PairsPerNode: 8, PairEchoesPerSecond: 10}, "a", "b", "c")
	p.SetInterest([]string{"a"})
	p.requestPairs(*now)
	p.mu.Lock()
	var id uint64
	var req pendingRequest
	for k, r := range p.requests {
		id, req = k, r
	}
	p.mu.Unlock()
	if len(req.peers) != 2 {
		t.Fatalf("request %+v: want a's two peers", req)
	}
	trainID := p.pairs[req.peers[0].key].trainID
	answer := func(results ...wire.PairResult) []byte {
		return testKey.Sign(wire.EncodePairs(make([]byte, wire.MaxDatagram), 400, id, 10, *now, results))
	}
	echoes := []time.Duration{time.Millisecond, wire.Lost, 2 * time.Millisecond}
	good := wire.PairResult{Index: 0, Peer: req.peers[0].hash, Echoes: echoes, NewestAge: 50 * time.Millisecond,
		Train: &wire.PairTrain{ID: trainID, Mbps: 80}}
	wrongNode := wire.PairResult{Index: 1, Peer: req.peers[0].hash, Echoes: echoes}
	unasked := wire.PairResult{Index: 1, Peer: req.peers[1].hash, Train: &wire.PairTrain{ID: trainID + 1, Mbps: 1e6}}
	// Another agent's address, one the prober knows.
	other := req.peers[1].addr
	if p.dispatch(testLogger, answer(good), other, *now) {
		t.Error("an answer from another agent than the one asked was taken")
	}
	if !p.dispatch(testLogger, answer(good, wrongNode, unasked), req.addr, *now) {
		t.Fatal("the answer was refused")
	}
	if p.dispatch(testLogger, answer(good), req.addr, *now) {
		t.Error("a second answer to one request was taken")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	first, second := p.pairs[req.peers[0].key], p.pairs[req.peers[1].key]
	if len(first.echoes) != 3 || len(first.trains) != 1 || first.trains[0].mbps != 80 {
		t.Fatalf("first pair: %d echoes, trains %+v; want 3 and the train asked for", len(first.echoes), first.trains)
	}
	if len(second.echoes) != 0 || len(second.trains) != 0 {
		t.Errorf("second pair: %d echoes, %d trains from another node's result or an unasked train; want none", len(second.echoes), len(second.trains))
	}
	newest := now.Add(-50 * time.Millisecond)
	for i, e := range first.echoes {
		if want := newest.Add(-time.Duration(2-i) * 100 * time.Millisecond); !e.sent.Equal(want) || e.lost != (echoes[i] == wire.Lost) {
			t.Errorf("echo %d: sent %s, lost %v; want %s, %v", i, e.sent, e.lost, want, echoes[i] == wire.Lost)
		}
	}
}

// TestCollectBudget holds collecting samples and pairs to the budget: at
// 4 nodes each agent's samples are collected once a window; at 5,000 the
// collections stretch to keep within a sixteenth of the budget as far as
// the agents' samples allow; pairs take at most an eighth.
func TestCollectBudget(t *testing.T) {
	cfg := Config{Key: testKey, Agents: StaticAgents(nil), Window: 15 * time.Second}
	cfg.Defaults()
	if every := CollectEvery(cfg, 4); every != cfg.Window {
		t.Errorf("4 nodes: samples collected every %s, want the window", every)
	}
	for _, n := range []int{100, 1000, 5000} {
		every := CollectEvery(cfg, n)
		cost := CollectCost(cfg, n, every)
		t.Logf("%d nodes: samples collected every %s, %.0f bytes/s (%.1f %% of the budget); train cycle %s",
			n, every, cost, 100*cost/cfg.BudgetBytesPerSecond, TrainCycle(cfg, n).Round(time.Second))
		if every < cfg.Window || every > maxCollectEvery {
			t.Errorf("%d nodes: every %s", n, every)
		}
		if every < maxCollectEvery && cost > samplesShare*cfg.BudgetBytesPerSecond {
			t.Errorf("%d nodes: %.0f bytes/s, over a sixteenth of the budget", n, cost)
		}
	}
	cfg.PairsPerNode = DefaultPairsPerNode
	measuring := int(pairsShare * cfg.BudgetBytesPerSecond / pairsCost(cfg, cfg.PairsPerNode))
	t.Logf("pairs: %.0f bytes/s per measuring node; %d nodes of interest measured at most, %d pairs", pairsCost(cfg, cfg.PairsPerNode), measuring, measuring*cfg.PairsPerNode)
	if measuring < 10 {
		t.Errorf("only %d nodes of interest within the budget", measuring)
	}
}
