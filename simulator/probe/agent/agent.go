// Package agent is what runs on every node: it answers the probes of the
// simulator's prober (package probe), whose format and signing are package
// wire's, and refuses everything else. It holds nothing of the prober.
package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Agent answers probes for one node.
type Agent struct {
	node string
	// nodeHash is node's hash, which every echo answer carries.
	nodeHash uint64
	// conn takes requests; trainConn, when set, trains (else conn does).
	conn, trainConn net.PacketConn
	// port is the agents' port: a datagram from it comes from another
	// agent, which never sends requests.
	port uint16
	// key authenticates every datagram, both ways.
	key *wire.Key
	// mu guards what both readers use: the trains, the requests taken and
	// the limits of each source.
	mu     sync.Mutex
	trains trainTable
	guard  replayGuard
	// limit bounds the answers to each source address, trainLimit the
	// train packets counted of each.
	limit, trainLimit sourceLimits
	now               func() time.Time
	refused           refusals
	// link, when set, reads the node link's counters that echo answers
	// carry.
	link *linkCounters
	// peers, when set, are the other agents this one measures.
	peers *peerState
}

// refusals count what an agent refused of what reached it.
type refusals struct {
	// unauthenticated: datagrams whose MAC was wrong, which cost nothing
	// more; stale: authenticated requests sent too long ago or taken
	// before (replays); limited: requests over their source's rate.
	unauthenticated, stale, limited atomic.Int64
}

// Option sets what NewAgent otherwise leaves at its default. Listen
// needs none; they are hooks for tests that run agents beside a prober.
type Option func(*Agent)

// WithClock makes the agent read its clock from now, not the system's:
// the time it stamps on what it receives and sends, and judges requests'
// freshness by.
func WithClock(now func() time.Time) Option {
	return func(a *Agent) { a.now = now }
}

// WithTrainConn makes the agent count trains on conn, as Listen's agent
// does on the port after its own; without it, trains arrive on the
// request connection.
func WithTrainConn(conn net.PacketConn) Option {
	return func(a *Agent) { a.trainConn = conn }
}

