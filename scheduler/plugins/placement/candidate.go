package placement

import (
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// KNS-3's own rule for which nodes a pod may go to: CustomFilterPlugin
// applies it (Rejection), and Judge, with it, tells a candidate node.
const (
	// LabelScheduler set to ValueDisabled on a node excludes it from KNS-3 scheduling.
	LabelScheduler = "scheduler"
	// ValueDisabled is the value of LabelScheduler that excludes a node.
	ValueDisabled = "disabled"
	// LabelCapability set to ValueRigorous marks a node fit for rigorous pods.
	LabelCapability = "capability"
	// AnnotationQoS set to ValueRigorous asks for a node with LabelCapability=rigorous.
	AnnotationQoS = "kns-3-scheduler/qos"
	// ValueRigorous is the QoS class and the capability that goes with it.
	ValueRigorous = "rigorous"

	// ErrReasonDisabled is reported for nodes labeled scheduler=disabled.
	ErrReasonDisabled = "node(s) had label scheduler=disabled"
	// ErrReasonNotRigorous is reported for nodes a rigorous pod cannot use.
	ErrReasonNotRigorous = "node(s) didn't have label capability=rigorous required by pod annotation kns-3-scheduler/qos=rigorous"
)

// Rejection returns why CustomFilterPlugin keeps pod off node, or "" when
// it lets the pod through: the rule its Filter applies, for it and for
// callers that explain it.
func Rejection(pod *v1.Pod, node *v1.Node) string {
	if node.Labels[LabelScheduler] == ValueDisabled {
		return ErrReasonDisabled
	}
	if WantsRigorous(pod) && node.Labels[LabelCapability] != ValueRigorous {
		return ErrReasonNotRigorous
	}
	return ""
}

// WantsRigorous reports whether pod asks for a rigorous node.
func WantsRigorous(pod *v1.Pod) bool {
	return pod.Annotations[AnnotationQoS] == ValueRigorous
}

// Verdict is what can be told, from the pod and the node alone, of
// whether the pod could go to the node. Resources, affinities and spread
// are the scheduler's to judge, and are not.
type Verdict struct {
	// Filter is why CustomFilterPlugin rejects the node, "" when it passes.
	Filter string
	// Other is why upstream's NodeUnschedulable or TaintToleration filter
	// rejects it (OtherFilters), "" when they pass it.
	Other string
}

// Candidate reports whether the node passes every check of the verdict.
func (v Verdict) Candidate() bool { return v.Filter == "" && v.Other == "" }

// Judge is the one rule for "is this node a candidate for this pod" that
// the plugin's drift listing and kubectl kns3 explain share: KNS-3's
// filter, cordons and taints (explain also applies the pod's required node
// affinity, which Class does not name). It reads of the pod only what
// Class names.
func Judge(pod *v1.Pod, node *v1.Node) Verdict {
	return Verdict{Filter: Rejection(pod, node), Other: OtherFilters(pod, node)}
}

// Class names what Judge reads of pod: pods of one class get the same
// verdict on every node, so a caller judging many pods (drift) judges each
// class once. It holds values only (TolerationSeconds dereferenced; the
// pointers of equal tolerations differ from pod to pod), and the
// tolerations in a canonical order, which Judge does not depend on.
func Class(pod *v1.Pod) string {
	tolerations := make([]string, len(pod.Spec.Tolerations))
	for i, t := range pod.Spec.Tolerations {
		seconds := "-"
		if t.TolerationSeconds != nil {
			seconds = strconv.FormatInt(*t.TolerationSeconds, 10)
		}
		tolerations[i] = strconv.Quote(t.Key) + " " + strconv.Quote(string(t.Operator)) + " " + strconv.Quote(t.Value) + " " +
			strconv.Quote(string(t.Effect)) + " " + seconds
	}
	slices.Sort(tolerations)
	return strconv.Quote(pod.Annotations[AnnotationQoS]) + "|" + strings.Join(tolerations, "|")
}

// OtherFilters names what upstream's NodeUnschedulable and TaintToleration
// filters reject node for, "" when they pass it: the checks besides KNS-3's
// own filter that can be told from the node alone.
func OtherFilters(pod *v1.Pod, node *v1.Node) string {
	if node.Spec.Unschedulable && !tolerates(pod, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}) {
		return "node is unschedulable"
	}
	taint, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}, false)
	if untolerated {
		return "untolerated taint " + taint.ToString()
	}
	return ""
}

func tolerates(pod *v1.Pod, taint v1.Taint) bool {
	return v1helper.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, &taint, false)
}
