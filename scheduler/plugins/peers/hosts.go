package peers

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// Host is one node that hosts peers of the pod being scheduled.
type Host struct {
	Node string
	// Pairs is Node as a ranking's pairs know it (network.Pairs.Node),
	// looked up once for every candidate; the zero Node until then.
	Pairs network.Node
	// Pods is how many of the pod's peers it hosts.
	Pods int
	// Weight is its share of the pod's traffic, as a ranking weighs it:
	// the weights of all hosts sum to 1.
	Weight float64
	// TrafficMbps is the declared traffic to its peers, 0 when the pod
	// declares none for them.
	TrafficMbps float64
}

// Tally finds, among the pods it is shown with their nodes (Add), the
// peers a declaration declares for a pod, and weighs the nodes that host
// them (Hosts).
type Tally struct {
	pod     *v1.Pod
	groups  []Group
	counts  []map[string]int // by group, pods by node
	members []int            // by group
}

// NewTally starts the tally of pod's peers as d declares them.
func NewTally(pod *v1.Pod, d *Declaration) *Tally {
	t := &Tally{pod: pod}
	if d != nil {
		t.groups = d.Groups
		t.counts, t.members = make([]map[string]int, len(d.Groups)), make([]int, len(d.Groups))
	}
	return t
}

// Add counts p, on node, when it is one of the pod's peers: a pod of the
// pod's namespace that a group matches, other than the pod itself, and
// not finished or leaving. It reports whether it counted p. A pod of
// another namespace costs a comparison.
func (t *Tally) Add(node string, p *v1.Pod) bool {
	if p.Namespace != t.pod.Namespace {
		return false
	}
	return t.add(node, p)
}

func (t *Tally) add(node string, p *v1.Pod) bool {
	if p.UID == t.pod.UID || p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return false
	}
	counted := false
	for i, g := range t.groups {
		if g.Matches(labels.Set(p.Labels)) {
			if t.counts[i] == nil {
				t.counts[i] = map[string]int{}
			}
			t.counts[i][node]++
			t.members[i]++
			counted = true
		}
	}
	return counted
}

// Hosts returns the nodes that host the peers counted, most peers first,
// then by name; nil when none does.
//
// Each group's traffic is shared evenly among its pods. A group without a
// declared traffic weighs as the mean of those declared, or 1 when none
// is: only the weights' ratios rank nodes.
func (t *Tally) Hosts() []Host {
	weights := groupWeights(t.groups)
	byNode := map[string]*Host{}
	total := 0.0
	for i, g := range t.groups {
		for name, c := range t.counts[i] {
			h := byNode[name]
			if h == nil {
				h = &Host{Node: name}
				byNode[name] = h
			}
			share := float64(c) / float64(t.members[i])
			h.Pods += c
			h.Weight += weights[i] * share
			h.TrafficMbps += g.TrafficMbps * share
			total += weights[i] * share
		}
	}
	if len(byNode) == 0 {
		return nil
	}
	hosts := make([]Host, 0, len(byNode))
	for _, h := range byNode {
		h.Weight /= total
		hosts = append(hosts, *h)
	}
	slices.SortFunc(hosts, func(a, b Host) int {
		if c := cmp.Compare(b.Pods, a.Pods); c != 0 {
			return c
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return hosts
}

// groupWeights weighs each group by its declared traffic; a group without
// one by the mean of those declared, or 1 when none is.
func groupWeights(groups []Group) []float64 {
	sum, declared := 0.0, 0
	for _, g := range groups {
		if g.TrafficMbps > 0 {
			sum += g.TrafficMbps
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
		if g.TrafficMbps > 0 {
			weights[i] = g.TrafficMbps
		}
	}
	return weights
}

// PeerCount is how many peers hosts hold.
func PeerCount(hosts []Host) int {
	n := 0
	for _, h := range hosts {
		n += h.Pods
	}
	return n
}
