package integration

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/test/pods"
)

const (
	waitTimeout = 60 * time.Second
	labelZone   = v1.LabelTopologyZone
	labelHost   = v1.LabelHostname
	// podImage is never pulled: no kubelet runs.
	podImage = "kns-3/pause"
)

// createNode creates a Ready node with room for pods. The kubelet is not
// running, so the test writes the status it would report.
func createNode(t *testing.T, client kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	node := st.MakeNode().Name(name).Label(labelHost, name).
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"}).
		Condition(v1.NodeReady, v1.ConditionTrue, "", "")
	for k, v := range labels {
		node.Label(k, v)
	}
	if _, err := client.CoreV1().Nodes().Create(context.Background(), node.Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
}

func labelNode(t *testing.T, client kubernetes.Interface, name, key, value string) {
	t.Helper()
	if err := conditions.SetNodeLabel(context.Background(), client, name, key, value); err != nil {
		t.Fatal(err)
	}
}

// createPod creates p, built with st.MakePod(), in ns for the kns-3-scheduler
// profile.
func createPod(t *testing.T, client kubernetes.Interface, ns string, p *st.PodWrapper) {
	t.Helper()
	pod := pods.ForProfile(p, ns, podImage).Obj()
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
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
	ctx := context.Background()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true,
		conditions.PodScheduled(client, ns, name)); err != nil {
		t.Fatalf("pod %s/%s was not scheduled: %v (%s)", ns, name, err, conditions.SchedulingMessage(ctx, client, ns, name))
	}
	pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod.Spec.NodeName
}

// waitUnschedulable waits for the scheduler to give up on the pod and
// returns the message of its FailedScheduling event.
func waitUnschedulable(t *testing.T, client kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true,
		conditions.PodFailedScheduling(client, ns, name)); err != nil {
		t.Fatalf("pod %s/%s: no FailedScheduling event: %v", ns, name, err)
	}
	msg, err := conditions.LastFailedSchedulingMessage(ctx, client, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}
