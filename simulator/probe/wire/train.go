package wire

import (
	"math"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/ipv4"
)

// Dispersed is the share of its sending rate below which a train is taken
// to have been slowed by the path: above it, the path carried the train
// as fast as it was sent, and its rate is a lower bound.
const Dispersed = 0.8

// SendTrain sends n packets of train id from conn to the train port of
// the agent at agent (its probe address), signed with key, handing them
// to the kernel in as few calls as it takes (sendmmsg where there is
// one), so that the sender's own scheduling hardly spaces them. It
// returns when the sending began and ended, by now, and how many packets
// went. Prober and agents send trains alike.
func SendTrain(conn *net.UDPConn, key *Key, agent netip.AddrPort, id uint64, n int, now func() time.Time) (first, last time.Time, sent int) {
	bufs := make([]byte, n*TrainPacketSize)
	msgs := make([]ipv4.Message, n)
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(agent.Addr(), TrainPort(agent.Port())))
	stamp := now()
	for i := range msgs {
		b := bufs[i*TrainPacketSize : (i+1)*TrainPacketSize]
		key.Sign(EncodeTrain(b, id, uint32(i), stamp))
		msgs[i] = ipv4.Message{Buffers: [][]byte{b}, Addr: to}
	}
	pc := ipv4.NewPacketConn(conn)
	first = now()
	for sent < n {
		k, err := pc.WriteBatch(msgs[sent:], 0)
		if err != nil || k == 0 {
			break
		}
		sent += k
	}
	return first, now(), sent
}

// TrainRate is what a train's count says of the path: the rate it
// arrived at, capped at the rate it was handed to the network at (it
// cannot have arrived faster), and whether it arrived within Dispersed
// of that rate, so that the path may be faster (a lower bound). ok is
// false when too little of it arrived to tell.
func TrainRate(got TrainCount, sentFirst, sentLast time.Time, sent int) (mbps float64, atLeast, ok bool) {
	recv, ok := got.Mbps()
	if !ok {
		return 0, false, false
	}
	span := sentLast.Sub(sentFirst)
	if span <= 0 || sent <= 1 {
		return recv, true, true
	}
	sentMbps := float64(sent-1) * TrainPacketSize * 8 / span.Seconds() / 1e6
	return math.Min(recv, sentMbps), recv >= Dispersed*sentMbps, true
}

// TrainHeld says a report's count could be of a train of sent packets:
// no more packets than were sent, each of a train packet's size, and
// the last after the first. A report that claims more is a forgery or a
// confusion, and gives no rate.
func TrainHeld(c TrainCount, sent int) bool {
	return int(c.Packets) <= sent && c.Bytes == uint64(c.Packets)*TrainPacketSize && !c.Last.Before(c.First)
}
