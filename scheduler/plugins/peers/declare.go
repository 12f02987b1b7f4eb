// Package peers is NetworkPeers' model of a pod's peers: what a pod
// declares (Declaration: its annotations, or the groups an AppGroup reader
// builds), which nodes host its peers and what share of its traffic goes
// to each (Tally), what a candidate node costs the pod (CostOf), how costs
// too close to tell apart tie (RankCosts), and how NormalizeScore turns
// costs into points (Normalize). The plugin and kubectl kns3 explain share
// it, so that what explain works out is what the plugin ranked by. It
// lives beside the plugins, imports none, and links nothing of the
// scheduler.
package peers

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

	// maxSelectors bounds the selectors of one annotation: each is matched
	// against every pod of the namespace in each scheduling cycle.
	maxSelectors = 8
)

// scheduler-plugins' AppGroup (its networkaware plugins, "Diktyo"): a pod
// names its AppGroup and its workload in these two labels; its peers are
// the pods of the workloads its workload depends on.
const (
	AppGroupLabel         = "appgroup.diktyo.x-k8s.io"
	AppGroupWorkloadLabel = "appgroup.diktyo.x-k8s.io.workload"
)

// Group is a set of peers declared at once: the pods of the pod's
// namespace that any of Selectors matches, with the traffic the pod
// expects to exchange with them all.
type Group struct {
	// Name says where the group comes from, for logs: the annotation's
	// selectors, or an AppGroup dependency's workload.
	Name      string
	Selectors []labels.Selector
	// TrafficMbps is the declared traffic, in Mbit/s; 0 when not declared.
	TrafficMbps float64
}

// Matches reports whether a pod with podLabels is in g.
func (g Group) Matches(podLabels labels.Set) bool {
	for _, s := range g.Selectors {
		if s.Matches(podLabels) {
			return true
		}
	}
	return false
}

// Declaration is what a pod declares of its peers: one group from its
// annotations, or one per dependency of its AppGroup workload.
type Declaration struct {
	Groups []Group
}

// Declares is the cheap test every pod passes through: whether pod
// carries one of the annotations or an AppGroup label at all. A pod
// without any costs the plugin nothing more.
func Declares(pod *v1.Pod) bool {
	return ByAnnotations(pod) || hasKey(pod.Labels, AppGroupLabel)
}

// ByAnnotations reports whether pod carries either annotation: its
// declaration is then its annotations' (FromAnnotations), whatever its
// AppGroup labels say.
func ByAnnotations(pod *v1.Pod) bool {
	return hasKey(pod.Annotations, PeersAnnotation) || hasKey(pod.Annotations, PeerTrafficAnnotation)
}

func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

// FromAnnotations reads pod's annotations: nil without the peers
// annotation, an error naming what is wrong with either.
func FromAnnotations(pod *v1.Pod) (*Declaration, error) {
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
	g := Group{Name: strings.TrimSpace(value), Selectors: selectors}
	if trafficOK {
		if g.TrafficMbps, err = ParseMbps(traffic); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", PeerTrafficAnnotation, err)
		}
	}
	return &Declaration{Groups: []Group{g}}, nil
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

// ParseMbps reads a traffic in bits per second, a quantity ("50M",
// "1.5G", "30Mi"), as Mbit/s; it must be above 0.
func ParseMbps(value string) (float64, error) {
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

// Matches reports whether pod is in one of d's groups (namespaces
// aside). A pod in the groups it declares itself is of a workload whose
// pods talk to each other: placing one changes where the next one's peers
// are, on every node.
func (d *Declaration) Matches(pod *v1.Pod) bool {
	if d == nil {
		return false
	}
	for _, g := range d.Groups {
		if g.Matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}

// DeclaredTraffic reports whether any group declares its traffic.
func (d *Declaration) DeclaredTraffic() bool {
	if d == nil {
		return false
	}
	for _, g := range d.Groups {
		if g.TrafficMbps > 0 {
			return true
		}
	}
	return false
}
