package networkcapacity

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// pendingPod is a pod not placed whose last attempt failed with message,
// declaring need ("" for nothing).
func pendingPod(name, need, message string) *v1.Pod {
	w := st.MakePod().Namespace("ns").Name(name)
	if need != "" {
		w = w.Annotation(IngressBandwidthAnnotation, need)
	}
	p := w.Obj()
	if message != "" {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable, Message: message}}
	}
	return p
}

const linkFull = "0/2 nodes are available: 2 " + ErrReasonLinkFull + ". preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."

func TestRetryable(t *testing.T) {
	measured := map[string]network.Link{
		"a": {BandwidthMbps: 100, UseMbps: 30, UseMeasured: true}, // 70 free
		"b": {BandwidthMbps: 50},
	}
	placed := pendingPod("placed", "20M", linkFull)
	placed.Spec.NodeName = "a"
	deleted := pendingPod("deleted", "20M", linkFull)
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	otherReason := pendingPod("other-reason", "20M", "0/2 nodes are available: 2 Insufficient cpu.")
	for _, tc := range []struct {
		name  string
		pods  []*v1.Pod
		links map[string]network.Link
		want  []string
	}{
		{name: "rejected for bandwidth, and a link could now hold it", pods: []*v1.Pod{pendingPod("fits", "60M", linkFull)},
			links: measured, want: []string{"ns/fits"}},
		{name: "rejected for bandwidth among other reasons", pods: []*v1.Pod{pendingPod("mixed", "60M", "0/3 nodes are available: 1 Insufficient cpu, 2 "+ErrReasonLinkFull+".")},
			links: measured, want: []string{"ns/mixed"}},
		{name: "more than any link has free", pods: []*v1.Pod{pendingPod("too-big", "80M", linkFull)}, links: measured},
		{name: "a link known only as at least some bandwidth passes the filter", pods: []*v1.Pod{pendingPod("too-big", "80M", linkFull)},
			links: map[string]network.Link{"a": {BandwidthMbps: 10, BandwidthAtLeast: true}}, want: []string{"ns/too-big"}},
		{name: "placed, being deleted, or rejected for something else", pods: []*v1.Pod{placed, deleted, otherReason}, links: measured},
		{name: "never attempted, or declaring nothing", pods: []*v1.Pod{pendingPod("new", "20M", ""), pendingPod("undeclared", "", linkFull)}, links: measured},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(retryable(tc.pods, tc.links)))
			if !slices.Equal(got, tc.want) {
				t.Errorf("retried %v, want %v", got, tc.want)
			}
		})
	}
}

// activations records what the retrier asks the scheduling queue to retry.
type activations chan []string

func (a activations) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a <- slices.Sorted(maps.Keys(pods))
}

// Each new simulation heard retries the pods it could now place; a
// simulation that frees nothing retries none.
func TestRetrierRetriesOnANewSimulation(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range []*v1.Pod{pendingPod("waits", "60M", linkFull), pendingPod("other", "60M", "0/2 nodes are available: 2 Insufficient cpu.")} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	activated := make(activations, 10)
	r := &retrier{ctx: ctx, activator: activated, pods: corelisters.NewPodLister(indexer), wake: make(chan struct{}, 1)}
	logger := klog.FromContext(ctx)

	// Heard, each simulation wakes the loop; two before it runs wake it once.
	full := &network.Simulation{Body: answer(map[string][2]float64{"a": {50, 20}})}
	freed := &network.Simulation{Body: answer(map[string][2]float64{"a": {100, 20}})}
	r.heard(full)
	r.heard(full)
	if len(r.wake) != 1 {
		t.Fatalf("%d wake-ups pending after two simulations heard, want 1", len(r.wake))
	}
	<-r.wake
	r.retryNewest(logger)
	if len(activated) != 0 {
		t.Errorf("a simulation with 30 Mbit/s free retried %v", <-activated)
	}
	r.heard(freed)
	r.retryNewest(logger)
	if len(activated) != 1 {
		t.Fatalf("a simulation with 80 Mbit/s free retried %d time(s), want once", len(activated))
	}
	if got := <-activated; !slices.Equal(got, []string{"ns/waits"}) {
		t.Errorf("retried %v, want ns/waits", got)
	}

	// The loop does the same on each wake-up.
	go r.run()
	select {
	case got := <-activated:
		if !slices.Equal(got, []string{"ns/waits"}) {
			t.Errorf("the loop retried %v, want ns/waits", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop retried nothing once woken with a simulation with 80 Mbit/s free")
	}
}
