package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"net/netip"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// echoTick is how often the echo loop sends its share of echoes.
const echoTick = 10 * time.Millisecond

// echoWireBytes is what one echo costs on the wire, request and answer.
const echoWireBytes = 2 * (wire.EchoSize + wire.Overhead)

// EchoRate is the echo rate for n nodes within cfg's budget, per second,
// all nodes together: cfg's rate per node, unless echoes would take more
// than half the budget, which leaves the rest to bandwidth trains.
func EchoRate(cfg Config, n int) float64 {
	return math.Min(float64(n)*cfg.EchoesPerNodePerSecond, cfg.BudgetBytesPerSecond/2/echoWireBytes)
}

// trainWireBytes is what one train costs on the wire: its packets and a
// few reports.
func trainWireBytes(packets int) float64 {
	return float64(packets*(wire.TrainPacketSize+wire.Overhead) + 2*maxReportTries*(wire.ReportSize+wire.Overhead))
}

// TrainCycle is how long the budget takes to send each of n nodes one
// train, after echoes and collecting samples: at scale, trains are rarer
// than windows. Hellos go only to agents not yet named, once, and pairs
// only where the scheduler asks for them: both are left out.
func TrainCycle(cfg Config, n int) time.Duration {
	if n == 0 {
		return 0
	}
	left := cfg.BudgetBytesPerSecond - EchoRate(cfg, n)*echoWireBytes - CollectCost(cfg, n, CollectEvery(cfg, n))
	perWindow := float64(n) * trainsPerWindow * trainWireBytes(cfg.TrainPackets) / cfg.Window.Seconds()
	rate := math.Min(left, perWindow)
	if rate <= 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(float64(n) * trainWireBytes(cfg.TrainPackets) / rate * float64(time.Second))
}

// silentEchoes is how many echoes in a row an agent leaves unanswered,
// over at least the timeout, before it counts as gone (restarting,
// replaced) rather than behind a lossy link: the run is then not counted
// as loss, and the agents are looked up again. A link losing half its
// packets loses 16 in a row once in 65,000 runs.
const silentEchoes = 16

// echoes sends echoes round-robin over the named agents at EchoRate, and
// counts those unanswered after lossAfter as lost.
func (p *Prober) echoes(ctx context.Context) {
	tick := time.NewTicker(echoTick)
	defer tick.Stop()
	buf := make([]byte, wire.EchoSize)
	var credit float64
	next := 0
	var batch []*target
	var keys []uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := p.now()
		p.mu.Lock()
		p.expire(now)
		named := p.namedLocked()
		p.echoRate = EchoRate(p.cfg, named)
		credit = math.Min(credit+p.echoRate*echoTick.Seconds(), p.echoRate)
		batch, keys = batch[:0], keys[:0]
		// A fixed order, so every node has its turn within n/rate.
		for ; credit >= 1 && named > 0; next++ {
			t := p.order[next%len(p.order)]
			if t.node == "" {
				continue
			}
			credit--
			batch = append(batch, t)
			keys = append(keys, p.echoKey())
		}
		p.mu.Unlock()
		p.budget.spend(now, float64(len(batch))*echoWireBytes)
		for i, t := range batch {
			// The round trip starts as the echo leaves.
			p.mu.Lock()
			p.pending[keys[i]] = pendingEcho{t: t, sent: p.now(), toSilent: t.silent}
			p.mu.Unlock()
			p.send(wire.EncodeEcho(buf, keys[i], now), t.addr)
		}
		p.stats.echoesSent.Add(int64(len(batch)))
	}
}

// echoKey is a new echo's key, unguessable so that no one but the agent
// it went to can answer it, and not pending already. Called with p.mu held.
func (p *Prober) echoKey() uint64 {
	for {
		if k := rand.Uint64(); k != 0 && p.pending[k].t == nil {
			return k
		}
	}
}

// lossAfter is how long an echo stays unanswered, at least, before it
// counts as lost: the timeout, and as long again for a late answer. An
// answer the agent sent late (its process or the prober's held off the
// CPU on a busy node) is a delay, not a loss; the agent's stamps take the
// delay out of its round trip, and a delay the network added shows as a
// round trip at the timeout. An agent that is behind waits longer
// (late.go).
func lossAfter(cfg Config) time.Duration { return 2 * cfg.Timeout }

// expire counts echoes pending past the timeout towards their agent's
// silence, and those pending past their agent's deadline as lost, unless
// their agent has gone silent. Called with p.mu held.
func (p *Prober) expire(now time.Time) {
	for key, pe := range p.pending {
		age := now.Sub(pe.sent)
		if age > p.cfg.Timeout && !pe.overdue {
			pe.overdue = true
			p.pending[key] = pe
			p.overdueEcho(now, pe.t)
			// Its agent may have gone silent with it.
			pe = p.pending[key]
		}
		if age <= p.lossDeadline(pe.t, now) {
			continue
		}
		delete(p.pending, key)
		// An echo sent to a silent agent is lost to its absence, even if
		// the agent is back by now.
		if t := pe.t; !t.silent && !pe.toSilent {
			t.echoes = append(t.echoes, echo{sent: pe.sent, lost: true})
			p.lost[key] = lostEcho{t: t, sent: pe.sent}
		}
	}
	p.forgetLost(now)
}

