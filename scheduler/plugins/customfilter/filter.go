// Package customfilter implements CustomFilterPlugin, which keeps pods off
// nodes an operator has excluded from KNS-3 and keeps "rigorous" pods on
// nodes that declare the capability. The rule itself, with its labels,
// annotation and reasons, is placement's (placement.Rejection): drift and
// kubectl kns3 judge nodes by it too, without this plugin.
package customfilter

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/placement"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = "CustomFilterPlugin"

// qosSignerName names the sign fragment holding the pod's QoS annotation,
// following the naming rule in k8s.io/kube-scheduler/framework.SignFragment.
const qosSignerName = "v1.Pod.Annotations[" + placement.AnnotationQoS + "]"

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
	if reason := placement.Rejection(pod, node); reason != "" {
		klog.FromContext(ctx).V(5).Info("Node rejected", "plugin", Name, "pod", klog.KObj(pod), "node", klog.KObj(node), "reason", reason)
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	return nil
}

// SignPod lets pods with the same QoS annotation share a batched result: the
// verdict depends on nothing else of the pod.
func (pl *CustomFilter) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{Key: qosSignerName, Value: pod.Annotations[placement.AnnotationQoS]}}, nil
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
	if placement.WantsRigorous(oldPod) && !placement.WantsRigorous(newPod) {
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
	if placement.Rejection(pod, newNode) != "" {
		logger.V(5).Info("Node changed but still rejects the pod", "plugin", Name, "pod", klog.KObj(pod), "node", klog.KObj(newNode))
		return fwk.QueueSkip, nil
	}
	if oldNode != nil && placement.Rejection(pod, oldNode) == "" {
		// The node already passed; its label change cannot be what the pod waits for.
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Node now passes the filter, pod may be schedulable", "plugin", Name, "pod", klog.KObj(pod), "node", klog.KObj(newNode))
	return fwk.Queue, nil
}

// as converts a queueing hint's objects to T, unwrapping a deleted object
// whose final state is unknown; a nil object stays T's zero value. It is
// upstream's util.As, copied so that the plugin does not link upstream's
// scheduler utilities and, with them, its feature gates.
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
