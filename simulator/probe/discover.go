package probe

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"k8s.io/klog/v2"
)

// minRediscovery is the least time between two discoveries.
const minRediscovery = time.Second

// discoverLoop finds the agents once a window, and again soon after a
// target falls silent.
func (p *Prober) discoverLoop(ctx context.Context) {
	tick := time.NewTicker(p.cfg.Window)
	defer tick.Stop()
	for {
		p.discover(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(minRediscovery):
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-p.rediscover:
		}
	}
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
	found := map[netip.AddrPort]bool{}
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			logger.Error(err, "Skipping a probe agent's address", "address", a)
			continue
		}
		found[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	added, removed := 0, 0
	for ap := range found {
		if _, ok := p.targets[ap]; !ok {
			p.targets[ap] = &target{addr: ap}
			added++
		}
	}
	for ap, t := range p.targets {
		if !found[ap] {
			delete(p.targets, ap)
			p.forgetNodeLocked(t.node)
			for key, pe := range p.pending {
				if pe.t == t {
					delete(p.pending, key)
				}
			}
			removed++
		}
	}
	p.order = p.order[:0]
	known := make(map[netip.AddrPort]struct{}, len(p.targets))
	for ap, t := range p.targets {
		p.order = append(p.order, t)
		known[ap] = struct{}{}
	}
	p.known.Store(&known)
	slices.SortFunc(p.order, func(a, b *target) int { return a.addr.Compare(b.addr) })
	if added+removed > 0 {
		logger.Info("Probe agents changed", "agents", len(p.targets), "added", added, "removed", removed)
	}
}

// forgetNodeLocked forgets node's coordinate once no target answers for
// it: its agent left, or its address answers for another node now.
// Called with p.mu held.
func (p *Prober) forgetNodeLocked(node string) {
	p.peerNames = nil
	if node == "" {
		return
	}
	for _, t := range p.targets {
		if t.node == node {
			return
		}
	}
	p.coords.forget(node)
}
