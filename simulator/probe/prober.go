package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// Config says how the prober finds agents and what it may spend.
type Config struct {
	// Agents returns the agents' addresses (host:port) now; it is called
	// once per window, so agents come and go with their DaemonSet.
	Agents func(context.Context) ([]string, error)
	// Window is how far back latency and loss are summarised, and how
	// often at least every node's latency and loss are refreshed.
	Window time.Duration
	// BudgetBytesPerSecond bounds what probing sends and receives
	// together, on the wire.
	BudgetBytesPerSecond float64
	// EchoesPerNodePerSecond is the echo rate per node while the budget
	// allows it: more echoes resolve smaller losses.
	EchoesPerNodePerSecond float64
	// Timeout is how long an echo or a report may take before it counts
	// as lost; it covers a shaped link's queue.
	Timeout time.Duration
	// TrainPackets is how many packets a bandwidth train has.
	TrainPackets int
}

// Defaults fills the zero fields of c.
func (c *Config) Defaults() {
	if c.Window == 0 {
		c.Window = 30 * time.Second
	}
	if c.BudgetBytesPerSecond == 0 {
		c.BudgetBytesPerSecond = DefaultBudgetBytesPerSecond
	}
	if c.EchoesPerNodePerSecond == 0 {
		c.EchoesPerNodePerSecond = 10
	}
	if c.Timeout == 0 {
		c.Timeout = time.Second
	}
	if c.TrainPackets == 0 {
		c.TrainPackets = 80
	}
}

// DefaultBudgetBytesPerSecond is 1 % of a 1 Gbit/s link.
const DefaultBudgetBytesPerSecond = 1e9 / 8 / 100

// Validate says what is wrong with c, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Agents == nil:
		return errors.New("agents: no way to find the agents")
	case c.Window < time.Second:
		return fmt.Errorf("window: %s, want at least 1s", c.Window)
	case c.Timeout <= 0 || c.Timeout >= c.Window:
		return fmt.Errorf("timeout: %s, want more than 0 and less than the window (%s)", c.Timeout, c.Window)
	case c.BudgetBytesPerSecond < 1000:
		return fmt.Errorf("budget: %.0f bytes/s, want at least 1000", c.BudgetBytesPerSecond)
	case c.EchoesPerNodePerSecond <= 0 || c.EchoesPerNodePerSecond > 1000:
		return fmt.Errorf("echoes per node per second: %g, want more than 0 and at most 1000", c.EchoesPerNodePerSecond)
	case c.TrainPackets < minTrainPackets || c.TrainPackets > 1000:
		return fmt.Errorf("train packets: %d, want %d to 1000", c.TrainPackets, minTrainPackets)
	}
	return nil
}

// helloTick is how often agents not yet named are asked.
const helloTick = 100 * time.Millisecond

// Prober probes every agent it finds and summarises what it measured.
type Prober struct {
	cfg  Config
	conn net.PacketConn
	now  func() time.Time

	mu      sync.Mutex
	targets map[string]*target // by address
	// order is the targets sorted by address: the echoes' round.
	order []*target
	// pending are the echoes sent and not yet answered, by key.
	pending map[uint64]pendingEcho
	// reports delivers report answers to the train being measured.
	reports chan reportAnswer
	// echoRate is the echo rate in force, per second, all nodes together.
	echoRate float64
	budget   *bucket

	snapMu sync.RWMutex
	snap   Snapshot

	stats counters
}

type pendingEcho struct {
	t    *target
	sent time.Time
}

type reportAnswer struct {
	id uint64
	c  trainCount
}

// target is one agent.
type target struct {
	addr *net.UDPAddr
	// node is the name the agent answered a hello with; empty until then.
	node      string
	helloSent time.Time
	// helloID is the last hello's id: only an answer carrying it names
	// the agent.
	helloID uint64
	// echoes are resolved echoes, oldest first, sent within the window.
	echoes []echo
	// trains are the last trains' rates, oldest first, at most
	// maxTrainSamples.
	trains []trainSample
	// trainTried is when a train was last sent, measured or not.
	trainTried time.Time
}

type trainSample struct {
	at   time.Time
	mbps float64
}

// maxTrainSamples bounds the train rates kept per agent: a window holds
// at most trainsPerWindow.
const maxTrainSamples = trainsPerWindow

type echo struct {
	sent time.Time
	rtt  time.Duration
	lost bool
}

// counters are what probing has cost so far.
type counters struct {
	echoesSent, echoesAnswered, trains atomic.Int64
	bytesSent, bytesReceived           atomic.Int64
}

