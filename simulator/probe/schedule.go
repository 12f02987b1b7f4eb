package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"time"
)

// echoTick is how often the echo loop sends its share of echoes.
const echoTick = 10 * time.Millisecond

// echoWireBytes is what one echo costs on the wire, request and answer.
const echoWireBytes = 2 * (EchoSize + wireOverhead)

// EchoRate is the echo rate for n nodes within cfg's budget, per second,
// all nodes together: cfg's rate per node, unless echoes would take more
// than half the budget, which leaves the rest to bandwidth trains.
func EchoRate(cfg Config, n int) float64 {
	return math.Min(float64(n)*cfg.EchoesPerNodePerSecond, cfg.BudgetBytesPerSecond/2/echoWireBytes)
}

// trainWireBytes is what one train costs on the wire: its packets and a
// few reports.
func trainWireBytes(packets int) float64 {
	return float64(packets*(TrainPacketSize+wireOverhead) + 2*maxReportTries*(ReportSize+wireOverhead))
}

// echoes sends echoes round-robin over the named agents at EchoRate, and
// counts those unanswered after the timeout as lost.
func (p *Prober) echoes(ctx context.Context) {
	tick := time.NewTicker(echoTick)
	defer tick.Stop()
	buf := make([]byte, EchoSize)
	var credit float64
	next := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := p.now()
		p.mu.Lock()
		p.expire(now)
		named := 0
		for _, t := range p.order {
			if t.node != "" {
				named++
			}
		}
		p.echoRate = EchoRate(p.cfg, named)
		credit = math.Min(credit+p.echoRate*echoTick.Seconds(), p.echoRate)
		var batch []*target
		var keys []uint64
		// A fixed order, so every node has its turn within n/rate.
		for ; credit >= 1 && named > 0; next++ {
			t := p.order[next%len(p.order)]
			if t.node == "" {
				continue
			}
			credit--
			key := p.echoKey()
			p.pending[key] = pendingEcho{t: t, sent: now}
			batch = append(batch, t)
			keys = append(keys, key)
		}
		p.mu.Unlock()
		p.budget.spend(now, float64(len(batch))*echoWireBytes)
		for i, t := range batch {
			p.send(encodeEcho(buf, keys[i]), t.addr)
		}
		p.stats.echoesSent.Add(int64(len(batch)))
	}
}

// echoKey is a new echo's key, unguessable so that no one but the agent
// it went to can answer it, and not pending already. Called with p.mu held.
func (p *Prober) echoKey() uint64 {
	for {
		if k := rand.Uint64(); p.pending[k].t == nil {
			return k
		}
	}
}

// expire counts echoes pending past the timeout as lost. Called with p.mu
// held.
func (p *Prober) expire(now time.Time) {
	for key, pe := range p.pending {
		if now.Sub(pe.sent) > p.cfg.Timeout {
			delete(p.pending, key)
			pe.t.echoes = append(pe.t.echoes, echo{sent: pe.sent, lost: true})
		}
	}
}

// maxReportTries bounds how often a train's report is asked for.
const maxReportTries = 10

// trainsPerWindow is how many trains an agent gets at most per window,
// budget allowing. The agent times a train by the kernel's receive
// stamps, so its own scheduling does not skew it; the sender's can: a
// train whose sending was interrupted arrives with a gap and comes out
// slow, never fast. So a node's bandwidth is the highest rate of the
// trains of the last half window: two of them, so one busy moment of the
// simulator's host does not pass for a slow link, and a link that has
// really slowed shows within half a window.
const trainsPerWindow = 4

// trains measures bandwidth: one train at a time, to the named agent whose
// last train is oldest, at most trainsPerWindow per window per agent, with
// what the budget leaves after echoes and hellos.
func (p *Prober) trains(ctx context.Context) {
	cost := trainWireBytes(p.cfg.TrainPackets)
	for ctx.Err() == nil {
		now := p.now()
		p.mu.Lock()
		var pick *target
		for _, t := range p.order {
			if t.node == "" || now.Sub(t.trainTried) < p.cfg.Window/trainsPerWindow {
				continue
			}
			if pick == nil || t.trainTried.Before(pick.trainTried) {
				pick = t
			}
		}
		p.mu.Unlock()
		if pick == nil || !p.budget.trySpend(now, cost) {
			wait := 100 * time.Millisecond
			if pick != nil {
				wait = max(p.budget.until(now, cost), time.Millisecond)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			continue
		}
		// Unguessable, so nothing but the agent can report on the train.
		id := rand.Uint64()
		p.mu.Lock()
		pick.trainTried = now
		p.mu.Unlock()
		if mbps, ok := p.train(ctx, pick.addr, id); ok {
			p.mu.Lock()
			pick.trains = append(pick.trains, trainSample{at: p.now(), mbps: mbps})
			if len(pick.trains) > maxTrainSamples {
				pick.trains = pick.trains[1:]
			}
			p.mu.Unlock()
		}
	}
}

// train sends train id to addr and asks for its report until the count
// stops growing, and returns the rate it arrived at.
func (p *Prober) train(ctx context.Context, addr *net.UDPAddr, id uint64) (float64, bool) {
	buf := make([]byte, TrainPacketSize)
	for i := range p.cfg.TrainPackets {
		p.send(encodeTrain(buf, id, uint32(i)), addr)
	}
	p.stats.trains.Add(1)
	var got trainCount
	seen := false
	for range maxReportTries {
		p.send(encodeReport(buf, id, nil), addr)
		timer := time.NewTimer(p.cfg.Timeout / 4)
		var ans *reportAnswer
	wait:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return 0, false
			case <-timer.C:
				break wait
			case r := <-p.reports:
				if r.id == id {
					ans = &r
					timer.Stop()
					break wait
				}
			}
		}
		if ans == nil {
			continue
		}
		// Settled: nothing arrived since the last report.
		if seen && ans.c.Packets == got.Packets {
			break
		}
		got, seen = ans.c, true
		if int(got.Packets) == p.cfg.TrainPackets {
			break
		}
		time.Sleep(p.cfg.Timeout / 10)
	}
	return got.Mbps()
}
