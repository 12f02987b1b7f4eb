package networkcapacity

import (
	"sync"
	"time"

	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// answerLinks is what the plugin reads of one answer, once: each node's
// link, at a position of its own, and the pods counted on each node. A
// count depends on the node's pods, which the NodeInfo's generation
// changes with, and on the link's window, which the answer fixes; so it is
// kept for the generation it was made from, and a cycle counts again only
// the nodes whose NodeInfo changed since an earlier cycle on the same
// answer: between two cycles, the last pod's node and the few whose pods
// changed, where every node's pods used to be walked in every cycle.
type answerLinks struct {
	sim *network.Simulation
	// index is each described node's position in links; since is, by
	// the same position, the time after which a pod started on the node
	// is counted (capacity.CountedSince of its link's window).
	index map[string]int32
	links []network.Link
	since []time.Time
	// atLeast is whether any link's bandwidth is only a lower bound.
	atLeast bool

	// mu guards counts, which only PreScore reads and writes.
	mu     sync.Mutex
	counts []nodeCount
}

// nodeCount is countPlacedSince's result for one NodeInfo generation.
type nodeCount struct {
	generation int64
	// late is whether the count was made after the link's
	// capacity.CountedSince, when a pod not ready counts
	// (capacity.StartedAt): a count holds on its side of that time only.
	late bool
	mbps float64
	pods int32
}

// answerFor returns the plugin's reading of sim: the one it holds when
// sim is the answer it read last, else a new one, which it holds from
// then on.
func (pl *NetworkCapacity) answerFor(sim *network.Simulation) *answerLinks {
	if a := pl.answer.Load(); a != nil && a.sim == sim {
		return a
	}
	links := sim.Links()
	a := &answerLinks{sim: sim, index: make(map[string]int32, len(links)), links: make([]network.Link, 0, len(links)),
		since: make([]time.Time, 0, len(links))}
	for name, l := range links {
		a.index[name] = int32(len(a.links))
		a.links = append(a.links, l)
		a.since = append(a.since, capacity.CountedSince(l.WindowStart))
		a.atLeast = a.atLeast || l.BandwidthAtLeast
	}
	a.counts = make([]nodeCount, len(a.links))
	pl.answer.Store(a)
	return a
}

// counted is countPlacedSince on node, whose link is at pos, at now: the
// count kept for the node's NodeInfo generation when there is one. The
// caller holds a.mu. A NodeInfo of generation 0 is none the scheduler's
// cache made, and its count is not kept.
func (a *answerLinks) counted(pos int32, node fwk.NodeInfo, now time.Time, defaultMbps int64) (float64, int) {
	late := now.After(a.since[pos])
	gen := node.GetGeneration()
	kept := &a.counts[pos]
	if gen != 0 && kept.generation == gen && kept.late == late {
		return kept.mbps, int(kept.pods)
	}
	mbps, pods := countPlacedSince(node, a.links[pos].WindowStart, now, defaultMbps)
	if gen != 0 {
		*kept = nodeCount{generation: gen, late: late, mbps: mbps, pods: int32(pods)}
	}
	return mbps, pods
}
