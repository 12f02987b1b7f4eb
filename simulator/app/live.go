package app

import (
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/livescore"
	"kns3.dev/kns3/simulator/probe"
	"kns3.dev/kns3/simulator/scenario"
)

// agentsOf parses --agents.
func agentsOf(spec string) (func(context.Context) ([]string, error), error) {
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("--agents=%s: want dns:NAME:PORT: %w", spec, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--agents=%s: port %q is not 1 to 65535", spec, port)
		}
		// An absolute name ends in a dot; the name itself is a subdomain.
		if msgs := validation.IsDNS1123Subdomain(strings.TrimSuffix(host, ".")); len(msgs) > 0 {
			return nil, fmt.Errorf("--agents=%s: %q: %s", spec, host, strings.Join(msgs, "; "))
		}
		return probe.DNSAgents(host, n), nil
	}
	addrs := strings.Split(spec, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("--agents=%s: %q: %w", spec, a, err)
		}
	}
	return probe.StaticAgents(addrs), nil
}

// measured adapts the prober's snapshot to the server's live source.
func measured(p *probe.Prober, rules livescore.Rules) func() (uint64, scenario.Measured) {
	return func() (uint64, scenario.Measured) {
		snap := p.Snapshot()
		return snap.Seq, measurementsOf(snap, rules)
	}
}

// measurementsOf turns a snapshot into the API's measurements, each aged
// by the snapshot's time.
func measurementsOf(snap probe.Snapshot, rules livescore.Rules) scenario.Measured {
	m := scenario.Measured{At: snap.At, WindowSeconds: int(snap.Window / time.Second), Nodes: map[string]api.Measurements{},
		Known: snap.Agents, Rules: rules}
	for name, n := range snap.Nodes {
		m.Nodes[name] = api.Measurements{
			LatencyMs:     estimateOf(n.LatencyMs, snap.At),
			BandwidthMbps: estimateOf(n.BandwidthMbps, snap.At),
			PacketLoss:    estimateOf(n.PacketLoss, snap.At),
			LinkUseMbps:   estimateOf(n.LinkUseMbps, snap.At),
		}
	}
	return m
}

func estimateOf(e *probe.Estimate, at time.Time) *api.Estimate {
	if e == nil {
		return nil
	}
	out := &api.Estimate{
		Value: e.Value, Low: e.Low, AtLeast: e.AtLeast, Samples: e.Samples,
		MeasuredAt: e.At.UTC(), AgeSeconds: math.Max(0, at.Sub(e.At).Seconds()),
	}
	if !math.IsInf(e.High, 1) {
		high := e.High
		out.High = &high
	}
	return out
}
