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

// agentsOf parses --agents, or another flag that finds the agents (the
// agent's --peers): its errors name flag.
func agentsOf(flag, spec string) (func(context.Context) ([]string, error), error) {
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("--%s=%s: want dns:NAME:PORT: %w", flag, spec, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--%s=%s: port %q is not 1 to 65535", flag, spec, port)
		}
		// An absolute name ends in a dot; the name itself is a subdomain.
		if msgs := validation.IsDNS1123Subdomain(strings.TrimSuffix(host, ".")); len(msgs) > 0 {
			return nil, fmt.Errorf("--%s=%s: %q: %s", flag, spec, host, strings.Join(msgs, "; "))
		}
		return probe.DNSAgents(host, n), nil
	}
	addrs := strings.Split(spec, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("--%s=%s: %q: %w", flag, spec, a, err)
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
		Known: snap.Agents, Rules: rules, Pairs: pairsOf(snap)}
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

// pairsOf turns what the snapshot holds between nodes into the API's
// pairs, aged by the snapshot's time; nil when it holds nothing.
func pairsOf(snap probe.Snapshot) *api.Pairs {
	if len(snap.Coordinates) == 0 && len(snap.Pairs) == 0 {
		return nil
	}
	out := &api.Pairs{WindowSeconds: int(snap.Window / time.Second), Coordinates: map[string]api.Coordinate{}, Measured: []api.PairMeasurement{}}
	for name, c := range snap.Coordinates {
		out.Coordinates[name] = coordinateOf(c, snap.At)
	}
	for _, p := range snap.Pairs {
		out.Measured = append(out.Measured, api.PairMeasurement{From: p.From, To: p.To,
			LatencyMs: estimateOf(p.LatencyMs, snap.At), PacketLoss: estimateOf(p.PacketLoss, snap.At), BandwidthMbps: estimateOf(p.BandwidthMbps, snap.At)})
	}
	return out
}

// coordinateOf is a node's coordinate as the API serves it: serf's, its
// distances rounded to a tenth of a microsecond (a round trip is timed no
// finer) and its error to a thousandth, which keeps a 5,000-node answer
// small.
func coordinateOf(c probe.NodeCoordinate, at time.Time) api.Coordinate {
	vec := make([]float64, len(c.Coordinate.Vec))
	for i, v := range c.Coordinate.Vec {
		vec[i] = roundTo(v, 7)
	}
	return api.Coordinate{Vec: vec, Error: roundTo(c.Coordinate.Error, 3), Adjustment: roundTo(c.Coordinate.Adjustment, 7),
		Height: roundTo(c.Coordinate.Height, 7), Samples: c.Samples, MeasuredAt: c.At.UTC(), AgeSeconds: math.Max(0, at.Sub(c.At).Seconds())}
}

// roundTo is v to digits decimals, the float nearest that decimal (so
// that it encodes as short as it reads), and 0 rather than -0.
func roundTo(v float64, digits int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	if err != nil || r == 0 {
		return 0
	}
	return r
}
