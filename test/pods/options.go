// Package pods holds the pod options the KNS-3 test suites share: the
// integration suite (an API server in the test process) and the kind suite
// build the same scheduling inputs on different pod templates.
package pods

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kns3.dev/kns3/scheduler/plugins/customfilter"
)

// Option changes one scheduling input of a pod.
type Option func(*v1.Pod)

// Apply applies opts to pod in order.
func Apply(pod *v1.Pod, opts ...Option) {
	for _, o := range opts {
		o(pod)
	}
}

// Labels adds key/value pairs to the pod's labels.
func Labels(kv ...string) Option {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

// NodeSelector pins the pod to nodes labeled key=value.
func NodeSelector(key, value string) Option {
	return func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{key: value} }
}

// Rigorous annotates the pod kns-3-scheduler/qos=rigorous.
func Rigorous() Option {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[customfilter.AnnotationQoS] = customfilter.ValueRigorous
	}
}

// Term is a required (anti-)affinity term: pods labeled app=App, in the
// topology domain named by TopologyKey.
type Term struct{ App, TopologyKey string }

// OnHost is the hostname-scoped term for app.
func OnHost(app string) Term { return Term{App: app, TopologyKey: v1.LabelHostname} }

// InZone is the zone-scoped term for app.
func InZone(app string) Term { return Term{App: app, TopologyKey: v1.LabelTopologyZone} }

func podTerms(terms []Term) []v1.PodAffinityTerm {
	out := make([]v1.PodAffinityTerm, len(terms))
	for i, tm := range terms {
		out[i] = v1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": tm.App}},
			TopologyKey:   tm.TopologyKey,
		}
	}
	return out
}

// Affinity requires every one of terms (a conjunction).
func Affinity(terms ...Term) Option {
	return func(p *v1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: podTerms(terms)}
	}
}

// AntiAffinity forbids nodes where any one of terms matches (a disjunction).
func AntiAffinity(terms ...Term) Option {
	return func(p *v1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: podTerms(terms)}
	}
}