// NewProber returns a prober with cfg's defaults filled in, sending from
// a UDP socket of its own.
func NewProber(cfg Config) (*Prober, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("probing: %w", err)
	}
	conn, err := net.ListenPacket("udp", ":0")
	if err != nil {
		return nil, fmt.Errorf("probing: %w", err)
	}
	return &Prober{
		cfg: cfg, conn: conn, now: time.Now,
		budget:  newBucket(cfg.BudgetBytesPerSecond, trainWireBytes(cfg.TrainPackets), time.Now()),
		targets: map[string]*target{}, pending: map[uint64]pendingEcho{},
		reports: make(chan reportAnswer, 16),
	}, nil
}

// Run probes until ctx ends.
func (p *Prober) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		p.conn.Close()
	}()
	go p.read(ctx)
	go wait.UntilWithContext(ctx, p.discover, p.cfg.Window)
	go wait.UntilWithContext(ctx, p.hello, helloTick)
	go wait.UntilWithContext(ctx, func(context.Context) { p.summarise() }, time.Second)
	go p.trains(ctx)
	p.echoes(ctx)
}

// discover replaces the targets by the agents found now, keeping what was
// measured of those still there.
func (p *Prober) discover(ctx context.Context) {
	logger := klog.FromContext(ctx)
	addrs, err := p.cfg.Agents(ctx)
	if err != nil {
		logger.Error(err, "Finding the probe agents failed; probing the ones found before")
		return
	}
	found := map[string]*net.UDPAddr{}
	for _, a := range addrs {
		ua, err := net.ResolveUDPAddr("udp", a)
		if err != nil {
			logger.Error(err, "Skipping a probe agent's address", "address", a)
			continue
		}
		found[ua.String()] = ua
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	added, removed := 0, 0
	for k, ua := range found {
		if _, ok := p.targets[k]; !ok {
			p.targets[k] = &target{addr: ua}
			added++
		}
	}
	for k := range p.targets {
		if _, ok := found[k]; !ok {
			delete(p.targets, k)
			removed++
		}
	}
	p.order = p.order[:0]
	for _, t := range p.targets {
		p.order = append(p.order, t)
	}
	slices.SortFunc(p.order, func(a, b *target) int { return strings.Compare(a.addr.String(), b.addr.String()) })
	if added+removed > 0 {
		logger.Info("Probe agents changed", "agents", len(p.targets), "added", added, "removed", removed)
	}
}

// helloWireBytes is what one hello costs on the wire, request and answer.
const helloWireBytes = 2 * (HelloSize + wireOverhead)

// hello asks the agents not yet named for their node, as far as the budget
// allows.
func (p *Prober) hello(context.Context) {
	now := p.now()
	p.mu.Lock()
	var unnamed []*target
	for _, t := range p.order {
		// Once a second each, while unanswered.
		if t.node == "" && now.Sub(t.helloSent) >= time.Second {
			unnamed = append(unnamed, t)
		}
	}
	p.mu.Unlock()
	buf := make([]byte, HelloSize)
	for _, t := range unnamed {
		if !p.budget.trySpend(now, helloWireBytes) {
			return
		}
		id := rand.Uint64()
		p.mu.Lock()
		t.helloSent, t.helloID = now, id
		p.mu.Unlock()
		p.send(encodeHello(buf, id, ""), t.addr)
	}
}

func (p *Prober) send(b []byte, to *net.UDPAddr) {
	if _, err := p.conn.WriteTo(b, to); err == nil {
		p.stats.bytesSent.Add(int64(len(b) + wireOverhead))
	}
}

// read dispatches the agents' answers.
func (p *Prober) read(ctx context.Context) {
	buf := make([]byte, 2048)
	for {
		n, from, err := p.conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() == nil {
				klog.FromContext(ctx).Error(err, "Reading probe answers failed")
			}
			return
		}
		at := p.now()
		p.stats.bytesReceived.Add(int64(n + wireOverhead))
		b := buf[:n]
		t, err := header(b)
		if err != nil {
			continue
		}
		switch t {
		case typeHello:
			if id, node, err := decodeHello(b); err == nil && node != "" {
				p.mu.Lock()
				if tg := p.targets[from.String()]; tg != nil && tg.helloID == id {
					tg.node = node
				}
				p.mu.Unlock()
			}
		case typeEcho:
			if key, err := decodeEcho(b); err == nil {
				p.answered(key, at, from.String())
			}
		case typeReport:
			if id, c, err := decodeReport(b); err == nil {
				select {
				case p.reports <- reportAnswer{id: id, c: c}:
				default:
				}
			}
		}
	}
}

// answered resolves the echo of key, if it is pending and the answer came
// from where it went.
func (p *Prober) answered(key uint64, at time.Time, from string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pe, ok := p.pending[key]
	if !ok || pe.t.addr.String() != from {
		return
	}
	delete(p.pending, key)
	pe.t.echoes = append(pe.t.echoes, echo{sent: pe.sent, rtt: at.Sub(pe.sent)})
	p.stats.echoesAnswered.Add(1)
}
