package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/test/pods"
)

// The disabled node is the simulator's favourite, so only the filter keeps pods off it.
const filterScenario = `
nodes:
  disabled: {score: 1.0}
  plain-1: {score: 0.8}
  plain-2: {score: 0.2}
`

// Case 1: no pod lands on a scheduler=disabled node.
func TestDisabledNodeGetsNoPods(t *testing.T) {
	c := newCluster(t, filterScenario, schedulerOptions{},
		nodeSpec{"disabled", map[string]string{"scheduler": "disabled"}},
		nodeSpec{"plain-1", nil},
		nodeSpec{"plain-2", nil},
	)
	for i := range 6 {
		name := fmt.Sprintf("pod-%d", i)
		c.createPod(t, st.MakePod().Name(name))
		if node := c.scheduled(t, name); node == "disabled" {
			t.Errorf("%s landed on the scheduler=disabled node", name)
		}
	}
	// The only node left is disabled: the pod waits, and the event says why.
	c.createPod(t, st.MakePod().Name("pinned").NodeSelector(map[string]string{labelHost: "disabled"}))
	if msg := c.unschedulable(t, "pinned"); !strings.Contains(msg, placement.ErrReasonDisabled) {
		t.Errorf("FailedScheduling message %q does not say %q", msg, placement.ErrReasonDisabled)
	}
}

// Case 2: rigorous pods land only on capability=rigorous nodes; with none
// they stay Pending with a clear event, and schedule once a node is labeled.
func TestRigorousPodsNeedRigorousNodes(t *testing.T) {
	c := newCluster(t, filterScenario, schedulerOptions{},
		nodeSpec{"disabled", map[string]string{"scheduler": "disabled", "capability": "rigorous"}},
		nodeSpec{"plain-1", nil},
		nodeSpec{"plain-2", nil},
	)
	c.createPod(t, pods.Rigorous(st.MakePod().Name("rigorous-0")))
	msg := c.unschedulable(t, "rigorous-0")
	for _, want := range []string{placement.ErrReasonNotRigorous, placement.ErrReasonDisabled} {
		if !strings.Contains(msg, want) {
			t.Errorf("FailedScheduling message %q does not say %q", msg, want)
		}
	}

	// plain-2 is the simulator's least favourite: the filter, not the score, sends pods there.
	labelNode(t, c.client, "plain-2", "capability", "rigorous")
	if node := c.scheduled(t, "rigorous-0"); node != "plain-2" {
		t.Errorf("rigorous-0 went to %s after plain-2 was labeled, want plain-2", node)
	}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("rigorous-%d", i)
		c.createPod(t, pods.Rigorous(st.MakePod().Name(name)))
		if node := c.scheduled(t, name); node != "plain-2" {
			t.Errorf("%s went to %s, want the only rigorous node plain-2", name, node)
		}
	}
	c.createPod(t, st.MakePod().Name("ordinary"))
	if node := c.scheduled(t, "ordinary"); node != "plain-1" {
		t.Errorf("an ordinary pod went to %s, want plain-1, the best enabled node", node)
	}
}

// A pending rigorous pod whose annotation is removed is retried at once
// (CustomFilterPlugin's pod-update hint), not after the unschedulable
// queue's periodic flush of 5 minutes.
func TestRigorousAnnotationRemovedRequeues(t *testing.T) {
	c := newCluster(t, filterScenario, schedulerOptions{},
		nodeSpec{"plain-1", nil},
		nodeSpec{"plain-2", nil},
	)
	c.createPod(t, pods.Rigorous(st.MakePod().Name("was-rigorous")))
	c.unschedulable(t, "was-rigorous")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, placement.AnnotationQoS)
	if _, err := c.client.CoreV1().Pods(c.ns).Patch(context.Background(), "was-rigorous", types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// waitScheduled gives up long before the 5-minute flush.
	if node := c.scheduled(t, "was-rigorous"); node != "plain-1" {
		t.Errorf("was-rigorous went to %s, want plain-1, the best node", node)
	}
}
