package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"k8s.io/klog/v2"
)

// minTrainPackets is the fewest arrivals from which a train gives a rate.
const minTrainPackets = 8

// Agent answers probes for one node.
type Agent struct {
	node string
	conn net.PacketConn
	// port is the agents' port: a datagram from it comes from another
	// agent, which never sends requests.
	port   uint16
	trains trainTable
	limit  sourceLimits
	now    func() time.Time
	// stamped, when set, reads datagrams with the kernel's receive time
	// (SO_TIMESTAMPNS): a train's arrival rate is then the link's, and an
	// echo's time in the agent starts when it arrived, not when the agent
	// got to run.
	stamped *net.UDPConn
}

// NewAgent returns an agent answering for node on conn.
func NewAgent(node string, conn net.PacketConn) *Agent {
	a := &Agent{node: node, conn: conn, now: time.Now, limit: newSourceLimits()}
	if conn != nil {
		if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
			a.port = uint16(ua.Port)
		}
	}
	return a
}

// Listen opens addr (UDP) and returns an agent answering there for node.
func Listen(addr, node string) (*Agent, error) {
	if node == "" {
		return nil, errors.New("the agent needs its node's name (--node-name, or NODE_NAME from the downward API)")
	}
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	a := NewAgent(node, conn)
	if udp, ok := conn.(*net.UDPConn); ok && enableTimestamps(udp) == nil {
		a.stamped = udp
	}
	return a, nil
}

// Addr is where the agent listens.
func (a *Agent) Addr() net.Addr { return a.conn.LocalAddr() }

// Serve answers probes until ctx ends, then closes the connection.
func (a *Agent) Serve(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	go func() {
		<-ctx.Done()
		a.conn.Close()
	}()
	buf := make([]byte, 2048)
	out := make([]byte, 2048)
	oob := make([]byte, 128)
	for {
		var n int
		var from netip.AddrPort
		var err error
		at := time.Time{}
		if a.stamped != nil {
			var oobn int
			n, oobn, _, from, err = a.stamped.ReadMsgUDPAddrPort(buf, oob)
			at = receiveTime(oob[:oobn])
		} else {
			var addr net.Addr
			n, addr, err = a.conn.ReadFrom(buf)
			if ua, ok := addr.(*net.UDPAddr); ok {
				from = ua.AddrPort()
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("reading probes: %w", err)
		}
		if at.IsZero() {
			at = a.now()
		}
		reply := a.answer(buf[:n], out, from, at)
		if reply == nil {
			continue
		}
		if reply[4] == typeEcho|answerBit {
			stampEchoSent(reply, a.now())
		}
		if a.stamped != nil {
			_, err = a.stamped.WriteToUDPAddrPort(reply, from)
		} else {
			_, err = a.conn.WriteTo(reply, net.UDPAddrFromAddrPort(from))
		}
		if err != nil {
			logger.V(4).Info("Answering a probe failed", "to", from, "err", err)
		}
	}
}

// answer handles one datagram from from, received at, and returns the
// answer, nil for none. An answer is never longer than the datagram, and
// nothing that is not a well-formed request from a prober is answered.
func (a *Agent) answer(b, out []byte, from netip.AddrPort, at time.Time) []byte {
	t, err := header(b)
	if err != nil || t&answerBit != 0 {
		return nil
	}
	// Probers send from ephemeral ports; another agent never sends a
	// request.
	if from.Port() < 1024 || (a.port != 0 && from.Port() == a.port) {
		return nil
	}
	if t == typeTrain {
		if id, err := decodeTrain(b); err == nil {
			a.trains.count(from, id, len(b), at)
		}
		return nil
	}
	if !a.limit.allow(from.Addr(), at) {
		return nil
	}
	switch t {
	case typeHello:
		id, node, err := decodeHello(b)
		if err != nil || node != "" || id == 0 {
			return nil
		}
		return encodeHello(out, id, a.node)
	case typeEcho:
		key, stamps, err := decodeEcho(b)
		if err != nil || !stamps.Received.IsZero() || !stamps.Sent.IsZero() {
			return nil
		}
		return encodeEchoAnswer(out, key, at)
	case typeReport:
		id, c, err := decodeReport(b)
		if err != nil || !c.empty() {
			return nil
		}
		got := a.trains.get(from, id)
		return encodeReport(out, id, &got)
	}
	return nil
}

// Check sends a hello to the agent at addr and returns the node it answers
// for: the agent's liveness probe, and a check from the command line.
func Check(addr string, timeout time.Duration) (string, error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	id := helloID()
	if _, err := conn.Write(encodeHello(make([]byte, HelloSize), id, "")); err != nil {
		return "", err
	}
	buf := make([]byte, 2048)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return "", fmt.Errorf("no answer from the agent at %s: %w", addr, err)
		}
		if t, err := header(buf[:n]); err == nil && t == typeHello|answerBit {
			if got, node, err := decodeHello(buf[:n]); err == nil && got == id && node != "" {
				return node, nil
			}
		}
	}
}

// helloID is a new hello's id: random, and never 0, the id of no hello.
func helloID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}
