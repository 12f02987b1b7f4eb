package networkpeers

import (
	"fmt"
	"strconv"
	"strings"

	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// stateKey is where PreScore leaves the cycle's costs. The Cycle is the
// plugin's note for the placement event too (NodeNote).
const stateKey fwk.StateKey = Name + "/peers"

func init() { placement.RegisterNote(stateKey) }

// Cycle is what one scheduling cycle's PreScore found: where the pod's
// peers are, and what each feasible node costs.
type Cycle struct {
	hosts []peers.Host
	pairs *network.Pairs
	links map[string]network.Link
	costs map[string]peers.NodeCost
	// lowestMs is the lowest known cost of the cycle.
	lowestMs float64
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
		return nil, fmt.Errorf("%q holds %T, not a *networkpeers.Cycle", stateKey, data)
	}
	return c, nil
}

// notedHosts bounds the peers' nodes the note names: the event holds 1 kB.
const notedHosts = 4

// NodeNote says where the pod's peers are and what reaching them costs
// from node, e.g. "peers: 2 on this node, 3 on kns-3-worker2 (0.12 ms),
// 1 on kns-3-worker3 (measured 2.1 ms, 4 % loss); cost 0.61 ms, lowest
// 0.12 ms". A round trip without "measured" is the coordinates' estimate.
func (c *Cycle) NodeNote(node string) string {
	cost, ok := c.costs[node]
	if !ok {
		return ""
	}
	nodeLink, nodeKnown := c.links[node]
	parts := make([]string, 0, notedHosts+1)
	for i, h := range c.hosts {
		if i == notedHosts {
			rest := c.hosts[i:]
			parts = append(parts, fmt.Sprintf("%d more on %d nodes", peers.PeerCount(rest), len(rest)))
			break
		}
		pc := c.pairs.Cost(node, h.Node)
		if pc.Source == network.CostSameNode {
			parts = append(parts, fmt.Sprintf("%d on this node", h.Pods))
			continue
		}
		hostLink, hostKnown := c.links[h.Node]
		share := peers.TrafficShare(pc, h.TrafficMbps, nodeLink, hostLink, nodeKnown, hostKnown)
		parts = append(parts, fmt.Sprintf("%d on %s (%s)", h.Pods, h.Node, describePair(pc, share)))
	}
	total := "cost unknown"
	if cost.Known {
		total = fmt.Sprintf("cost %s ms, lowest %s ms", ms(cost.Ms), ms(c.lowestMs))
	}
	return "peers: " + strings.Join(parts, ", ") + "; " + total
}

// describePair is what the note says of one pair: its round trip, its
// loss, and the share of its free bandwidth the pod's traffic would take.
func describePair(pc network.PairCost, share float64) string {
	if !pc.Known() {
		return "not measured"
	}
	s := ms(pc.RTTMs) + " ms"
	if pc.Source == network.CostMeasured {
		s = "measured " + s
	}
	if pc.LossKnown && pc.Loss > 0 {
		s += ", " + strconv.FormatFloat(pc.Loss*100, 'g', 2, 64) + " % loss"
	}
	if share > 0 {
		s += fmt.Sprintf(", traffic %.0f %% of its free bandwidth", min(share, 9.99)*100)
	}
	return s
}

// ms writes a duration in milliseconds to two significant digits.
func ms(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}
