package scenario

import (
	"time"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/livescore"
)

// Measured is what the simulator measured itself: metrics per node with
// their confidence, summarising the WindowSeconds before At, and the
// targets its scores saturate at.
type Measured struct {
	At            time.Time
	WindowSeconds int
	Nodes         map[string]api.Measurements
	// Known is how many nodes the prober knows, measured or not.
	Known int
	Rules livescore.Rules
	// Pairs, when not nil, is what was measured between nodes: served as
	// it is, beside the results.
	Pairs *api.Pairs
}

// LiveResponse builds the /simulate answer from measurements and the
// scenario. A node the scenario names keeps its measured metrics but takes
// every field the scenario sets: a score pins it, and a metric replaces
// the measured one, exactly. The other measured nodes are served as
// measured. Every measured node that is not pinned is scored by
// livescore, all together, so that nodes the measurements cannot tell
// apart score the same, and all score 0 while too few are measured to
// rank (the answer's warm_up says so); a node only the scenario names is
// served from it.
// What was measured between nodes is served as measured, beside the
// results. A nil scenario serves the measurements alone.
func LiveResponse(s *Scenario, m Measured) api.SimulationResponse {
	resp := api.SimulationResponse{
		Results:       map[string]api.NodeResult{},
		Timestamp:     m.At.UTC().Truncate(time.Second),
		WindowSeconds: m.WindowSeconds,
		Source:        "live",
	}
	if s != nil {
		resp.Source = "live+" + s.Source
	}
	scored := map[string]api.Measurements{}
	for name, measured := range m.Nodes {
		o := Node{}
		if s != nil {
			o = s.Nodes[name]
		}
		shown := measured
		scoredBy := measured
		for _, f := range []struct {
			override *float64
			shown    **api.Estimate
			scored   **api.Estimate
		}{
			{o.LatencyMs, &shown.LatencyMs, &scoredBy.LatencyMs},
			{o.BandwidthMbps, &shown.BandwidthMbps, &scoredBy.BandwidthMbps},
			{o.PacketLoss, &shown.PacketLoss, &scoredBy.PacketLoss},
		} {
			if f.override != nil {
				v := *f.override
				*f.shown = nil
				*f.scored = &api.Estimate{Value: v, Low: v, High: &v}
			}
		}
		r := api.NodeResult{
			LatencyMs: value(scoredBy.LatencyMs), BandwidthMbps: value(scoredBy.BandwidthMbps), PacketLoss: value(scoredBy.PacketLoss),
		}
		if shown != (api.Measurements{}) {
			r.Measured = &shown
		}
		if o.Score != nil {
			r.Score = *o.Score
		} else {
			scored[name] = scoredBy
		}
		resp.Results[name] = r
	}
	// A node the scenario pins is ranked by its pin, not measured: it
	// counts neither way towards the warm-up's quorum.
	scores := m.Rules.Scores(scored, m.Known-(len(m.Nodes)-len(scored)))
	resp.WarmUp = scores.WarmUp
	resp.Pairs = m.Pairs
	for name, score := range scores.Scores {
		r := resp.Results[name]
		r.Score = score
		resp.Results[name] = r
	}
	if s != nil {
		for name, n := range s.Nodes {
			if _, ok := m.Nodes[name]; !ok {
				resp.Results[name] = n.result()
			}
		}
	}
	return resp
}

func value(e *api.Estimate) *float64 {
	if e == nil {
		return nil
	}
	v := e.Value
	return &v
}
