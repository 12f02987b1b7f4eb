package probe

import (
	"cmp"
	"context"
	"math"
	"net"
	"slices"
	"strconv"
	"time"

	"k8s.io/klog/v2"
)

// Estimate is one measured metric of a node: its value, a 95 % interval,
// how many samples are behind it and when the newest was taken.
type Estimate struct {
	Value float64
	// Low and High bound the interval; High is +Inf when Value is only a
	// lower bound (AtLeast).
	Low, High float64
	// AtLeast says the metric is at least Value, and could not be
	// resolved above it: a bandwidth whose trains arrived as fast as this
	// host sent them.
	AtLeast bool
	Samples int
	At      time.Time
}

// Metrics are one node's measurements; nil is unknown.
type Metrics struct {
	// LatencyMs is the median round trip of the window's answered echoes,
	// less the time each waited in the agent, in milliseconds.
	LatencyMs *Estimate
	// PacketLoss is the share of the window's echoes left unanswered for
	// twice the timeout; the window it covers ends that long before the
	// summary, so that every echo in it is decided.
	PacketLoss *Estimate
	// BandwidthMbps is the highest rate of the node's trains of the last
	// half window, or its last train's, in Mbit/s; nil when it has no
	// train younger than Config.BandwidthMaxAge.
	BandwidthMbps *Estimate
	// LinkUseMbps is the traffic already on the node's link, the larger of
	// what it received and sent, from the node's byte counters over the
	// last window, in Mbit/s; nil when its agent reads no counters, or its
	// last reading is older than the bandwidth's max age. It is served
	// beside the score, and takes no part in it.
	LinkUseMbps *Estimate
	// Echoes is how many echoes the window's loss comes from.
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
	// resolved echo; OldestBandwidth the oldest bandwidth served.
	OldestEcho, OldestBandwidth time.Duration
	// BandwidthMaxAge is the age past which a bandwidth is not served.
	BandwidthMaxAge time.Duration
	// Coordinates are the named nodes' network coordinates, those that
	// samples updated (coords.go).
	Coordinates map[string]NodeCoordinate
	// Pairs are the pairs measured directly within the window, sorted by
	// From then To (pairs.go).
	Pairs []PairMetrics
}

// Snapshot returns the latest summary.
func (p *Prober) Snapshot() Snapshot {
	p.snapMu.RLock()
	defer p.snapMu.RUnlock()
	return p.snap
}

// summarise computes the snapshot from the window's echoes and the fresh
// trains, one metric at a time.
func (p *Prober) summarise() {
	now := p.now()
	// Loss is judged on the window's echoes sent before decided: each of
	// those was answered or counted lost by now. Taking the later ones
	// too would count their answers and not yet their losses.
	decided := now.Add(-lossAfter(p.cfg))
	from := decided.Add(-p.cfg.Window)
	snap := Snapshot{At: now, Window: p.cfg.Window, Nodes: map[string]Metrics{}}
	newest := map[string]time.Time{} // the last answer behind the node's entry
	p.mu.Lock()
	snap.Agents = len(p.targets)
	snap.BandwidthMaxAge = max(p.cfg.BandwidthMaxAge, 2*TrainCycle(p.cfg, p.namedLocked()))
	for _, t := range p.order {
		if t.node == "" {
			continue
		}
		t.forgetEchoes(from)
		m, last, ok := echoMetrics(t.echoes, decided)
		if !ok {
			continue
		}
		// Two agents answering for one node (a pod being replaced): the
		// one that answered last.
		if prev, ok := newest[t.node]; ok && !last.After(prev) {
			continue
		}
		newest[t.node] = last
		if e, ok := bandwidth(t.trains, now, p.cfg.Window, snap.BandwidthMaxAge); ok {
			m.BandwidthMbps = &e
			snap.OldestBandwidth = max(snap.OldestBandwidth, now.Sub(e.At))
		}
		if e, ok := linkUse(t.link, now, snap.BandwidthMaxAge); ok {
			m.LinkUseMbps = &e
		}
		if !last.IsZero() {
			snap.OldestEcho = max(snap.OldestEcho, now.Sub(last))
		}
		snap.Nodes[t.node] = m
	}
	snap.Coordinates = p.coordinatesLocked()
	snap.Pairs = p.summarisePairsLocked(now, snap.BandwidthMaxAge)
	p.mu.Unlock()
	p.logLate(now)
	p.snapMu.Lock()
	snap.Seq = p.snap.Seq + 1
	p.snap = snap
	p.snapMu.Unlock()
}

