package customscore

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// probeWhileOpen is PerCycle mode's prober: each time the breaker opens it
// polls the simulator, off the scheduling cycle, until one answer is good
// and within budget, and closes the breaker. Cycles never wait for a probe.
func probeWhileOpen(ctx context.Context, b *breaker, p *poller, budget time.Duration) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.opened:
		}
		start, probes := time.Now(), 0
		p.run(ctx, func(r pollResult) bool {
			probes++
			if r.err != nil {
				logger.V(3).Info("Simulator probe failed", "err", r.err)
				return false
			}
			if r.took > budget {
				logger.V(3).Info("Simulator probe answered slower than breakerLatencyBudget; the breaker stays open",
					"took", r.took, "budget", budget)
				return false
			}
			b.probeSucceeded()
			logger.V(1).Info("Simulator probe answered", "probes", probes, "outage", time.Since(start).Round(time.Millisecond))
			return true
		}, nil)
	}
}

// backgroundRefresh is Background mode's loop: it keeps the newest
// simulation, asking every refresh interval while the simulator answers
// (conditionally, so an unchanged answer costs a 304) and backing off up to
// the same interval while it does not.
type backgroundRefresh struct {
	poller  *poller
	maxAge  time.Duration
	now     func() time.Time
	metrics *profileMetrics

	mu sync.Mutex
	// latest is the newest good simulation, from the request started last
	// among those that answered; at is when that answer arrived.
	latest    *simulation
	latestSeq uint64
	at        time.Time
}

func (r *backgroundRefresh) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	failing := false
	r.poller.run(ctx, func(res pollResult) bool {
		switch {
		case res.err != nil && !failing:
			logger.Info("Simulator refresh failed; scheduling uses the last simulation until it is older than maxSimulationAge",
				"maxSimulationAge", r.maxAge, "err", res.err)
		case res.err == nil && failing:
			logger.Info("Simulator refresh answers again")
		}
		failing = res.err != nil
		r.take(res)
		return false
	}, nil)
}

// take keeps a good answer unless a request started later has already
// answered: a late answer to an older request must not replace a newer one.
func (r *backgroundRefresh) take(res pollResult) {
	if res.err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.seq > r.latestSeq {
		r.latest, r.latestSeq, r.at = res.sim, res.seq, r.now()
	}
}

// newest returns the newest simulation if it is at most maxAge old, and its
// age either way (-1 when there is none yet). It never waits.
func (r *backgroundRefresh) newest() (*simulation, time.Duration) {
	r.mu.Lock()
	sim, at := r.latest, r.at
	r.mu.Unlock()
	if sim == nil {
		r.metrics.simulationAge(-1)
		return nil, -1
	}
	age := r.now().Sub(at)
	r.metrics.simulationAge(age)
	if age > r.maxAge {
		return nil, age
	}
	return sim, age
}
