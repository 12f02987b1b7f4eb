// Package probe is the prober: it measures each node's network from the
// simulator through the agents on every node (package agent), in the
// protocol of package wire, within a byte budget, and turns the answers
// into latency, packet loss and bandwidth per node, each with how many
// samples are behind it, an interval and its age.
package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/wire"
)

// helloTick is how often agents are asked for their node: once a second
// while unnamed, once a window after, so a name is checked again.
const helloTick = 100 * time.Millisecond

// Prober probes every agent it finds and summarises what it measured.
type Prober struct {
	cfg  Config
	conn *net.UDPConn
	now  func() time.Time
	// stamped says conn's datagrams carry the kernel's receive time.
	stamped bool

	// known is the targets' addresses, replaced whole by discover: an
	// answer from any other address is refused before p.mu is taken.
	known atomic.Pointer[map[netip.AddrPort]struct{}]

	mu      sync.Mutex
	targets map[netip.AddrPort]*target
	// order is the targets sorted by address: the echoes' round.
	order []*target
	// pending are the echoes sent and not yet answered, by key, until
	// they are lost (expire).
	pending map[uint64]pendingEcho
	// lost are the echoes counted lost within the last window, by key: an
	// answer that comes later still, whose round trip on the network was
	// within the timeout, makes one late instead (late.go).
	lost map[uint64]lostEcho
	// lostForgotten is when lost was last pruned.
	lostForgotten time.Time
	// inflight is the train being measured: only its target's reports on
	// it reach reports.
	inflight struct {
		addr netip.AddrPort
		id   uint64
	}
	reports chan wire.TrainCount
	// rediscover asks for the agents again before the window is out: a
	// target fell silent, so its agent may have moved.
	rediscover chan struct{}
	// echoRate is the echo rate in force, per second, all nodes together.
	echoRate float64
	budget   *bucket

	// coords are the nodes' network coordinates; requests the samples and
	// pairs requests awaiting answers, by id; peerNames maps PeerHash to
	// the named nodes, nil when a name changed since (collect.go).
	coords    *coordinates
	requests  map[uint64]pendingRequest
	peerNames map[uint32]string
	// interest are the nodes of interest, until when; plan the peers each
	// measuring node measures, chosen at pairsChosen; pairs what was
	// measured of each pair; pairsSent when each measuring node's list was
	// last renewed (pairs.go).
	interest    map[string]time.Time
	plan        map[string][]string
	pairs       map[pairKey]*pairState
	pairsChosen time.Time
	pairsSent   map[string]time.Time

	snapMu sync.RWMutex
	snap   Snapshot
	// lateLogged is how many late echoes were logged, and when.
	lateLogged   int64
	lateLoggedAt time.Time

	stats counters
}

type pendingEcho struct {
	t    *target
	sent time.Time
	// toSilent says the agent was silent when the echo went, or went
	// silent before it was answered.
	toSilent bool
	// overdue says the echo is older than the timeout: counted towards
	// the agent's silence, and still taken if its answer comes late.
	overdue bool
}

// target is one agent.
type target struct {
	addr netip.AddrPort
	// node is the name the agent answered a hello with; empty until then,
	// or again when an echo answer says the address answers for another
	// node. nodeHash is its hash.
	node      string
	nodeHash  uint64
	helloSent time.Time
	// helloID is the id of the hello awaiting an answer, 0 for none: only
	// an answer carrying it names the agent, once.
	helloID uint64
	// echoes are resolved echoes, oldest first, sent within the window.
	echoes []echo
	// lastAnswer is when an echo was last answered; lostRun how many
	// echoes in a row were lost since. silent is set once the run is long
	// enough to say the agent is gone rather than the link lossy: its
	// echoes are then not counted at all.
	lastAnswer time.Time
	lostRun    int
	silent     bool
	// behind is how long the agent's last answers waited in it (their
	// residence), at most a window, and behindAt when that was last
	// seen: an agent held off the CPU answers its backlog late, and an
	// echo still in that backlog is not lost yet (late.go).
	behind   time.Duration
	behindAt time.Time
	// trains are the last trains' samples, oldest first, at most
	// maxTrainSamples.
	trains []trainSample
	// trainTried is when a train was last sent, measured or not.
	trainTried time.Time
	// link are the node link's counter readings of the last window,
	// oldest first (addLink).
	link []linkSample
	// collectedAt is when the agent's samples were last asked for, and
	// epoch and cursor where its last answer left off (collect.go).
	collectedAt   time.Time
	epoch, cursor uint64
}