// coordinatesLocked are the named nodes' coordinates. Called with p.mu
// held.
func (p *Prober) coordinatesLocked() map[string]NodeCoordinate {
	all := p.coords.snapshot()
	out := make(map[string]NodeCoordinate, len(all))
	for _, t := range p.order {
		if c, ok := all[t.node]; ok && t.node != "" {
			out[t.node] = c
		}
	}
	return out
}

// namedLocked is how many targets are named. Called with p.mu held.
func (p *Prober) namedLocked() int {
	named := 0
	for _, t := range p.order {
		if t.node != "" {
			named++
		}
	}
	return named
}

// forgetEchoes drops the echoes sent before from: the window has left
// them behind.
func (t *target) forgetEchoes(from time.Time) {
	i := 0
	for i < len(t.echoes) && t.echoes[i].sent.Before(from) {
		i++
	}
	t.echoes = append(t.echoes[:0], t.echoes[i:]...)
}

// echoMetrics summarises a window's echoes, oldest first: their loss over
// those sent by decided, and their latency. last is when the newest
// answered echo was sent; ok is false when there is nothing to summarise.
func echoMetrics(echoes []echo, decided time.Time) (m Metrics, last time.Time, ok bool) {
	loss, judged := packetLoss(echoes, decided)
	latency, last := latencyOf(echoes)
	if judged == 0 && latency == nil {
		return Metrics{}, time.Time{}, false
	}
	return Metrics{Echoes: judged, PacketLoss: loss, LatencyMs: latency}, last, true
}

// packetLoss is the share of the echoes sent by decided that were lost,
// with its Wilson interval, and how many those are; nil when none are.
func packetLoss(echoes []echo, decided time.Time) (*Estimate, int) {
	judged, lost := 0, 0
	var lastJudged time.Time
	for _, e := range echoes {
		if e.sent.After(decided) {
			continue
		}
		judged++
		lastJudged = latest(lastJudged, e.sent)
		if e.lost {
			lost++
		}
	}
	if judged == 0 {
		return nil, 0
	}
	lo, hi := wilson(lost, judged, z95)
	return &Estimate{Value: float64(lost) / float64(judged), Low: lo, High: hi, Samples: judged, At: lastJudged}, judged
}

// latencyOf is the median round trip of the answered echoes, in ms, with
// the order statistics that bound it, never narrower than what one
// sample resolves; and when the newest of them was sent. Nil when none
// was answered.
func latencyOf(echoes []echo) (*Estimate, time.Time) {
	var rtts []float64
	var last time.Time
	for _, e := range echoes {
		if !e.lost {
			rtts = append(rtts, float64(e.rtt)/float64(time.Millisecond))
			last = latest(last, e.sent)
		}
	}
	if len(rtts) == 0 {
		return nil, time.Time{}
	}
	slices.Sort(rtts)
	med, lo, hi := medianInterval(rtts, z95)
	res := math.Max(latencyResolutionMs, latencyResolution*med)
	return &Estimate{Value: med, Low: math.Max(0, math.Min(lo, med-res)), High: math.Max(hi, med+res), Samples: len(rtts), At: last}, last
}

// logLate says, at most once a window, how many echoes came back after
// the timeout: a busy node's agent or this prober is slow to answer.
func (p *Prober) logLate(now time.Time) {
	late := p.stats.echoesLate.Load()
	if late == p.lateLogged || now.Sub(p.lateLoggedAt) < p.cfg.Window {
		return
	}
	klog.Background().Info("Echoes were answered after the timeout; counted late, not lost", "late", late-p.lateLogged, "timeout", p.cfg.Timeout, "lostAfter", lossAfter(p.cfg))
	p.lateLogged, p.lateLoggedAt = late, now
}

// What one sample can resolve, at least: an interval is never narrower
// than this about its value, however many samples agree. A train's rate
// is timed to within a few per cent by the agent's kernel, and spread by
// the shaper's token bucket; a round trip is timed to within tens of
// microseconds by both kernels.
const (
	bandwidthResolution = 0.10
	latencyResolution   = 0.05
	latencyResolutionMs = 0.05
)

