package probe

import (
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/ipv4"

	"kns3.dev/kns3/simulator/probe/wire"
)

// sendTrain sends train id's packets to the train port of the agent at
// addr, handing them to the kernel
// in as few calls as it takes (sendmmsg where there is one), so that the
// prober's own scheduling hardly spaces them. It returns when the sending
// began and ended, and how many packets went.
func (p *Prober) sendTrain(addr netip.AddrPort, id uint64) (first, last time.Time, sent int) {
	n := p.cfg.TrainPackets
	bufs := make([]byte, n*wire.TrainPacketSize)
	msgs := make([]ipv4.Message, n)
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr.Addr(), wire.TrainPort(addr.Port())))
	now := p.now()
	for i := range msgs {
		b := bufs[i*wire.TrainPacketSize : (i+1)*wire.TrainPacketSize]
		p.cfg.Key.Sign(wire.EncodeTrain(b, id, uint32(i), now))
		msgs[i] = ipv4.Message{Buffers: [][]byte{b}, Addr: to}
	}
	pc := ipv4.NewPacketConn(p.conn)
	first = p.now()
	for sent < n {
		k, err := pc.WriteBatch(msgs[sent:], 0)
		if err != nil || k == 0 {
			break
		}
		sent += k
	}
	last = p.now()
	p.stats.bytesSent.Add(int64(sent * (wire.TrainPacketSize + wire.Overhead)))
	return first, last, sent
}
