package networkpeers

import (
	"errors"
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// The annotations with which a pod declares its peers: the pods of its
// namespace it talks to, as label selectors (kubectl's syntax: "app=cart",
// "tier in (web, api),!canary"), several separated by ";" (a pod is a peer
// when any of them matches it), and the traffic it expects to exchange with
// them all, a quantity in bits per second ("50M"), optional.
const (
	PeersAnnotation       = "kns-3-scheduler/peers"
	PeerTrafficAnnotation = "kns-3-scheduler/peer-traffic"

	// ReasonInvalidPeers is the reason of the Warning event a pod gets when
	// its declaration cannot be read; it is then scheduled as if it
	// declared no peers.
	ReasonInvalidPeers = "InvalidPeers"

	// maxSelectors bounds the selectors of one annotation: each is matched
	// against every pod of the namespace in each scheduling cycle.
	maxSelectors = 8
)

// The keys of SignPod's fragments, named as upstream names its own.
const (
	namespaceSignerName   = "v1.Pod.Namespace"
	peersSignerName       = "v1.Pod.Annotations[" + PeersAnnotation + "]"
	trafficSignerName     = "v1.Pod.Annotations[" + PeerTrafficAnnotation + "]"
	appGroupSignerName    = "v1.Pod.Labels[" + AppGroupLabel + "]"
	appWorkloadSignerName = "v1.Pod.Labels[" + AppGroupWorkloadLabel + "]"
)

// group is a set of peers declared at once: the pods of the pod's
// namespace that any of selectors matches, with the traffic the pod
// expects to exchange with them all.
type group struct {
	// name says where the group comes from, for logs: the annotation's
	// selectors, or an AppGroup dependency's workload.
	name      string
	selectors []labels.Selector
	// trafficMbps is the declared traffic, in Mbit/s; 0 when not declared.
	trafficMbps float64
}

// matches reports whether a pod with podLabels is in g.
func (g group) matches(podLabels labels.Set) bool {
	for _, s := range g.selectors {
		if s.Matches(podLabels) {
			return true
		}
	}
	return false
}

// declaration is what a pod declares of its peers: one group from its
// annotations, or one per dependency of its AppGroup workload.
type declaration struct {
	groups []group
}

// declaresPeers is the cheap test every pod passes through: whether pod
// carries one of the annotations or an AppGroup label at all. A pod
// without any costs the plugin nothing more.
func declaresPeers(pod *v1.Pod) bool {
	if _, ok := pod.Annotations[PeersAnnotation]; ok {
		return true
	}
	if _, ok := pod.Annotations[PeerTrafficAnnotation]; ok {
		return true
	}
	_, ok := pod.Labels[AppGroupLabel]
	return ok
}

// fromAnnotations reads pod's annotations: nil without the peers
// annotation, an error naming what is wrong with either.
func fromAnnotations(pod *v1.Pod) (*declaration, error) {
	value, ok := pod.Annotations[PeersAnnotation]
	traffic, trafficOK := pod.Annotations[PeerTrafficAnnotation]
	if !ok {
		if trafficOK {
			return nil, fmt.Errorf("annotation %s is set but %s is not: traffic to no peers", PeerTrafficAnnotation, PeersAnnotation)
		}
		return nil, nil
	}
	selectors, err := parseSelectors(value)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", PeersAnnotation, err)
	}
	g := group{name: strings.TrimSpace(value), selectors: selectors}
	if trafficOK {
		if g.trafficMbps, err = parseMbps(traffic); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", PeerTrafficAnnotation, err)
		}
	}
	return &declaration{groups: []group{g}}, nil
}

// parseSelectors reads selectors separated by ";"; empty entries (a
// trailing ";") are skipped, but there must be one.
func parseSelectors(value string) ([]labels.Selector, error) {
	var selectors []labels.Selector
	for i, part := range strings.Split(value, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		s, err := labels.Parse(part)
		if err != nil {
			return nil, fmt.Errorf("selector %d (%q): %w", i+1, part, err)
		}
		if s.Empty() {
			return nil, fmt.Errorf("selector %d (%q) matches every pod", i+1, part)
		}
		selectors = append(selectors, s)
	}
	switch {
	case len(selectors) == 0:
		return nil, errors.New(`no label selector (want e.g. "app=cart", several separated by ";")`)
	case len(selectors) > maxSelectors:
		return nil, fmt.Errorf("%d selectors, at most %d", len(selectors), maxSelectors)
	}
	return selectors, nil
}

// parseMbps reads a traffic in bits per second, a quantity ("50M",
// "1.5G", "30Mi"), as Mbit/s; it must be above 0.
func parseMbps(value string) (float64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(value))
	if err != nil {
		return 0, fmt.Errorf("%q is no quantity of bits per second (want e.g. \"50M\"): %w", value, err)
	}
	mbps := q.AsApproximateFloat64() / 1e6
	if !(mbps > 0) || math.IsInf(mbps, 0) {
		return 0, fmt.Errorf("%q: want a traffic above 0 bits per second", value)
	}
	return mbps, nil
}

// matches reports whether pod is in one of d's groups (namespaces
// aside). A pod in the groups it declares itself is of a workload whose
// pods talk to each other: placing one changes where the next one's peers
// are, on every node.
func (d *declaration) matches(pod *v1.Pod) bool {
	if d == nil {
		return false
	}
	for _, g := range d.groups {
		if g.matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}

// declaredTraffic reports whether any group declares its traffic.
func (d *declaration) declaredTraffic() bool {
	if d == nil {
		return false
	}
	for _, g := range d.groups {
		if g.trafficMbps > 0 {
			return true
		}
	}
	return false
}
