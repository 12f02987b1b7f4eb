package networkpeers

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// peerHost is one node that hosts peers of the pod being scheduled.
type peerHost struct {
	node string
	// pairs is node as the cycle's pairs know it (network.Pairs.Node),
	// looked up once for every candidate.
	pairs network.Node
	// pods is how many of the pod's peers it hosts.
	pods int
	// weight is its share of the pod's traffic, as a ranking weighs it:
	// the weights of all hosts sum to 1.
	weight float64
	// trafficMbps is the declared traffic to its peers, 0 when the pod
	// declares none for them.
	trafficMbps float64
}

// findPeers finds, among the pods on nodes, the peers d declares for pod:
// pods of pod's namespace that a group matches, other than pod, and not
// finished or leaving. The scheduler's snapshot holds the pods it assumed
// and has not bound yet, so the pods of one burst see each other. It
// returns the nodes that host them, most peers first; nil when none does.
//
// Each group's traffic is shared evenly among its pods. A group without a
// declared traffic weighs as the mean of those declared, or 1 when none
// is: only the weights' ratios rank nodes.
func findPeers(nodes []fwk.NodeInfo, pod *v1.Pod, d *declaration) []peerHost {
	if d == nil || len(d.groups) == 0 {
		return nil
	}
	counts := make([]map[string]int, len(d.groups)) // by group, pods by node
	members := make([]int, len(d.groups))
	for _, n := range nodes {
		node := n.Node()
		if node == nil {
			continue
		}
		for _, pi := range n.GetPods() {
			p := pi.GetPod()
			if p.Namespace != pod.Namespace || p.UID == pod.UID || p.DeletionTimestamp != nil ||
				p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			for i, g := range d.groups {
				if g.matches(labels.Set(p.Labels)) {
					if counts[i] == nil {
						counts[i] = map[string]int{}
					}
					counts[i][node.Name]++
					members[i]++
				}
			}
		}
	}
	weights := groupWeights(d.groups)
	byNode := map[string]*peerHost{}
	total := 0.0
	for i, g := range d.groups {
		for name, c := range counts[i] {
			h := byNode[name]
			if h == nil {
				h = &peerHost{node: name}
				byNode[name] = h
			}
			share := float64(c) / float64(members[i])
			h.pods += c
			h.weight += weights[i] * share
			h.trafficMbps += g.trafficMbps * share
			total += weights[i] * share
		}
	}
	if len(byNode) == 0 {
		return nil
	}
	hosts := make([]peerHost, 0, len(byNode))
	for _, h := range byNode {
		h.weight /= total
		hosts = append(hosts, *h)
	}
	slices.SortFunc(hosts, func(a, b peerHost) int {
		if c := cmp.Compare(b.pods, a.pods); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	return hosts
}

// groupWeights weighs each group by its declared traffic; a group without
// one by the mean of those declared, or 1 when none is.
func groupWeights(groups []group) []float64 {
	sum, declared := 0.0, 0
	for _, g := range groups {
		if g.trafficMbps > 0 {
			sum += g.trafficMbps
			declared++
		}
	}
	fallback := 1.0
	if declared > 0 {
		fallback = sum / float64(declared)
	}
	weights := make([]float64, len(groups))
	for i, g := range groups {
		weights[i] = fallback
		if g.trafficMbps > 0 {
			weights[i] = g.trafficMbps
		}
	}
	return weights
}

// peerCount is how many peers hosts hold.
func peerCount(hosts []peerHost) int {
	n := 0
	for _, h := range hosts {
		n += h.pods
	}
	return n
}
