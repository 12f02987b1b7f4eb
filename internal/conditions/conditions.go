// Package conditions holds the wait conditions and scheduling messages that
// KNS-3's test suites and tools poll the API server for, after upstream's
// k8s.io/kubernetes/test/integration/util: each condition is a
// wait.ConditionWithContextFunc, for wait.PollUntilContextTimeout or
// e2e-framework's klient/wait.For. It depends on client-go alone, so that
// the integration suite, the kind suite, internal/kindenv and the demo may all
// import it.
package conditions

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/scheduler/apis/status"
)

// PodScheduled is true once the pod is bound to a node. An error reading the
// pod ends the wait.
func PodScheduled(cs kubernetes.Interface, ns, name string) wait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return pod.Spec.NodeName != "", nil
	}
}

// PodFailedScheduling is true once the scheduler has recorded a
// FailedScheduling event for the pod while it is unbound. The pod being
// bound, or an error reading it, ends the wait with an error.
func PodFailedScheduling(cs kubernetes.Interface, ns, name string) wait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.Spec.NodeName != "" {
			return false, fmt.Errorf("pod was bound to %s", pod.Spec.NodeName)
		}
		events, err := failedScheduling(ctx, cs, ns, name)
		if err != nil {
			return false, err
		}
		return len(events) > 0, nil
	}
}

// NodesReady is true once there is a node and every node reports Ready.
// Errors listing the nodes are retried: the API server of a cluster that is
// coming up may not answer yet.
func NodesReady(cs kubernetes.Interface) wait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		notReady, err := NotReadyNodes(ctx, cs)
		if err != nil {
			return false, nil
		}
		return len(notReady) == 0, nil
	}
}

// NotReadyNodes names the nodes that do not report Ready; with no node at
// all it says so.
func NotReadyNodes(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if len(nodes.Items) == 0 {
		return []string{"(no nodes)"}, nil
	}
	var notReady []string
	for _, n := range nodes.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			notReady = append(notReady, n.Name)
		}
	}
	return notReady, nil
}

// PodsBound is true once at least n pods exist in ns and every one of them
// is bound. Errors listing the pods are retried.
func PodsBound(cs kubernetes.Interface, ns string, n int) wait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) < n {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	}
}

// PlacementEvents are the pod's placement events (CustomBindPlugin's
// NetworkPlacement), by name, which the recorder derives from the pod's
// name and the event's time.
func PlacementEvents(ctx context.Context, cs kubernetes.Interface, ns, name string) ([]v1.Event, error) {
	return podEvents(ctx, cs, ns, name, status.PlacementEventReason)
}

// PlacementRecorded is true once the pod has a placement event: the
// recorder writes events asynchronously, after the binding.
func PlacementRecorded(cs kubernetes.Interface, ns, name string) wait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		events, err := PlacementEvents(ctx, cs, ns, name)
		return err == nil && len(events) > 0, nil
	}
}

// LastFailedSchedulingMessage is the message of the latest FailedScheduling
// event for the pod, "" if there is none.
func LastFailedSchedulingMessage(ctx context.Context, cs kubernetes.Interface, ns, name string) (string, error) {
	events, err := failedScheduling(ctx, cs, ns, name)
	if err != nil || len(events) == 0 {
		return "", err
	}
	return events[len(events)-1].Message, nil
}

// failedScheduling lists the pod's FailedScheduling events, oldest first
// (the API lists them by name, which starts with the pod's name and ends
// with the event's creation time).
func failedScheduling(ctx context.Context, cs kubernetes.Interface, ns, name string) ([]v1.Event, error) {
	return podEvents(ctx, cs, ns, name, installclient.ReasonFailedScheduling)
}

// podEvents lists the pod's events with reason, by name.
func podEvents(ctx context.Context, cs kubernetes.Interface, ns, name, reason string) ([]v1.Event, error) {
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": name, "reason": reason}.String(),
	})
	if err != nil {
		return nil, err
	}
	return events.Items, nil
}

// SchedulingMessage is "<reason>: <message>" of the pod's PodScheduled
// condition, for a report on a pod that was not scheduled in time.
func SchedulingMessage(ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	if c := podScheduledCondition(pod); c != nil {
		return strings.TrimSpace(c.Reason + ": " + c.Message)
	}
	return "no PodScheduled condition"
}

// UnschedulableMessage is the message of the pod's PodScheduled condition
// when the scheduler found no node for it, else "".
func UnschedulableMessage(pod *v1.Pod) string {
	if c := podScheduledCondition(pod); c != nil && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
		return c.Message
	}
	return ""
}

func podScheduledCondition(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// SetNodeLabel sets a node's label key to value, or removes it when value
// is "": the suites relabel nodes, then wait for the scheduler to act on it.
func SetNodeLabel(ctx context.Context, cs kubernetes.Interface, node, key, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, key)
	if value != "" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	}
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("labeling node %s: %w", node, err)
	}
	return nil
}