type echo struct {
	sent time.Time
	rtt  time.Duration
	lost bool
}

// counters are what probing has cost so far.
type counters struct {
	echoesSent, echoesAnswered, trains atomic.Int64
	// echoesLate are the echoes answered after the timeout.
	echoesLate               atomic.Int64
	bytesSent, bytesReceived atomic.Int64
	refused                  atomic.Int64
	// samples are the agents' round trips to each other the coordinates
	// took; samplesPassed those lost, or naming no one node.
	samples, samplesPassed atomic.Int64
}

// NewProber returns a prober with cfg's defaults filled in, sending from
// a UDP socket of its own.
func NewProber(cfg Config) (*Prober, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("probing: %w", err)
	}
	conn, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, fmt.Errorf("probing: %w", err)
	}
	_ = conn.SetReadBuffer(wire.SocketBuffer)
	// A whole train must fit in the send buffer: a sender that blocks
	// until the link drains sends at the link's pace, and its train would
	// read as a lower bound instead of the link's rate.
	_ = conn.SetWriteBuffer(wire.SocketBuffer)
	p := &Prober{
		cfg: cfg, conn: conn, now: time.Now, stamped: wire.EnableTimestamps(conn) == nil,
		budget:  newBucket(cfg.BudgetBytesPerSecond, trainWireBytes(cfg.TrainPackets), time.Now()),
		targets: map[netip.AddrPort]*target{}, pending: map[uint64]pendingEcho{}, lost: map[uint64]lostEcho{},
		coords: newCoordinates(), requests: map[uint64]pendingRequest{},
		interest: map[string]time.Time{}, pairs: map[pairKey]*pairState{}, pairsSent: map[string]time.Time{},
		reports: make(chan wire.TrainCount, 4), rediscover: make(chan struct{}, 1),
	}
	p.known.Store(&map[netip.AddrPort]struct{}{})
	return p, nil
}

// Run probes until ctx ends.
func (p *Prober) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		p.conn.Close()
	}()
	go p.read(ctx)
	go p.discoverLoop(ctx)
	go wait.UntilWithContext(ctx, p.hello, helloTick)
	go wait.UntilWithContext(ctx, func(context.Context) { p.summarise() }, time.Second)
	go p.trains(ctx)
	go p.collect(ctx)
	p.echoes(ctx)
}

// helloWireBytes is what one hello costs on the wire, request and answer.
const helloWireBytes = 2 * (wire.HelloSize + wire.Overhead)

// hello asks the agents not yet named for their node, once a second each,
// as far as the budget allows.
func (p *Prober) hello(context.Context) {
	now := p.now()
	p.mu.Lock()
	var due []*target
	for _, t := range p.order {
		if t.node == "" && now.Sub(t.helloSent) >= time.Second {
			due = append(due, t)
		}
	}
	p.mu.Unlock()
	buf := make([]byte, wire.HelloSize)
	for _, t := range due {
		if !p.budget.trySpend(now, helloWireBytes) {
			return
		}
		id := wire.NewID()
		p.mu.Lock()
		t.helloSent, t.helloID = now, id
		p.mu.Unlock()
		p.send(wire.EncodeHello(buf, id, "", now), t.addr)
	}
}

// send signs b and sends it to to.
func (p *Prober) send(b []byte, to netip.AddrPort) {
	p.cfg.Key.Sign(b)
	if _, err := p.conn.WriteToUDPAddrPort(b, to); err == nil {
		p.stats.bytesSent.Add(int64(len(b) + wire.Overhead))
	}
}

// read dispatches the agents' answers, and refuses everything else.
func (p *Prober) read(ctx context.Context) {
	logger := klog.FromContext(ctx)
	buf := make([]byte, 2048)
	oob := make([]byte, 128)
	for {
		n, oobn, _, from, err := p.conn.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				logger.Error(err, "Reading probe answers failed")
			}
			return
		}
		at := time.Time{}
		if p.stamped {
			at = wire.ReceiveTime(oob[:oobn])
		}
		if at.IsZero() {
			at = p.now()
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		p.stats.bytesReceived.Add(int64(n + wire.Overhead))
		if !p.dispatch(logger, buf[:n], from, at) {
			p.stats.refused.Add(1)
		}
	}
}