// overdueEcho counts one more of t's echoes unanswered after the timeout,
// and says t is silent once the run is long enough. Called with p.mu held.
func (p *Prober) overdueEcho(now time.Time, t *target) {
	t.lostRun++
	if t.silent || t.lostRun < silentEchoes || now.Sub(t.lastAnswer) < p.cfg.Timeout {
		return
	}
	t.silent = true
	// The run so far was the agent's absence too: the echoes already
	// counted lost, and those still pending.
	kept := t.echoes[:0]
	for _, e := range t.echoes {
		if !e.lost || e.sent.Before(t.lastAnswer) {
			kept = append(kept, e)
		}
	}
	t.echoes = kept
	for key, pe := range p.pending {
		if pe.t == t && !pe.toSilent {
			pe.toSilent = true
			p.pending[key] = pe
		}
	}
	select {
	case p.rediscover <- struct{}{}:
	default:
	}
}

// maxReportTries bounds how often a train's report is asked for.
const maxReportTries = 10

// trainsPerWindow is how many trains an agent gets at most per window,
// budget allowing. The agent times a train by the kernel's receive
// stamps, so its own scheduling does not skew it, and the prober hands a
// train to the kernel in one call, so its own scheduling rarely does: a
// train whose sending was interrupted arrives with a gap, and is seen as
// sent slowly, not as a slow link.
const trainsPerWindow = 4

// maxTrainSamples bounds the train samples kept per agent.
const maxTrainSamples = 16

// trainSample is what one train said of a node's link.
type trainSample struct {
	at time.Time
	// mbps is the rate the train arrived at, at most the rate it was sent
	// at; atLeast says the train arrived as fast as it was sent, so the
	// link may be faster: mbps is then only a lower bound.
	mbps    float64
	atLeast bool
}

// minTrainWait is the least the train loop sleeps while the budget is
// short: echoes spend it too, so the wait it names is often not enough.
const minTrainWait = 5 * time.Millisecond

// trains measures bandwidth: one train at a time, to the named agent whose
// last train is oldest, at most trainsPerWindow per window per agent, with
// what the budget leaves after echoes and hellos.
func (p *Prober) trains(ctx context.Context) {
	cost := trainWireBytes(p.cfg.TrainPackets)
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for ctx.Err() == nil {
		// Wait for the budget first: at scale it, not the nodes, paces the
		// trains, and looking for the next node costs a pass over them all.
		now := p.now()
		if wait := p.budget.until(now, cost); wait > 0 {
			if !sleep(max(wait, minTrainWait)) {
				return
			}
			continue
		}
		p.mu.Lock()
		var pick *target
		for _, t := range p.order {
			if t.node == "" || t.silent || now.Sub(t.trainTried) < p.cfg.Window/trainsPerWindow {
				continue
			}
			if pick == nil || t.trainTried.Before(pick.trainTried) {
				pick = t
			}
		}
		p.mu.Unlock()
		if pick == nil {
			if !sleep(100 * time.Millisecond) {
				return
			}
			continue
		}
		if !p.budget.trySpend(now, cost) {
			continue
		}
		// Unguessable, so nothing but the agent can report on the train.
		id := wire.NewID()
		p.mu.Lock()
		pick.trainTried = now
		addr, node := pick.addr, pick.node
		p.mu.Unlock()
		s, ok := p.train(ctx, addr, id)
		if !ok {
			continue
		}
		p.mu.Lock()
		// The target may have been renamed meanwhile.
		if pick.node == node {
			pick.trains = append(pick.trains, s)
			if len(pick.trains) > maxTrainSamples {
				pick.trains = pick.trains[1:]
			}
		}
		p.mu.Unlock()
	}
}

// train sends train id to addr and asks for its report until the count
// stops growing, and returns what it says of the link.
func (p *Prober) train(ctx context.Context, addr netip.AddrPort, id uint64) (trainSample, bool) {
	p.mu.Lock()
	p.inflight.addr, p.inflight.id = addr, id
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inflight.id = 0
		p.mu.Unlock()
	}()
	// Reports of an earlier train, queued after it ended.
	for len(p.reports) > 0 {
		<-p.reports
	}
	sentFirst, sentLast, sent := p.sendTrain(addr, id)
	p.stats.trains.Add(1)
	var got wire.TrainCount
	seen := false
	buf := make([]byte, wire.ReportSize)
	for range maxReportTries {
		p.send(wire.EncodeReport(buf, id, nil, p.now()), addr)
		timer := time.NewTimer(p.cfg.Timeout / 4)
		var ans *wire.TrainCount
		select {
		case <-ctx.Done():
			timer.Stop()
			return trainSample{}, false
		case <-timer.C:
		case c := <-p.reports:
			timer.Stop()
			ans = &c
		}
		if ans == nil {
			continue
		}
		// More than was sent: not this train's count.
		if !wire.TrainHeld(*ans, sent) {
			return trainSample{}, false
		}
		// Settled: nothing arrived since the last report.
		if seen && ans.Packets == got.Packets {
			break
		}
		got, seen = *ans, true
		if int(got.Packets) == sent {
			break
		}
		time.Sleep(p.cfg.Timeout / 10)
	}
	mbps, atLeast, ok := wire.TrainRate(got, sentFirst, sentLast, sent)
	if !ok {
		return trainSample{}, false
	}
	s := trainSample{at: p.now(), mbps: mbps, atLeast: atLeast}
	return s, true
}
