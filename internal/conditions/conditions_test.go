package conditions

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"kns3.dev/kns3/installclient"
)

func pod(name, node string, conds ...v1.PodCondition) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       v1.PodSpec{NodeName: node},
		Status:     v1.PodStatus{Conditions: conds},
	}
}

func node(name string, ready v1.ConditionStatus) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}}},
	}
}

var unschedulable = v1.PodCondition{
	Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
	Message: "0/3 nodes are available",
}

func TestPodScheduled(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(pod("bound", "n1"), pod("pending", ""))
	for name, want := range map[string]bool{"bound": true, "pending": false} {
		got, err := PodScheduled(cs, "ns", name)(ctx)
		if err != nil || got != want {
			t.Errorf("PodScheduled(%s) = %v, %v; want %v, nil", name, got, err, want)
		}
	}
	if _, err := PodScheduled(cs, "ns", "missing")(ctx); err == nil {
		t.Error("PodScheduled of a missing pod: no error")
	}
}

func TestPodFailedScheduling(t *testing.T) {
	ctx := context.Background()
	event := &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "waits.1", Namespace: "ns"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "waits"},
		Reason:         installclient.ReasonFailedScheduling,
		Message:        "0/3 nodes are available",
	}
	cs := fake.NewClientset(pod("waits", ""), pod("bound", "n1"), event)
	if got, err := PodFailedScheduling(cs, "ns", "waits")(ctx); !got || err != nil {
		t.Errorf("PodFailedScheduling(waits) = %v, %v; want true, nil", got, err)
	}
	if _, err := PodFailedScheduling(cs, "ns", "bound")(ctx); err == nil {
		t.Error("PodFailedScheduling of a bound pod: no error")
	}
	msg, err := LastFailedSchedulingMessage(ctx, cs, "ns", "waits")
	if err != nil || msg != event.Message {
		t.Errorf("LastFailedSchedulingMessage = %q, %v; want %q", msg, err, event.Message)
	}
}

func TestNodesReady(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		nodes []*v1.Node
		want  bool
	}{
		{"no nodes", nil, false},
		{"all ready", []*v1.Node{node("a", v1.ConditionTrue), node("b", v1.ConditionTrue)}, true},
		{"one not ready", []*v1.Node{node("a", v1.ConditionTrue), node("b", v1.ConditionFalse)}, false},
	} {
		cs := fake.NewClientset()
		for _, n := range tt.nodes {
			if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := NodesReady(cs)(ctx); got != tt.want || err != nil {
			t.Errorf("%s: NodesReady = %v, %v; want %v, nil", tt.name, got, err, tt.want)
		}
	}
}

func TestPodsBound(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(pod("a", "n1"), pod("b", "n2"))
	if got, _ := PodsBound(cs, "ns", 2)(ctx); !got {
		t.Error("PodsBound(2) with two bound pods = false")
	}
	if got, _ := PodsBound(cs, "ns", 3)(ctx); got {
		t.Error("PodsBound(3) with two pods = true")
	}
	if _, err := cs.CoreV1().Pods("ns").Create(ctx, pod("c", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := PodsBound(cs, "ns", 2)(ctx); got {
		t.Error("PodsBound with a pending pod = true")
	}
}

func TestSchedulingMessages(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(pod("waits", "", unschedulable), pod("new", ""))
	if got, want := SchedulingMessage(ctx, cs, "ns", "waits"), "Unschedulable: 0/3 nodes are available"; got != want {
		t.Errorf("SchedulingMessage = %q, want %q", got, want)
	}
	if got, want := SchedulingMessage(ctx, cs, "ns", "new"), "no PodScheduled condition"; got != want {
		t.Errorf("SchedulingMessage = %q, want %q", got, want)
	}
	if got := UnschedulableMessage(pod("waits", "", unschedulable)); got != unschedulable.Message {
		t.Errorf("UnschedulableMessage = %q, want %q", got, unschedulable.Message)
	}
	scheduled := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}
	if got := UnschedulableMessage(pod("bound", "n1", scheduled)); got != "" {
		t.Errorf("UnschedulableMessage of a bound pod = %q, want \"\"", got)
	}
}

func TestSetNodeLabel(t *testing.T) {
	ctx := context.Background()
	n := node("a", v1.ConditionTrue)
	n.Labels = map[string]string{"keep": "1", "capability": "rigorous"}
	cs := fake.NewClientset(n)
	if err := SetNodeLabel(ctx, cs, "a", "scheduler", "disabled"); err != nil {
		t.Fatal(err)
	}
	if err := SetNodeLabel(ctx, cs, "a", "capability", ""); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep": "1", "scheduler": "disabled"}
	if len(got.Labels) != len(want) || got.Labels["keep"] != "1" || got.Labels["scheduler"] != "disabled" {
		t.Errorf("labels = %v, want %v", got.Labels, want)
	}
}
