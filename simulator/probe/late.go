package probe

import (
	"net/netip"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Late is not lost. An agent held off the CPU (a busy node, a small CPU
// request) still answers, later, every echo it was sent: its socket holds
// them. Each answer says how long the echo waited in the agent (its
// residence), so the prober knows both the echo's round trip on the
// network and how far behind the agent is. Two rules follow:
//
//   - An echo sent to an agent that is behind is not lost until it has
//     had the agent's backlog on top of the usual deadline: the deadline is
//     lossAfter plus the residence of the agent's latest answer, seen
//     within a window.
//   - An echo counted lost is remembered for a window. An answer to it
//     that still comes, whose round trip on the network (arrival less
//     sending less residence) is within the timeout, makes it late instead
//     of lost: the network delivered it in time.
//
// A link that drops echoes gets no answer to them, ever, and they stay
// lost; a link that delays them past the timeout shows a round trip past
// the timeout, and they stay lost.

// lostEcho is an echo counted lost, kept in case its answer still comes.
type lostEcho struct {
	t    *target
	sent time.Time
}

// networkRTT is an echo's round trip on the network: from sending to the
// answer's arrival, less the time the echo waited in the agent, never
// negative.
func networkRTT(sent, at time.Time, stamps wire.EchoStamps) time.Duration {
	rtt := at.Sub(sent)
	if res := stamps.Residence(); res < rtt {
		rtt -= res
	}
	return max(rtt, 0)
}

// noteResidence records that t's agent answered at, after an echo waited
// res in it: how far behind the agent is, at most a window.
func (t *target) noteResidence(at time.Time, res, window time.Duration) {
	if at.Before(t.behindAt) {
		return
	}
	t.behind, t.behindAt = min(res, window), at
}

// lossDeadline is how long an echo to t stays pending at now before it is
// lost: lossAfter, plus how far behind t's agent was at its latest
// answer, if that was within a window. Called with p.mu held.
func (p *Prober) lossDeadline(t *target, now time.Time) time.Duration {
	d := lossAfter(p.cfg)
	if now.Sub(t.behindAt) <= p.cfg.Window {
		d += t.behind
	}
	return d
}

// answeredAfterLoss takes the answer to an echo already counted lost, if
// it came from that echo's agent and its round trip on the network was
// within the timeout: the echo is then late, not lost. Called with p.mu
// held.
func (p *Prober) answeredAfterLoss(key uint64, at time.Time, from netip.AddrPort, stamps wire.EchoStamps) bool {
	le, ok := p.lost[key]
	if !ok || le.t.addr != from || stamps.NodeHash != le.t.nodeHash {
		return false
	}
	delete(p.lost, key)
	rtt := networkRTT(le.sent, at, stamps)
	if rtt > p.cfg.Timeout {
		return false
	}
	t := le.t
	for i := len(t.echoes) - 1; i >= 0; i-- {
		if e := &t.echoes[i]; e.lost && e.sent.Equal(le.sent) {
			e.lost, e.rtt = false, rtt
			break
		}
	}
	t.noteResidence(at, stamps.Residence(), p.cfg.Window)
	t.lastAnswer, t.lostRun, t.silent = latest(t.lastAnswer, at), 0, false
	p.stats.echoesAnswered.Add(1)
	p.stats.echoesLate.Add(1)
	return true
}

// forgetLost drops, once a second, the lost echoes older than a window
// past their deadline: their window is summarised. Called with p.mu held.
func (p *Prober) forgetLost(now time.Time) {
	if now.Sub(p.lostForgotten) < time.Second {
		return
	}
	p.lostForgotten = now
	oldest := now.Add(-p.cfg.Window - lossAfter(p.cfg) - p.cfg.Window)
	for key, le := range p.lost {
		if le.sent.Before(oldest) {
			delete(p.lost, key)
		}
	}
}
