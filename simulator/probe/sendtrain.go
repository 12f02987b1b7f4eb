package probe

import (
	"net/netip"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// sendTrain sends train id's packets to the train port of the agent at
// addr, and counts what they cost. It returns when the sending began and
// ended, and how many packets went.
func (p *Prober) sendTrain(addr netip.AddrPort, id uint64) (first, last time.Time, sent int) {
	first, last, sent = wire.SendTrain(p.conn, p.cfg.Key, addr, id, p.cfg.TrainPackets, p.now)
	p.stats.bytesSent.Add(int64(sent * (wire.TrainPacketSize + wire.Overhead)))
	return first, last, sent
}
