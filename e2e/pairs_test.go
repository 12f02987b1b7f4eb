//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/simulator/api"
)

// pairShape is what the path between the plain and the rigorous worker is
// shaped to, and nothing else of either.
var pairShape = netshape.PairShape{RateMbit: 20, Loss: 0.05}

// peerTimeout is how long an agent waits for a peer's answer (the
// protocol's wire.PeerTimeout), pairsEvery how often the simulator
// collects a pair's echoes: a pair's loss window ends that long, and
// two collections, before the answer.
const (
	peerTimeout = 2 * time.Second
	pairsEvery  = time.Second
)

// pairsMeasuredAndShaped says, once a window, that the plain worker hosts
// pods others talk to, as the scheduler's peers plugin does, and checks
// what the simulator serves between nodes: a coordinate for every node,
// and the plain worker's pairs measured directly. Then it shapes the path
// between the plain and the rigorous worker alone (20 Mbit/s, 5 % loss
// of what the plain worker receives from the rigorous one): the first
// pair window wholly after, with a train after the shaping, measures
// 20 Mbit/s ± 30 % and 5 % ± 3 points, and the plain worker's pair with
// the disabled worker stays without loss. Healed, the pair is without
// loss again within two windows.
func (c *cluster) pairsMeasuredAndShaped(ctx context.Context) {
	c.t.Helper()
	stop := c.keepInterest(ctx, c.plain)
	defer stop()
	shapedPair := func(r api.SimulationResponse) *api.PairMeasurement { return pairOf(r, c.plain, c.rigorous) }
	otherPair := func(r api.SimulationResponse) *api.PairMeasurement { return pairOf(r, c.plain, c.disabled) }
	c.awaitLive("every node's coordinate, and the plain worker's pairs measured with a train", func(r api.SimulationResponse) bool {
		if r.Pairs == nil || len(r.Pairs.Coordinates) < 4 {
			return false
		}
		for _, p := range []*api.PairMeasurement{shapedPair(r), otherPair(r)} {
			if p == nil || p.PacketLoss == nil || p.LatencyMs == nil || p.BandwidthMbps == nil {
				return false
			}
		}
		return true
	}, 6*liveWindow+60*time.Second)

	shape := pairShape
	shape.Peer, shape.PeerPods = c.nodeAddrs(ctx, c.rigorous)
	c.t.Cleanup(func() {
		if err := netshape.Clear(context.Background(), c.plain); err != nil {
			c.t.Error(err)
		}
	})
	if err := netshape.ApplyPairs(ctx, c.plain, []netshape.PairShape{shape}); err != nil {
		c.t.Fatal(err)
	}
	shaped := time.Now()
	r := c.awaitLive("a pair window wholly after the shaping, with a train after it", func(r api.SimulationResponse) bool {
		p := shapedPair(r)
		return pairWindowAfter(r, shaped) && p != nil && p.PacketLoss != nil && p.BandwidthMbps != nil && p.BandwidthMbps.MeasuredAt.After(shaped)
	}, 3*twoWindows+30*time.Second)
	p, other := shapedPair(r), otherPair(r)
	c.t.Logf("shaped %s to %s: %s; the unshaped pair with %s: %s", c.plain, c.rigorous, describePair(p), c.disabled, describePair(other))
	if bw := p.BandwidthMbps; bw.AtLeast || math.Abs(bw.Value-shape.RateMbit) > 0.3*shape.RateMbit {
		c.t.Errorf("shaped pair: bandwidth %+v, want %g Mbit/s ± 30 %%, measured", *bw, shape.RateMbit)
	}
	if l := p.PacketLoss.Value; math.Abs(l-shape.Loss) > 0.03 {
		c.t.Errorf("shaped pair: loss %.3f over %d echoes, want %g ± 0.03", l, p.PacketLoss.Samples, shape.Loss)
	}
	if other == nil || other.PacketLoss == nil || other.PacketLoss.Value > 0.02 {
		c.t.Errorf("the plain worker's pair with %s, not shaped: %s, want no loss", c.disabled, describePair(other))
	}

	if err := netshape.Clear(ctx, c.plain); err != nil {
		c.t.Fatal(err)
	}
	healed := time.Now()
	r = c.awaitLive("a pair window wholly after healing", func(r api.SimulationResponse) bool { return pairWindowAfter(r, healed) }, twoWindows+20*time.Second)
	if p := shapedPair(r); p == nil || p.PacketLoss == nil || p.PacketLoss.Value > 0.02 {
		c.t.Errorf("healed, the pair: %s, want no loss", describePair(p))
	}
}

// pairWindowAfter: the answer's pair window lies wholly after t. A pair's
// echo is reported once decided, within peerTimeout, at the next
// collection.
func pairWindowAfter(r api.SimulationResponse, t time.Time) bool {
	return !r.Timestamp.Add(-time.Duration(r.WindowSeconds)*time.Second - peerTimeout - 2*pairsEvery).Before(t)
}

// pairOf is the pair of a and b in r, in either order; nil when not
// measured.
func pairOf(r api.SimulationResponse, a, b string) *api.PairMeasurement {
	if r.Pairs == nil {
		return nil
	}
	if b < a {
		a, b = b, a
	}
	for i := range r.Pairs.Measured {
		if m := &r.Pairs.Measured[i]; m.From == a && m.To == b {
			return m
		}
	}
	return nil
}

func describePair(p *api.PairMeasurement) string {
	if p == nil {
		return "not measured"
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// nodeAddrs returns a node's address and pod CIDR: what its pods' traffic
// to other nodes carries.
func (c *cluster) nodeAddrs(ctx context.Context, node string) (netip.Addr, netip.Prefix) {
	c.t.Helper()
	n, err := c.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	var addr netip.Addr
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
				addr = ip
			}
		}
	}
	pods, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if !addr.IsValid() || err != nil {
		c.t.Fatalf("node %s: address %v, pod CIDR %q (%v): want both, IPv4", node, addr, n.Spec.PodCIDR, err)
	}
	return addr, pods
}

// keepInterest says nodes are of interest now and once a window, until
// the returned function is called, which fails the test if no PUT ever
// succeeded.
func (c *cluster) keepInterest(ctx context.Context, nodes ...string) func() {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var lastErr error
	taken := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(liveWindow)
		defer tick.Stop()
		for {
			err := putInterest(ctx, c, nodes)
			mu.Lock()
			if err == nil {
				taken++
			} else if ctx.Err() == nil {
				lastErr = err
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if taken == 0 {
			c.t.Errorf("PUT /pairs/interest never taken: %v", lastErr)
		}
	}
}

// putInterest sends PUT /pairs/interest to the simulator in the running
// KNS-3 pod, through a port-forward, as the scheduler does on loopback.
func putInterest(ctx context.Context, c *cluster, nodes []string) error {
	pod, err := kindenv.SchedulerPod(ctx, c.client)
	if err != nil {
		return err
	}
	port, stop, err := kindenv.Forward(ctx, c.cfg, c.client, pod.Namespace, pod.Name, kindenv.SimulatorPortOf(pod))
	if err != nil {
		return err
	}
	defer close(stop)
	body, err := json.Marshal(api.PairsInterest{Nodes: nodes})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/pairs/interest", port), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: simulateTimeout}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}
