package probe

import (
	"context"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
)

// TestCrowdCannotEvictTheProbersTrains has seventeen ordinary UDP sockets,
// no forged address among them, send the agent's train port one small
// train datagram each every 10 ms while the prober measures ten trains
// through a train socket that loses 5 % of what it reads (a shaped link's
// short first reports, which make the prober ask again). Every train must
// still give a rate: no sender but the prober can evict its train.
func TestCrowdCannotEvictTheProbersTrains(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp, trains := listenPair(t)
	a := agent.NewAgent("n", udp, testKey, agent.WithTrainConn(&lossyConn{PacketConn: trains, rand: rand.New(rand.NewPCG(3, 4)), loss: 0.05}))
	go a.Serve(ctx)
	addr := udp.LocalAddr().String()
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: 2 * time.Second, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.conn.Close()
	go p.read(ctx)
	p.discover(ctx)

	trainAddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(wire.TrainPort(uint16(udp.LocalAddr().(*net.UDPAddr).Port)))}
	crowd := make([]net.PacketConn, 17)
	for i := range crowd {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		crowd[i] = c
	}
	go func() {
		pkt := make([]byte, wire.TrainPacketSize)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for id := uint64(1); ; id++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, c := range crowd {
				_, _ = c.WriteTo(wire.EncodeTrain(pkt, id, 0, time.Now()), trainAddr)
			}
		}
	}()
	target := p.order[0].addr
	rated := 0
	for range 10 {
		if _, ok := p.train(ctx, target, wire.NewID()); ok {
			rated++
		}
	}
	if rated != 10 {
		t.Errorf("with 17 other senders on the train port, %d of 10 trains gave a rate, want 10", rated)
	}
}

// TestFloodFromTheProbersAddressIsNotLoss floods an agent with 5,000
// echoes a second from the prober's own address (loopback: every socket
// here shares 127.0.0.1, as host-network processes on the prober's node
// share its address, or as a forger sets it) while the prober measures
// it. The flood must not read as loss on the agent's link.
func TestFloodFromTheProbersAddressIsNotLoss(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := startAgent(t, ctx, "n", nil, nil)
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: 2 * time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	waitFor(t, 5*time.Second, "n measured", func() bool {
		m := p.Snapshot().Nodes["n"]
		return m.PacketLoss != nil && m.Echoes > 100
	})
	flooder, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer flooder.Close()
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	floodCtx, stopFlood := context.WithCancel(ctx)
	defer stopFlood()
	go func() {
		echo := wire.EncodeEcho(make([]byte, wire.EchoSize), 1, time.Now())
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-floodCtx.Done():
				return
			case <-tick.C:
			}
			for range 50 { // 5,000 a second
				_, _ = flooder.WriteTo(echo, to)
			}
		}
	}()
	start := time.Now()
	worst := 0.0
	for time.Since(start) < 5*time.Second {
		if m := p.Snapshot().Nodes["n"]; m.PacketLoss != nil && m.PacketLoss.At.After(start) {
			worst = max(worst, m.PacketLoss.Value)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if worst > 0.005 {
		t.Errorf("under a flood of 5,000 echoes a second from the prober's address, the node's loss was served at up to %.3f, want at most 0.005", worst)
	}
}
