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
// simulation that frees nothing retries none. A pod is retried at most
// once a window (the answer's, 5 s here), however often answers come (in
// Background mode, every second): the retry must not bypass the
// scheduler's backoff. What the retrier remembers of a pod goes when the
// pod is no longer pending.
func TestRetrierRetriesOnANewSimulation(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	waits := pendingPod("waits", "60M", linkFull)
	waits.UID = "waits-uid"
	for _, p := range []*v1.Pod{waits, pendingPod("other", "60M", "0/2 nodes are available: 2 Insufficient cpu.")} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	activated := make(activations, 10)
	now := measuredAt
	r := &retrier{ctx: ctx, activator: activated, pods: corelisters.NewPodLister(indexer), wake: make(chan struct{}, 1),
		now: func() time.Time { return now }}
	logger := klog.FromContext(ctx)
	retried := func() []string {
		t.Helper()
		select {
		case <-r.wake:
		default:
			t.Fatal("the simulation heard did not wake the retrier")
		}
		r.retryNewest(logger)
		switch len(activated) {
		case 0:
			return nil
		case 1:
			return <-activated
		}
		t.Fatalf("%d retries from one simulation", len(activated))
		return nil
	}

	// Heard, each simulation wakes the loop; two before it runs wake it once.
	full := &network.Simulation{Body: answer(map[string][2]float64{"a": {50, 20}})}
	freed := func() *network.Simulation {
		return &network.Simulation{Body: answer(map[string][2]float64{"a": {100, 20}})}
	}
	r.heard(full)
	r.heard(full)
	if len(r.wake) != 1 {
		t.Fatalf("%d wake-ups pending after two simulations heard, want 1", len(r.wake))
	}
	if got := retried(); got != nil {
		t.Errorf("a simulation with 30 Mbit/s free retried %v", got)
	}
	r.heard(freed())
	if got := retried(); !slices.Equal(got, []string{"ns/waits"}) {
		t.Errorf("a simulation with 80 Mbit/s free retried %v, want ns/waits", got)
	}

	// The next answers, within the window: the pod was just retried.
	for range 4 {
		now = now.Add(time.Second)
		r.heard(freed())
		if got := retried(); got != nil {
			t.Errorf("%s after its retry, a new answer retried %v again, within the answer's 5 s window", now.Sub(measuredAt), got)
		}
	}
	// A window after: retried again.
	now = now.Add(time.Second)
	r.heard(freed())
	if got := retried(); !slices.Equal(got, []string{"ns/waits"}) {
		t.Errorf("a window after its retry, a new answer retried %v, want ns/waits", got)
	}

	// Placed, the pod is forgotten.
	placed := waits.DeepCopy()
	placed.Spec.NodeName = "a"
	if err := indexer.Update(placed); err != nil {
		t.Fatal(err)
	}
	r.heard(freed())
	if got := retried(); got != nil {
		t.Errorf("a placed pod was retried: %v", got)
	}
	if len(r.retried) != 0 {
		t.Errorf("the retrier still remembers %d pods, none pending", len(r.retried))
	}

	// The loop does the same on each wake-up.
	if err := indexer.Update(waits); err != nil {
		t.Fatal(err)
	}
	r.heard(freed())
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