// slowedBelow is the share below the fastest measured train under which
// a train counts as slowed by other traffic rather than read at the
// link's rate: a train the link alone paced arrives within a per cent or
// two of the link's rate (a shaped link's trains on kind spread by 0.5 %,
// probe-accuracy.md), while traffic sharing the link, or a pause in
// sending, only ever slows a train down.
const slowedBelow = 0.2

// bandwidth summarises a node's trains at now: those of the last half
// window if there are any, else the last one, if it is younger than
// maxAge; none is no bandwidth.
//
// When the fastest of them arrived as fast as it was sent, the link is at
// least that fast and no faster rate can be read: the bandwidth is a
// lower bound, the highest since the last train the link slowed down
// (taking every such train younger than maxAge, so that a steady link's
// bound does not wander with how fast this host sent its last trains),
// rounded down to two significant digits, with no upper end.
//
// Otherwise the trains the link paced are those within slowedBelow of the
// fastest: the bandwidth is their median, and its interval the
// distribution-free 95 % interval of that median (the order statistics
// whose ranks bound it, medianInterval; with few trains, their range), at
// least bandwidthResolution wide on either side. A train slowed by other
// traffic is no reading of the link's rate, and widens nothing.
func bandwidth(trains []trainSample, now time.Time, window, maxAge time.Duration) (Estimate, bool) {
	if len(trains) == 0 || trains[len(trains)-1].at.Before(now.Add(-maxAge)) {
		return Estimate{}, false
	}
	from := len(trains) - 1
	for from > 0 && !trains[from-1].at.Before(now.Add(-window/2)) {
		from--
	}
	recent := trains[from:]
	fastest := slices.MaxFunc(recent, func(a, b trainSample) int { return cmp.Compare(a.mbps, b.mbps) })
	if fastest.atLeast {
		if !slices.ContainsFunc(recent, func(s trainSample) bool { return !s.atLeast }) {
			for from > 0 && trains[from-1].atLeast && !trains[from-1].at.Before(now.Add(-maxAge)) {
				from--
			}
			recent = trains[from:]
		}
		e := Estimate{AtLeast: true, High: math.Inf(1)}
		for _, s := range recent {
			if s.atLeast {
				e.Value = math.Max(e.Value, s.mbps)
				e.Samples++
			}
			e.At = s.at
		}
		e.Value = roundDown2(e.Value)
		e.Low = e.Value
		return e, true
	}
	var paced []float64
	var e Estimate
	for _, s := range recent {
		if !s.atLeast && s.mbps >= (1-slowedBelow)*fastest.mbps {
			paced = append(paced, s.mbps)
		}
		e.At = s.at
	}
	slices.Sort(paced)
	e.Samples = len(paced)
	e.Value, e.Low, e.High = medianInterval(paced, z95)
	e.Low = math.Min(e.Low, (1-bandwidthResolution)*e.Value)
	e.High = math.Max(e.High, (1+bandwidthResolution)*e.Value)
	return e, true
}

func ptr[T any](v T) *T { return &v }

// Cost is what probing has sent and received so far, on the wire.
type Cost struct {
	EchoesSent, EchoesAnswered, Trains int64
	// EchoesLate counts the echoes answered after the timeout: late, not
	// lost.
	EchoesLate               int64
	BytesSent, BytesReceived int64
	// Refused counts datagrams the prober received and threw away: not an
	// answer to anything it asked.
	Refused int64
	// Samples counts the agents' round trips to each other that moved a
	// coordinate; SamplesPassed those lost, or naming no one node.
	Samples, SamplesPassed int64
}

// Cost returns the counters since the prober started.
func (p *Prober) Cost() Cost {
	return Cost{
		EchoesSent: p.stats.echoesSent.Load(), EchoesAnswered: p.stats.echoesAnswered.Load(),
		EchoesLate: p.stats.echoesLate.Load(), Trains: p.stats.trains.Load(),
		BytesSent: p.stats.bytesSent.Load(), BytesReceived: p.stats.bytesReceived.Load(),
		Refused: p.stats.refused.Load(),
		Samples: p.stats.samples.Load(), SamplesPassed: p.stats.samplesPassed.Load(),
	}
}

// DNSAgents finds the agents as the addresses name resolves to (a headless
// Service's), each at port: no API credentials needed. A name with a
// trailing dot is absolute, and resolved as it is; any other goes through
// the pod's search list, which holds the cluster's own domain.
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

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
