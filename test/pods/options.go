// Package pods holds what the KNS-3 test suites add to upstream's pod
// wrapper, st.MakePod() from k8s.io/kubernetes/pkg/scheduler/testing: the
// suites build a pod's scheduling inputs (labels, node selector, required
// pod affinity and anti-affinity terms) with st's own methods, and take the
// KNS-3 QoS annotation and the pod shape of the kns-3-scheduler profile from
// here. The integration suite (an API server in the test process) and the
// kind suite build the same scheduling inputs on different container
// templates.
package pods

import (
	v1 "k8s.io/api/core/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// Rigorous annotates the pod kns-3-scheduler/qos=rigorous: CustomFilterPlugin
// lets it only onto capability=rigorous nodes.
func Rigorous(p *st.PodWrapper) *st.PodWrapper {
	return p.Annotation(placement.AnnotationQoS, placement.ValueRigorous)
}

// ForProfile completes a pod built with st.MakePod() for the suites: it goes
// in namespace ns, to the kns-3-scheduler profile, with one container "app"
// running image.
func ForProfile(p *st.PodWrapper, ns, image string) *st.PodWrapper {
	return p.Namespace(ns).
		SchedulerName(plugins.ProfileName).
		Containers([]v1.Container{st.MakeContainer().Name("app").Image(image).Obj()})
}