// dispatch handles one datagram from from, received at, and says whether
// it was an answer the prober asked for. What does not come from an agent
// it probes, or cannot be authenticated, is refused before it takes any
// lock.
func (p *Prober) dispatch(logger klog.Logger, b []byte, from netip.AddrPort, at time.Time) bool {
	t, err := wire.Header(b)
	if err != nil || t&wire.AnswerBit == 0 {
		return false
	}
	if _, ok := (*p.known.Load())[from]; !ok || !p.cfg.Key.Verify(b) {
		return false
	}
	switch t &^ wire.AnswerBit {
	case wire.TypeHello:
		id, node, _, err := wire.DecodeHello(b)
		if err != nil || id == 0 {
			return false
		}
		return p.named(logger, from, id, node)
	case wire.TypeEcho:
		key, _, stamps, err := wire.DecodeEcho(b)
		if err != nil {
			return false
		}
		return p.answered(key, at, from, stamps)
	case wire.TypeSamples:
		return p.samplesAnswered(b, from, at)
	case wire.TypePairs:
		return p.pairsAnswered(b, from, at)
	case wire.TypeReport:
		id, c, _, err := wire.DecodeReport(b)
		if err != nil {
			return false
		}
		p.mu.Lock()
		ours := p.inflight.id != 0 && p.inflight.id == id && p.inflight.addr == from
		p.mu.Unlock()
		if !ours {
			return false
		}
		select {
		case p.reports <- c:
		default:
		}
		return true
	}
	return false
}

// named takes a hello answer: from's agent answers for node. Only the
// answer to the hello in flight counts, and only a node's name; a name
// that changed starts the target's measurements afresh.
func (p *Prober) named(logger klog.Logger, from netip.AddrPort, id uint64, node string) bool {
	if msgs := validation.IsDNS1123Subdomain(node); len(msgs) > 0 {
		logger.V(2).Info("Refusing a probe agent's node name", "address", from, "reason", strings.Join(msgs, "; "))
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tg := p.targets[from]
	if tg == nil || tg.helloID == 0 || tg.helloID != id {
		return false
	}
	tg.helloID = 0
	was := tg.node
	*tg = target{addr: tg.addr, node: node, nodeHash: wire.NodeHash(node), helloSent: tg.helloSent}
	if was != node {
		p.forgetNodeLocked(was)
	}
	p.peerNames = nil
	return true
}

// answered resolves the echo of key, if it is pending and the answer came
// from where it went. The round trip is from sending to the kernel's
// receipt of the answer, less the time the echo waited in the agent.
func (p *Prober) answered(key uint64, at time.Time, from netip.AddrPort, stamps wire.EchoStamps) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pe, ok := p.pending[key]
	if !ok {
		return p.answeredAfterLoss(key, at, from, stamps)
	}
	if pe.t.addr != from {
		return false
	}
	delete(p.pending, key)
	t := pe.t
	if stamps.NodeHash != t.nodeHash {
		// The address answers for another node now (its pod replaced, the
		// address reused): what it measured so far is not this node's, and
		// the name is asked again.
		klog.Background().Info("A probe agent's address answers for another node; asking its name again", "address", from, "was", t.node)
		was := t.node
		*t = target{addr: t.addr}
		p.forgetNodeLocked(was)
		return true
	}
	rtt := networkRTT(pe.sent, at, stamps)
	t.noteResidence(at, stamps.Residence(), p.cfg.Window)
	t.echoes = append(t.echoes, echo{sent: pe.sent, rtt: min(rtt, p.cfg.Timeout)})
	t.lastAnswer, t.lostRun, t.silent = at, 0, false
	t.addLink(stamps.Link, stamps.Sent, at, p.cfg.Window)
	p.stats.echoesAnswered.Add(1)
	if pe.overdue {
		p.stats.echoesLate.Add(1)
	}
	return true
}
