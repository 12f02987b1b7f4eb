package probe

import (
	"net/netip"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// drainingAgent is one agent on a fake clock: echoes reach it a fixed
// network delay after they leave, wait in its socket in arrival order,
// and are answered as fast as it runs; while it is starved it answers at
// most drainRate a second. Its answers reach the prober the same delay
// after they leave.
type drainingAgent struct {
	hash      uint64
	delay     time.Duration
	drainRate float64
	starvedAt time.Time
	starvedTo time.Time
	// queue holds the echoes waiting in the agent's socket.
	queue []queuedEcho
	// credit is how many answers the starved agent may still give now.
	credit float64
	last   time.Time
	// inFlight are answers on their way back, oldest first.
	inFlight []flyingAnswer
}

type queuedEcho struct {
	key     uint64
	arrived time.Time
}

type flyingAnswer struct {
	key    uint64
	at     time.Time
	stamps wire.EchoStamps
}

func (a *drainingAgent) starved(now time.Time) bool {
	return !now.Before(a.starvedAt) && now.Before(a.starvedTo)
}

// step moves the agent on to now: it answers what it can of its queue.
func (a *drainingAgent) step(now time.Time) {
	if a.starved(now) {
		a.credit += a.drainRate * now.Sub(a.last).Seconds()
	} else {
		a.credit = float64(len(a.queue))
	}
	a.last = now
	for len(a.queue) > 0 && a.credit >= 1 && !a.queue[0].arrived.After(now) {
		q := a.queue[0]
		a.queue = a.queue[1:]
		a.credit--
		a.inFlight = append(a.inFlight, flyingAnswer{key: q.key, at: now.Add(a.delay),
			stamps: wire.EchoStamps{Received: q.arrived, Sent: now, NodeHash: a.hash}})
	}
}

// lateRun drives a prober and one agent on a fake clock for run, sending
// rate echoes a second, summarising once a second, and returns the
// highest loss served for the node, the snapshot count and how many
// echoes were answered late.
func lateRun(t *testing.T, agent *drainingAgent, rate float64, run time.Duration) (worst float64, summaries int, late int64) {
	t.Helper()
	const window = 5 * time.Second
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents(nil), Window: window, Timeout: time.Second, EchoesPerNodePerSecond: rate})
	if err != nil {
		t.Fatal(err)
	}
	defer p.conn.Close()
	now := time.Unix(50_000, 0)
	p.now = func() time.Time { return now }
	addr := netip.MustParseAddrPort("127.0.0.1:10271")
	tg := &target{addr: addr, node: "n", nodeHash: agent.hash}
	p.targets[addr], p.order = tg, []*target{tg}
	agent.last = now
	const tick = time.Millisecond
	every := time.Duration(float64(time.Second) / rate)
	nextEcho, nextSummary := now, now.Add(time.Second)
	end := now.Add(run)
	for ; now.Before(end); now = now.Add(tick) {
		if !now.Before(nextEcho) {
			nextEcho = nextEcho.Add(every)
			p.mu.Lock()
			key := p.echoKey()
			p.pending[key] = pendingEcho{t: tg, sent: now}
			p.mu.Unlock()
			agent.queue = append(agent.queue, queuedEcho{key: key, arrived: now.Add(agent.delay)})
		}
		agent.step(now)
		for len(agent.inFlight) > 0 && !agent.inFlight[0].at.After(now) {
			a := agent.inFlight[0]
			agent.inFlight = agent.inFlight[1:]
			p.answered(a.key, a.at, addr, a.stamps)
		}
		if now.Sub(time.Unix(50_000, 0))%(10*time.Millisecond) == 0 {
			p.mu.Lock()
			p.expire(now)
			p.mu.Unlock()
		}
		if !now.Before(nextSummary) {
			nextSummary = nextSummary.Add(time.Second)
			p.summarise()
			summaries++
			if m, ok := p.Snapshot().Nodes["n"]; ok && m.PacketLoss != nil {
				worst = max(worst, m.PacketLoss.Value)
			}
		}
	}
	return worst, summaries, p.Cost().EchoesLate
}

// TestSlowDrainIsNotLoss starves an agent for 3 s, during which it still
// answers, but at 25 echoes a second of the 100 it is sent: its backlog
// grows past twice the timeout, and every echo is answered in the end,
// each within a fraction of a millisecond of network. No loss may be
// served for its node. The run is on a fake clock, so it says the same
// on any machine.
func TestSlowDrainIsNotLoss(t *testing.T) {
	start := time.Unix(50_000, 0)
	for _, tc := range []struct {
		name          string
		drain         float64
		starved       time.Duration
		starvedAfter  time.Duration
		wantLateSome  bool
		maxServedLoss float64
	}{
		{name: "healthy", drain: 0, starved: 0, starvedAfter: time.Hour, maxServedLoss: 0},
		{name: "stopped 1.5 s", drain: 0, starved: 1500 * time.Millisecond, starvedAfter: 8 * time.Second, wantLateSome: true, maxServedLoss: 0.005},
		{name: "drains 25 a second for 3 s", drain: 25, starved: 3 * time.Second, starvedAfter: 8 * time.Second, wantLateSome: true, maxServedLoss: 0.005},
		{name: "drains 30 a second for 2.9 s", drain: 30, starved: 2900 * time.Millisecond, starvedAfter: 8 * time.Second, wantLateSome: true, maxServedLoss: 0.005},
		{name: "drains 10 a second for 4 s", drain: 10, starved: 4 * time.Second, starvedAfter: 8 * time.Second, wantLateSome: true, maxServedLoss: 0.005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &drainingAgent{hash: wire.NodeHash("n"), delay: 100 * time.Microsecond, drainRate: tc.drain,
				starvedAt: start.Add(tc.starvedAfter), starvedTo: start.Add(tc.starvedAfter + tc.starved)}
			worst, summaries, late := lateRun(t, agent, 100, 25*time.Second)
			if summaries < 20 {
				t.Fatalf("only %d summaries", summaries)
			}
			if (late > 0) != tc.wantLateSome {
				t.Errorf("%d echoes answered late, want some: %t", late, tc.wantLateSome)
			}
			if worst > tc.maxServedLoss {
				t.Errorf("served loss up to %.4f for an agent that answered every echo, want at most %.4f", worst, tc.maxServedLoss)
			}
		})
	}
}
