package placement

import (
	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// OtherFilters names what upstream's NodeUnschedulable and TaintToleration
// filters reject node for, "" when they pass it: the checks besides KNS-3's
// own filter that can be told from the node alone. kubectl kns3 explain
// shows them; the plugin's drift listing judges alternatives by them.
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
