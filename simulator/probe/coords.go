package probe

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hashicorp/serf/coordinate"
)

// Network coordinates. Every agent echoes one random other agent about
// once a second and keeps the round trip (or the loss); the prober
// collects those samples and runs Vivaldi here, centrally: one
// coordinate.Client per node, updated with each round trip its agent
// measured, against the peer's coordinate as it stands. The distance
// between two nodes' coordinates then estimates their round trip, for
// every pair, from about one sample per node a second.

// maxFilteredPeers bounds the peers whose last round trips a node's client
// keeps for its latency filter (a median of three per peer): a node meets
// a new random peer nearly every second, and a filter per peer met would
// grow with the cluster, so the peer met longest ago is forgotten.
const maxFilteredPeers = 32

// coordinates are the nodes' network coordinates. Not safe for concurrent
// use: the prober holds p.mu.
type coordinates struct {
	config *coordinate.Config
	nodes  map[string]*nodeCoordinate
}

// nodeCoordinate is one node's Vivaldi client and what updated it.
type nodeCoordinate struct {
	client *coordinate.Client
	// coord is the client's coordinate, as its last update left it: never
	// changed, replaced by the next, so that it can be read without a
	// copy.
	coord *coordinate.Coordinate
	// samples is how many round trips updated it, at the newest one's
	// time.
	samples int
	at      time.Time
	// filtered are the peers whose samples the client's latency filter
	// holds, oldest first.
	filtered []string
}

func newCoordinates() *coordinates {
	return &coordinates{config: coordinate.DefaultConfig(), nodes: map[string]*nodeCoordinate{}}
}

// node returns name's coordinate, making one. A new one starts a
// few microseconds from the origin in a direction of its own, drawn from its
// name: closer together than a microsecond, serf takes the direction of
// each update at random, and the result would differ from run to run.
func (c *coordinates) node(name string) *nodeCoordinate {
	if n, ok := c.nodes[name]; ok {
		return n
	}
	client, err := coordinate.NewClient(c.config)
	if err != nil {
		// DefaultConfig is valid.
		panic(fmt.Sprintf("coordinates: %v", err))
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x6b6e73))
	start := coordinate.NewCoordinate(c.config)
	for i := range start.Vec {
		start.Vec[i] = (rng.Float64() - 0.5) * 1e-5
	}
	_ = client.SetCoordinate(start)
	n := &nodeCoordinate{client: client, coord: start}
	c.nodes[name] = n
	return n
}

// update takes a round trip from's agent measured to to's, at at: from's
// coordinate moves against to's. It says whether the sample was taken;
// serf refuses a round trip over ten seconds, and a node is not its own
// peer.
func (c *coordinates) update(from, to string, rtt time.Duration, at time.Time) bool {
	if from == to || rtt < 0 {
		return false
	}
	src, dst := c.node(from), c.node(to)
	coord, err := src.client.Update(to, dst.coord, rtt)
	if err != nil {
		return false
	}
	src.coord = coord
	src.samples++
	src.at = latest(src.at, at)
	src.filter(to)
	return true
}

// filter notes that the client's latency filter holds peer's samples now,
// forgetting the peer met longest ago past maxFilteredPeers.
func (n *nodeCoordinate) filter(peer string) {
	if i := slices.Index(n.filtered, peer); i >= 0 {
		n.filtered = append(append(n.filtered[:i], n.filtered[i+1:]...), peer)
		return
	}
	n.filtered = append(n.filtered, peer)
	if len(n.filtered) > maxFilteredPeers {
		n.client.ForgetNode(n.filtered[0])
		n.filtered = n.filtered[1:]
	}
}

// forget drops name's coordinate: its node is gone.
func (c *coordinates) forget(name string) { delete(c.nodes, name) }

// estimate is the round trip between a and b their coordinates predict;
// ok is false when either has none yet.
func (c *coordinates) estimate(a, b string) (time.Duration, bool) {
	na, oka := c.nodes[a]
	nb, okb := c.nodes[b]
	if !oka || !okb || na.samples == 0 || nb.samples == 0 {
		return 0, false
	}
	return na.coord.DistanceTo(nb.coord), true
}

// nearest returns the k nodes of candidates whose coordinates are closest
// to node's, nearest first, leaving out node itself and nodes without
// samples; nil when node has none.
func (c *coordinates) nearest(node string, candidates []string, k int) []string {
	n, ok := c.nodes[node]
	if !ok || n.samples == 0 || k <= 0 {
		return nil
	}
	type near struct {
		name string
		d    time.Duration
	}
	var all []near
	for _, other := range candidates {
		o, ok := c.nodes[other]
		if other == node || !ok || o.samples == 0 {
			continue
		}
		all = append(all, near{other, n.coord.DistanceTo(o.coord)})
	}
	slices.SortFunc(all, func(a, b near) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name)) })
	out := make([]string, 0, min(k, len(all)))
	for _, a := range all[:min(k, len(all))] {
		out = append(out, a.name)
	}
	return out
}

// NodeCoordinate is one node's network coordinate as the snapshot serves
// it: serf's, with how many round trips updated it and when the newest
// was measured. Coordinate is shared: read it, never change it.
type NodeCoordinate struct {
	Coordinate *coordinate.Coordinate
	Samples    int
	At         time.Time
}

// snapshot returns every node's coordinate that samples updated.
func (c *coordinates) snapshot() map[string]NodeCoordinate {
	out := make(map[string]NodeCoordinate, len(c.nodes))
	for name, n := range c.nodes {
		if n.samples > 0 {
			out[name] = NodeCoordinate{Coordinate: n.coord, Samples: n.samples, At: n.at}
		}
	}
	return out
}
