package probe

import (
	"context"
	"net"
	"slices"
	"strconv"
	"time"
)

// Metrics are one node's measurements; nil is unknown.
type Metrics struct {
	// LatencyMs is the median round trip of the window's answered echoes.
	LatencyMs *float64
	// PacketLoss is the share of the window's echoes left unanswered.
	PacketLoss *float64
	// BandwidthMbps is the highest arrival rate of the trains of the last
	// half window, or the last train's when it had none; BandwidthAt when
	// it was measured (at scale, trains are rarer than windows).
	BandwidthMbps *float64
	BandwidthAt   time.Time
	// Echoes is how many echoes the window's loss and latency come from.
	Echoes int
}

// Snapshot is what the prober measured, summarised once a second.
type Snapshot struct {
	// Seq grows with every summary: a reader re-encodes only on change.
	Seq uint64
	// At is when it was summarised; it describes the Window before.
	At     time.Time
	Window time.Duration
	// Nodes holds every node an agent answered for with at least one
	// resolved echo in the window: a node found but never measured is
	// absent, never reported as healthy or as lost.
	Nodes map[string]Metrics
	// Agents is how many agents are known, named or not.
	Agents int
	// OldestEcho is the longest any reported node has gone without a
	// resolved echo; OldestBandwidth the oldest bandwidth sample's age.
	OldestEcho, OldestBandwidth time.Duration
}

// Snapshot returns the latest summary.
func (p *Prober) Snapshot() Snapshot {
	p.snapMu.RLock()
	defer p.snapMu.RUnlock()
	return p.snap
}

// summarise computes the snapshot from the window's echoes.
func (p *Prober) summarise() {
	now := p.now()
	from := now.Add(-p.cfg.Window - p.cfg.Timeout)
	snap := Snapshot{At: now, Window: p.cfg.Window, Nodes: map[string]Metrics{}}
	best := map[string]int{} // echoes behind the node's entry
	var rtts []float64
	p.mu.Lock()
	snap.Agents = len(p.targets)
	for _, t := range p.order {
		if t.node == "" {
			continue
		}
		// Forget what the window has left behind.
		i := 0
		for i < len(t.echoes) && t.echoes[i].sent.Before(from) {
			i++
		}
		t.echoes = append(t.echoes[:0], t.echoes[i:]...)
		rtts = rtts[:0]
		lost, newest := 0, time.Time{}
		for _, e := range t.echoes {
			if e.sent.Before(from) {
				continue
			}
			if e.lost {
				lost++
			} else {
				rtts = append(rtts, float64(e.rtt)/float64(time.Millisecond))
			}
			if e.sent.After(newest) {
				newest = e.sent
			}
		}
		n := lost + len(rtts)
		// Two agents answering for one node (a pod being replaced): the
		// one with more echoes behind it.
		if n == 0 || n <= best[t.node] {
			continue
		}
		best[t.node] = n
		m := Metrics{Echoes: n, PacketLoss: ptr(float64(lost) / float64(n))}
		if len(rtts) > 0 {
			slices.Sort(rtts)
			m.LatencyMs = ptr(rtts[len(rtts)/2])
		}
		if s, ok := bandwidth(t.trains, now.Add(-p.cfg.Window/2)); ok {
			m.BandwidthMbps, m.BandwidthAt = ptr(s.mbps), s.at
			snap.OldestBandwidth = max(snap.OldestBandwidth, now.Sub(s.at))
		}
		snap.OldestEcho = max(snap.OldestEcho, now.Sub(newest))
		snap.Nodes[t.node] = m
	}
	p.mu.Unlock()
	p.snapMu.Lock()
	snap.Seq = p.snap.Seq + 1
	p.snap = snap
	p.snapMu.Unlock()
}

// bandwidth is the highest rate among the trains since from, or the last
// train's when none is that recent (at scale, trains are rarer than
// windows).
func bandwidth(trains []trainSample, from time.Time) (trainSample, bool) {
	if len(trains) == 0 {
		return trainSample{}, false
	}
	best := trains[len(trains)-1]
	for _, s := range trains {
		if !s.at.Before(from) && s.mbps > best.mbps {
			best = s
		}
	}
	return best, true
}

func ptr[T any](v T) *T { return &v }

// Cost is what probing has sent and received so far, on the wire.
type Cost struct {
	EchoesSent, EchoesAnswered, Trains int64
	BytesSent, BytesReceived           int64
}

// Cost returns the counters since the prober started.
func (p *Prober) Cost() Cost {
	return Cost{
		EchoesSent: p.stats.echoesSent.Load(), EchoesAnswered: p.stats.echoesAnswered.Load(),
		Trains:    p.stats.trains.Load(),
		BytesSent: p.stats.bytesSent.Load(), BytesReceived: p.stats.bytesReceived.Load(),
	}
}

// DNSAgents finds the agents as the addresses name resolves to (a headless
// Service's), each at port: no API credentials needed.
func DNSAgents(name string, port int) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		ips, err := net.DefaultResolver.LookupHost(ctx, name)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(ips))
		for i, ip := range ips {
			out[i] = net.JoinHostPort(ip, strconv.Itoa(port))
		}
		return out, nil
	}
}

// StaticAgents finds the same agents every time.
func StaticAgents(addrs []string) func(context.Context) ([]string, error) {
	return func(context.Context) ([]string, error) { return addrs, nil }
}
