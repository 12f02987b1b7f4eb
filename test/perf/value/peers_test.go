package value

import "testing"

// TestAgainst checks ratios to a placement other than the default: each
// trial's to its own run of that placement, and none from a trial whose
// run of it measured nothing.
func TestAgainst(t *testing.T) {
	trial := func(def, aff, peers float64) Trial {
		return Trial{Order: PeersPlacements, Placements: []Placement{
			{Name: PlacementDefault, P99Ms: def, Mbps: 100},
			{Name: PlacementAffinity, P99Ms: aff, Mbps: 50},
			{Name: PlacementNoPeers, P99Ms: def, Mbps: 100},
			{Name: PlacementPeers, P99Ms: peers, Mbps: 150},
		}}
	}
	l := Level{Placements: PeersPlacements, Trials: []Trial{trial(100, 40, 20), trial(100, 10, 20), trial(100, 80, 20)}}
	vsAffinity := l.Against(1)
	// p99 ratios 0.5, 2 and 0.25; throughput 3 in every trial.
	if s := vsAffinity[3]; s.Name != PlacementPeers || s.MedianP99Ratio != 0.5 || s.WorstP99Ratio != 2 || s.MedianMbpsRatio != 3 || s.WorstMbpsRatio != 3 {
		t.Errorf("NetworkPeers against affinity: %+v", s)
	}
	if s := vsAffinity[1]; s.MedianP99Ratio != 1 || s.WorstMbpsRatio != 1 {
		t.Errorf("affinity against itself: %+v, want ratios of 1", s)
	}
	l.Summarise()
	if s := l.Summary[3]; s.MedianP99Ratio != 0.2 || s.MedianMbpsRatio != 1.5 {
		t.Errorf("NetworkPeers against the default: %+v, want 0.2× p99 and 1.5× throughput", s)
	}
	l.Trials = append(l.Trials, trial(100, 0, 1))
	if s := l.Against(1)[3]; s.WorstP99Ratio != 2 || s.MedianP99Ratio != 0.5 || s.MedianP99Ms != 20 {
		t.Errorf("with an affinity run that measured nothing: %+v, want its trial left out of the ratios only", s)
	}
	if got := l.Against(4); got[3].MedianP99Ratio != 0 || got[3].MedianP99Ms != 20 {
		t.Errorf("against a placement no trial has: %+v, want figures without ratios", got[3])
	}
}

func TestServerFullAndAcross(t *testing.T) {
	pair := []string{"w2", "w3"}
	p := Placement{Nodes: map[string]int{"w2": 1, "w3": 4, "cp": 1}}
	if p.ServerFull(6) || p.Across(pair) != 0 {
		t.Errorf("a placement without a server: full %v, across %d, want neither", p.ServerFull(6), p.Across(pair))
	}
	p.Server = &Server{Node: "w3", Room: 6}
	if p.ServerFull(6) {
		t.Error("room for all 6 clients counted as full")
	}
	if got := p.Across(pair); got != 1 {
		t.Errorf("server on w3: %d client(s) across the pair, want w2's 1", got)
	}
	p.Server = &Server{Node: "w2", Room: 5}
	if !p.ServerFull(6) {
		t.Error("room for 5 of 6 clients not counted as full")
	}
	if got := p.Across(pair); got != 4 {
		t.Errorf("server on w2: %d client(s) across the pair, want w3's 4", got)
	}
	p.Server.Node = "cp"
	if got := p.Across(pair); got != 0 {
		t.Errorf("server off the pair: %d across it, want 0", got)
	}
}