// NewAgent returns an agent answering for node on conn, authenticating
// every datagram with key.
func NewAgent(node string, conn net.PacketConn, key *wire.Key, opts ...Option) *Agent {
	a := &Agent{node: node, nodeHash: wire.NodeHash(node), conn: conn, key: key, now: time.Now,
		limit: newSourceLimits(agentSourceRate, agentSourceBurst), trainLimit: newSourceLimits(trainSourceRate, trainSourceBurst)}
	if conn != nil {
		if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
			a.port = uint16(ua.Port)
		}
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Listen opens addr (UDP) for requests, and the train port after it, and
// returns an agent answering there for node, authenticating with key,
// with opts.
func Listen(addr, node string, key *wire.Key, opts ...Option) (*Agent, error) {
	if node == "" {
		return nil, errors.New("the agent needs its node's name (--node-name, or NODE_NAME from the downward API)")
	}
	if key == nil {
		return nil, errors.New("the agent needs the probe key (--probe-key-file)")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	// An ephemeral probe port (0, as tests ask) may sit just below a port
	// in use: the train port is the next one, so try another pair.
	tries := 1
	if port == "0" {
		tries = ephemeralTries
	}
	for i := 1; ; i++ {
		a, err := listenPorts(addr, host, node, key, opts...)
		if err == nil || i >= tries {
			return a, err
		}
	}
}

// ephemeralTries is how many ephemeral probe ports Listen tries before it
// gives up finding one whose train port is free.
const ephemeralTries = 20

// listenPorts opens the probe port at addr and the train port beside it.
func listenPorts(addr, host, node string, key *wire.Key, opts ...Option) (*Agent, error) {
	conn, err := listenStamped(addr)
	if err != nil {
		return nil, err
	}
	a := NewAgent(node, conn, key, opts...)
	trainPort := wire.TrainPort(a.port)
	if trainPort == 0 {
		conn.Close()
		return nil, fmt.Errorf("listening on %s: probe port %d leaves no train port above it", addr, a.port)
	}
	trainAddr := net.JoinHostPort(host, strconv.Itoa(int(trainPort)))
	if a.trainConn, err = listenStamped(trainAddr); err != nil {
		conn.Close()
		return nil, err
	}
	return a, nil
}

// listenStamped opens addr with a large receive buffer and, where the
// kernel can, its receive time on every datagram (SO_TIMESTAMPNS): a
// train's arrival rate is then the link's, and an echo's time in the agent
// starts when it arrived, not when the agent got to run.
func listenStamped(addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	_ = conn.SetReadBuffer(wire.SocketBuffer)
	_ = wire.EnableTimestamps(conn)
	return conn, nil
}

// ReadLinkCounters makes the agent read the byte counters of the node's
// interface link under sysfs, the node's /sys mounted in the agent, and
// put them in its echo answers. It reads them once now, so that counters
// that cannot be read are logged at start-up; the agent serves without
// them then, and tries again once a second.
func (a *Agent) ReadLinkCounters(sysfs, link string) error {
	c, err := newLinkCounters(sysfs, link)
	if err != nil {
		return err
	}
	a.link = c
	c.latest(a.now)
	return nil
}

// Addr is where the agent takes requests.
func (a *Agent) Addr() net.Addr { return a.conn.LocalAddr() }

// Serve answers probes until ctx ends, then closes the connections.
func (a *Agent) Serve(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	go func() {
		<-ctx.Done()
		a.conn.Close()
		if a.trainConn != nil {
			a.trainConn.Close()
		}
	}()
	if a.trainConn != nil {
		go func() {
			buf, oob := make([]byte, 2048), make([]byte, 128)
			for {
				n, from, at, err := a.read(a.trainConn, buf, oob)
				if err != nil {
					if ctx.Err() == nil {
						logger.Error(err, "Reading trains failed")
					}
					return
				}
				a.countTrain(buf[:n], from, at)
			}
		}()
	}
	if a.peers != nil {
		if err := a.startPeers(ctx); err != nil {
			return err
		}
	}
	buf, out, oob := make([]byte, 2048), make([]byte, 2048), make([]byte, 128)
	for {
		n, from, at, err := a.read(a.conn, buf, oob)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("reading probes: %w", err)
		}
		reply := a.answer(buf[:n], out, from, at)
		if reply == nil {
			continue
		}
		if reply[4] == wire.TypeEcho|wire.AnswerBit {
			wire.StampEchoSent(reply, a.now())
		}
		a.key.Sign(reply)
		if _, err := a.conn.WriteTo(reply, net.UDPAddrFromAddrPort(from)); err != nil {
			logger.V(4).Info("Answering a probe failed", "to", from, "err", err)
		}
	}
}

// msgReader reads a datagram with its control messages, among them the
// kernel's receive time: a *net.UDPConn.
type msgReader interface {
	ReadMsgUDPAddrPort(b, oob []byte) (n, oobn, flags int, addr netip.AddrPort, err error)
}

// read reads one datagram from conn, with the kernel's receive time where
// there is one, the agent's clock's otherwise.
func (a *Agent) read(conn net.PacketConn, buf, oob []byte) (int, netip.AddrPort, time.Time, error) {
	var n int
	var from netip.AddrPort
	var at time.Time
	var err error
	if udp, ok := conn.(msgReader); ok {
		var oobn int
		n, oobn, _, from, err = udp.ReadMsgUDPAddrPort(buf, oob)
		at = wire.ReceiveTime(oob[:oobn])
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	} else {
		var addr net.Addr
		n, addr, err = conn.ReadFrom(buf)
		if ua, ok := addr.(*net.UDPAddr); ok {
			from = ua.AddrPort()
		}
	}
	if at.IsZero() {
		at = a.now()
	}
	return n, from, at, err
}

// countTrain counts b if it is a train packet a prober sent: from a
// prober's port, authenticated, fresh, counted once, and within its
// source's rate. A packet from anyone else never reaches the train table,
// so no one but a prober can evict a prober's train.
func (a *Agent) countTrain(b []byte, from netip.AddrPort, at time.Time) {
	if t, err := wire.Header(b); err != nil || t != wire.TypeTrain || !fromProber(from, a.port) {
		return
	}
	if !a.key.Verify(b) {
		a.refused.unauthenticated.Add(1)
		return
	}
	id, i, sent, err := wire.DecodeTrain(b)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.take(wire.TypeTrain, id, i, sent, from.Addr(), at, &a.trainLimit) {
		a.trains.count(from, id, len(b), at)
	}
}

// take says whether to take an authenticated request from src, received
// at: fresh and never taken before (a replay costs nothing), and within
// the source's limit. Called with a.mu held.
func (a *Agent) take(t byte, id uint64, index uint32, sent time.Time, src netip.Addr, at time.Time, limit *sourceLimits) bool {
	if !a.guard.fresh(requestID(t, id, index, sent), sent, at) {
		a.refused.stale.Add(1)
		return false
	}
	if !limit.allow(src, at) {
		a.refused.limited.Add(1)
		return false
	}
	return true
}

// fromProber says from is a port a prober sends from: probers send from
// ephemeral ports, another agent from the agents' port.
func fromProber(from netip.AddrPort, agentPort uint16) bool {
	return from.Port() >= 1024 && (agentPort == 0 || from.Port() != agentPort)
}

// answer handles one datagram from from, received at, and returns the
// answer, unsigned (Serve signs it as it leaves), nil for none. An answer
// is never longer than the datagram, and nothing that is not a
// well-formed, authenticated, fresh request from a prober is answered: a
// datagram the agent cannot authenticate costs it one MAC, and nothing of
// the answers it keeps for each source.
func (a *Agent) answer(b, out []byte, from netip.AddrPort, at time.Time) []byte {
	t, err := wire.Header(b)
	if err != nil || t&wire.AnswerBit != 0 {
		return nil
	}
	if !fromProber(from, a.port) {
		return nil
	}
	if t == wire.TypeTrain {
		a.countTrain(b, from, at)
		return nil
	}
	if !a.key.Verify(b) {
		a.refused.unauthenticated.Add(1)
		return nil
	}
	take := func(id uint64, sent time.Time) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.take(t, id, 0, sent, from.Addr(), at, &a.limit)
	}
	switch t {
	case wire.TypeHello:
		id, node, sent, err := wire.DecodeHello(b)
		if err != nil || node != "" || id == 0 || !take(id, sent) {
			return nil
		}
		return wire.EncodeHello(out, id, a.node, sent)
	case wire.TypeEcho:
		key, sent, stamps, err := wire.DecodeEcho(b)
		if err != nil || stamps != (wire.EchoStamps{}) || !take(key, sent) {
			return nil
		}
		// Reading the counters, once a second, delays this answer by a
		// few microseconds: time in the agent, which the prober takes out.
		var link wire.LinkReading
		if a.link != nil {
			link = a.link.latest(a.now)
		}
		return wire.EncodeEchoAnswer(out, key, sent, at, a.nodeHash, link)
	case wire.TypeReport:
		id, c, sent, err := wire.DecodeReport(b)
		if err != nil || !c.Empty() || !take(id, sent) {
			return nil
		}
		a.mu.Lock()
		got := a.trains.get(from, id)
		a.mu.Unlock()
		return wire.EncodeReport(out, id, &got, sent)
	case wire.TypeSamples:
		id, epoch, cursor, sent, samples, err := wire.DecodeSamples(b)
		if err != nil || len(samples) != 0 || id == 0 || !take(id, sent) {
			return nil
		}
		return a.answerSamples(out, len(b), id, epoch, cursor, sent, at)
	case wire.TypePairs:
		id, rate, peers, sent, err := wire.DecodePairsRequest(b)
		if err != nil || id == 0 || !take(id, sent) {
			return nil
		}
		return a.answerPairs(out, len(b), rate, id, peers, sent, at)
	}
	return nil
}

// Refused is what the agent refused so far: datagrams it could not
// authenticate, authenticated requests that were stale or replayed, and
// requests over their source's rate.
func (a *Agent) Refused() (unauthenticated, stale, limited int64) {
	return a.refused.unauthenticated.Load(), a.refused.stale.Load(), a.refused.limited.Load()
}

// Check sends a hello to the agent at addr and returns the node it answers
// for: the agent's liveness probe, and a check from the command line.
func Check(addr string, timeout time.Duration, key *wire.Key) (string, error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	id := wire.NewID()
	if _, err := conn.Write(key.Sign(wire.EncodeHello(make([]byte, wire.HelloSize), id, "", time.Now()))); err != nil {
		return "", err
	}
	buf := make([]byte, 2048)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return "", fmt.Errorf("no answer from the agent at %s: %w", addr, err)
		}
		if t, err := wire.Header(buf[:n]); err == nil && t == wire.TypeHello|wire.AnswerBit && key.Verify(buf[:n]) {
			if got, node, _, err := wire.DecodeHello(buf[:n]); err == nil && got == id && node != "" {
				return node, nil
			}
		}
	}
}
