package networkcapacity

import (
	"fmt"

	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// stateKey is where PreScore leaves the cycle's links. The Cycle is the
// plugin's note for the placement event too (NodeNote).
const stateKey fwk.StateKey = Name + "/links"

func init() { placement.RegisterNote(stateKey) }

// Cycle is what one scheduling cycle's PreScore found of the feasible
// nodes' links: the answer's links, and what the pods placed on each
// feasible node since the measurement need, by the link's position.
type Cycle struct {
	answer *answerLinks
	placed []placedOn
	// NeedMbps is what the pod being scheduled needs, declared or the
	// default.
	NeedMbps float64
	// targetPercent is the args' TargetUtilizationPercent.
	targetPercent int32
}

// placedOn is what PreScore counted on a feasible node's link; feasible is
// false for a node that was not.
type placedOn struct {
	mbps     float64
	pods     int32
	feasible bool
}

// link is node's link as a new pod would find it; false for a node that
// was not feasible or whose link the simulation does not describe.
func (c *Cycle) link(node string) (Link, bool) {
	pos, ok := c.answer.index[node]
	if !ok || !c.placed[pos].feasible {
		return Link{}, false
	}
	l, p := &c.answer.links[pos], c.placed[pos]
	link := Link{
		BandwidthMbps: l.BandwidthMbps, BandwidthAtLeast: l.BandwidthAtLeast, RankedBandwidthMbps: l.RankedBandwidthMbps,
		UseMbps: l.UseMbps, UseMeasured: l.UseMeasured,
		CountedMbps: p.mbps, CountedPods: int(p.pods),
		TargetPercent: c.targetPercent,
	}
	link.FreeMbps, link.BelowTargetMbps = link.free(link.BandwidthMbps)
	return link, true
}

// Link is one node's link as a new pod would find it.
type Link struct {
	// BandwidthMbps is the link's bandwidth as served, a lower bound when
	// BandwidthAtLeast.
	BandwidthMbps    float64
	BandwidthAtLeast bool
	// RankedBandwidthMbps is the bandwidth Score ranks the link at: a
	// faster link's, when this one's is within the noise of it or too
	// little below it to count (network.Link's); BandwidthMbps otherwise.
	RankedBandwidthMbps float64
	// UseMbps is the traffic measured on it, when UseMeasured.
	UseMbps     float64
	UseMeasured bool
	// CountedMbps is what the CountedPods placed since the measurement
	// need, declared or estimated.
	CountedMbps float64
	CountedPods int
	// FreeMbps is what is left: bandwidth − use − counted, at least 0.
	FreeMbps float64
	// TargetPercent is the share of the bandwidth Score fills first, and
	// BelowTargetMbps what is left of that share, at least 0.
	TargetPercent   int32
	BelowTargetMbps float64
}

// free is what a new pod would find free on the link, were its bandwidth
// bandwidth, and how much of it is below the target utilization
// (capacity.Room).
func (l Link) free(bandwidth float64) (free, belowTarget float64) {
	use := 0.0
	if l.UseMeasured {
		use = l.UseMbps
	}
	return capacity.Room(bandwidth, use, l.CountedMbps, l.TargetPercent)
}

// rankMbps is what Score ranks the link by (capacity.RankMbps), at the
// ranked bandwidth.
func (l Link) rankMbps() float64 {
	return capacity.RankMbps(l.free(l.RankedBandwidthMbps))
}

var _ placement.Note = &Cycle{}

// Clone returns c itself: a Cycle is never written after PreScore.
func (c *Cycle) Clone() fwk.StateData { return c }

func write(state fwk.CycleState, c *Cycle) { state.Write(stateKey, c) }

func read(state fwk.CycleState) (*Cycle, error) {
	data, err := state.Read(stateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from the cycle state: %w", stateKey, err)
	}
	c, ok := data.(*Cycle)
	if !ok {
		return nil, fmt.Errorf("%q holds %T, not a *networkcapacity.Cycle", stateKey, data)
	}
	return c, nil
}

// NodeNote says what the cycle found of node's link, for the placement
// event; "" when the simulation does not describe the node's link.
func (c *Cycle) NodeNote(node string) string {
	l, ok := c.link(node)
	if !ok {
		return ""
	}
	return "link: " + describe(l)
}
