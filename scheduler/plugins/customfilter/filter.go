// Package customfilter implements CustomFilterPlugin, which keeps pods off
// nodes an operator has excluded from KNS-3 and keeps "rigorous" pods on
// nodes that declare the capability.
package customfilter

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = "CustomFilterPlugin"

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

	// qosSignerName names the sign fragment holding the pod's QoS annotation,
	// following the naming rule in k8s.io/kube-scheduler/framework.SignFragment.
	qosSignerName = "v1.Pod.Annotations[kns-3-scheduler/qos]"
)

// CustomFilter is the CustomFilterPlugin. It is stateless.
type CustomFilter struct{}

var (
	_ fwk.FilterPlugin      = &CustomFilter{}
	_ fwk.EnqueueExtensions = &CustomFilter{}
	_ fwk.SignPlugin        = &CustomFilter{}
)

// New initializes the plugin. It takes no arguments.
func New(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return &CustomFilter{}, nil
}

// Name returns the name of the plugin.
func (pl *CustomFilter) Name() string { return Name }

// Filter rejects a node labeled scheduler=disabled, and a node without
// capability=rigorous for a pod annotated kns-3-scheduler/qos=rigorous.
// Both are Unschedulable rather than UnschedulableAndUnresolvable: the KNS-3
// specification asks for Unschedulable, and a label can change at any time.
func (pl *CustomFilter) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if reason := Rejection(pod, node); reason != "" {
		klog.FromContext(ctx).V(5).Info("Node rejected", "plugin", Name, "pod", klog.KObj(pod), "node", klog.KObj(node), "reason", reason)
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	return nil
}

// Rejection returns why the filter keeps pod off node, or "" when it lets
// the pod through: the rule Filter applies, for callers that explain it.
func Rejection(pod *v1.Pod, node *v1.Node) string {
	if node.Labels[LabelScheduler] == ValueDisabled {
		return ErrReasonDisabled
	}
	if wantsRigorous(pod) && node.Labels[LabelCapability] != ValueRigorous {
		return ErrReasonNotRigorous
	}
	return ""
}

func wantsRigorous(pod *v1.Pod) bool {
	return pod.Annotations[AnnotationQoS] == ValueRigorous
}

// SignPod lets pods with the same QoS annotation share a batched result: the
// verdict depends on nothing else of the pod.
func (pl *CustomFilter) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{Key: qosSignerName, Value: pod.Annotations[AnnotationQoS]}}, nil
}

// EventsToRegister returns the events that may turn a rejection into a fit:
// a node added, a node's labels changed, or the pod itself updated (its
// rigorous annotation removed). An annotation change has no specific
// ActionType, so the pod event is the general Update.
func (pl *CustomFilter) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.Update}, QueueingHintFn: pl.isSchedulableAfterPodChange},
	}, nil
}

// isSchedulableAfterPodChange queues the pod when it no longer asks for a
// rigorous node: only that annotation of the pod matters to this filter.
func (pl *CustomFilter) isSchedulableAfterPodChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldPod, newPod, err := as[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if wantsRigorous(oldPod) && !wantsRigorous(newPod) {
		logger.V(5).Info("Pod no longer asks for a rigorous node, it may be schedulable", "plugin", Name, "pod", klog.KObj(newPod))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// isSchedulableAfterNodeChange queues the pod only when the changed node now
// passes this filter and did not before (or is new).
func (pl *CustomFilter) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldNode, newNode, err := as[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if Rejection(pod, newNode) != "" {
		logger.V(5).Info("Node changed but still rejects the pod", "plugin", Name, "pod", klog.KObj(pod), "node", klog.KObj(newNode))
		return fwk.QueueSkip, nil
	}
	if oldNode != nil && Rejection(pod, oldNode) == "" {
		// The node already passed; its label change cannot be what the pod waits for.
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Node now passes the filter, pod may be schedulable", "plugin", Name, "pod", klog.KObj(pod), "node", klog.KObj(newNode))
	return fwk.Queue, nil
}

// as converts a queueing hint's objects to T, unwrapping a deleted object
// whose final state is unknown; a nil object stays T's zero value. It is
// upstream's util.As, here so that the readers of Rejection (kubectl kns3)
// do not link k8s.io/kubernetes and its feature gates.
func as[T any](oldObj, newObj any) (T, T, error) {
	var oldT, newT T
	if newObj != nil {
		var ok bool
		if newT, ok = newObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, but got %T", newT, newObj)
		}
	}
	if oldObj != nil {
		if d, ok := oldObj.(cache.DeletedFinalStateUnknown); ok {
			oldObj = d.Obj
		}
		var ok bool
		if oldT, ok = oldObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, but got %T", oldT, oldObj)
		}
	}
	return oldT, newT, nil
}
