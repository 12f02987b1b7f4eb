package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/test/pods"
)

const (
	waitTimeout = 60 * time.Second
	labelZone   = v1.LabelTopologyZone
	labelHost   = v1.LabelHostname
)

// createNode creates a Ready node with room for pods. The kubelet is not
// running, so the test writes the status it would report.
func createNode(t *testing.T, client kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	all := map[string]string{labelHost: name}
	for k, v := range labels {
		all[k] = v
	}
	capacity := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("8"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
}

func labelNode(t *testing.T, client kubernetes.Interface, name, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := client.CoreV1().Nodes().Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("labeling node %s: %v", name, err)
	}
}

// createPod creates a pod for the kns-3-scheduler profile.
func createPod(t *testing.T, client kubernetes.Interface, ns, name string, opts ...pods.Option) {
	t.Helper()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PodSpec{
			SchedulerName: plugins.ProfileName,
			Containers:    []v1.Container{{Name: "app", Image: "kns-3/pause"}},
		},
	}
	pods.Apply(pod, opts...)
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
}

func createNamespace(t *testing.T, client kubernetes.Interface, name string) string {
	t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// waitScheduled waits until the pod is bound and returns its node.
func waitScheduled(t *testing.T, client kubernetes.Interface, ns, name string) string {
	t.Helper()
	var node string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = pod.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s was not scheduled: %v (%s)", ns, name, err, podSchedulingMessage(client, ns, name))
	}
	return node
}

// waitUnschedulable waits for the scheduler to give up on the pod and
// returns the message of its FailedScheduling event.
func waitUnschedulable(t *testing.T, client kubernetes.Interface, ns, name string) string {
	t.Helper()
	var message string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.Spec.NodeName != "" {
			return false, fmt.Errorf("pod was bound to %s", pod.Spec.NodeName)
		}
		events, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == "FailedScheduling" {
				message = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: no FailedScheduling event: %v", ns, name, err)
	}
	return message
}

// podSchedulingMessage is the PodScheduled condition's message, for failures.
func podSchedulingMessage(client kubernetes.Interface, ns, name string) string {
	pod, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	return "no PodScheduled condition"
}
