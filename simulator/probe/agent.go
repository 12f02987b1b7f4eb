package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"k8s.io/klog/v2"
)

const (
	// maxTrains is how many trains an agent remembers: a report is asked
	// for right after its train, so a few suffice, and a flood of train ids
	// cannot grow the agent.
	maxTrains = 16
	// minTrainPackets is the fewest arrivals from which a train gives a rate.
	minTrainPackets = 8
)

// Agent answers probes for one node.
type Agent struct {
	node   string
	conn   net.PacketConn
	trains map[uint64]*trainCount
	// order is the trains' ids, oldest first, to forget the oldest.
	order []uint64
	now   func() time.Time
	// stamped, when set, reads datagrams with the kernel's receive time
	// (SO_TIMESTAMPNS): a train's arrival rate is then the link's, not
	// how soon the agent got to run.
	stamped *net.UDPConn
}

// NewAgent returns an agent answering for node on conn.
func NewAgent(node string, conn net.PacketConn) *Agent {
	return &Agent{node: node, conn: conn, trains: map[uint64]*trainCount{}, now: time.Now}
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
		var from net.Addr
		var err error
		at := time.Time{}
		if a.stamped != nil {
			var oobn int
			var addr *net.UDPAddr
			n, oobn, _, addr, err = a.stamped.ReadMsgUDP(buf, oob)
			from = addr
			at = receiveTime(oob[:oobn])
		} else {
			n, from, err = a.conn.ReadFrom(buf)
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
		if reply := a.answer(buf[:n], out, at); reply != nil {
			if _, err := a.conn.WriteTo(reply, from); err != nil {
				logger.V(4).Info("Answering a probe failed", "to", from, "err", err)
			}
		}
	}
}

// answer handles one datagram, received at, and returns the answer, nil
// for none. An answer is never longer than the datagram.
func (a *Agent) answer(b, out []byte, at time.Time) []byte {
	t, err := header(b)
	if err != nil {
		return nil
	}
	switch t {
	case typeHello:
		id, _, err := decodeHello(b)
		if err != nil {
			return nil
		}
		return encodeHello(out, id, a.node)
	case typeEcho:
		if len(b) < EchoSize {
			return nil
		}
		return append(out[:0], b[:EchoSize]...)
	case typeTrain:
		id, err := decodeTrain(b)
		if err != nil {
			return nil
		}
		a.count(id, len(b), at)
		return nil
	case typeReport:
		id, _, err := decodeReport(b)
		if err != nil {
			return nil
		}
		c := a.trains[id]
		if c == nil {
			c = &trainCount{}
		}
		return encodeReport(out, id, c)
	}
	return nil
}

// count records one packet of train id, received at now.
func (a *Agent) count(id uint64, size int, now time.Time) {
	c := a.trains[id]
	if c == nil {
		if len(a.order) == maxTrains {
			delete(a.trains, a.order[0])
			a.order = a.order[1:]
		}
		c = &trainCount{First: now}
		a.trains[id] = c
		a.order = append(a.order, id)
	}
	c.Packets++
	c.Bytes += uint64(size)
	c.Last = now
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
	const id = 1
	if _, err := conn.Write(encodeHello(make([]byte, HelloSize), id, "")); err != nil {
		return "", err
	}
	buf := make([]byte, 2048)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return "", fmt.Errorf("no answer from the agent at %s: %w", addr, err)
		}
		if t, err := header(buf[:n]); err == nil && t == typeHello {
			if got, node, err := decodeHello(buf[:n]); err == nil && got == id && node != "" {
				return node, nil
			}
		}
	}
}
