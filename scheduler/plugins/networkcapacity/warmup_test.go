package networkcapacity

import (
	"bytes"
	"context"
	"testing"
	"time"

	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// decoded is body as CustomScorePlugin's client decodes it.
func decoded(t testing.TB, body []byte) *network.Simulation {
	t.Helper()
	sim, err := network.Decode(body)
	if err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	sim.Body = body
	return sim
}

// warmingUp is body as the simulator serves it while it warms up: with
// its warm_up, 1 of 2 nodes measured in full.
func warmingUp(body []byte) []byte {
	return bytes.Replace(body, []byte("{"), []byte(`{"warm_up": {"measured_in_full": 1, "nodes": 2, "quorum": 0.9}, `), 1)
}

// While the simulator warms up it ranks nothing, and the filter judges
// nothing by it: a full link measured then rejects no pod.
func TestFilterIgnoresAWarmingUpAnswer(t *testing.T) {
	body := answer(map[string][2]float64{"a": {100, 90}, "b": {100, 0}})
	pod := assumed("new", declares("20M"))
	nodes := []fwk.NodeInfo{node("a"), node("b")}
	pl := newPlugin(t, measuredAt.Add(time.Second))
	if got := filterNodes(t, pl, body, pod, nodes); got["a"] != "full" {
		t.Fatalf("filter on the ranked answer: %v, want a full", got)
	}
	if got := filterNodes(t, pl, warmingUp(body), pod, nodes); got != nil {
		t.Errorf("filter on a warming-up answer: %v, want PreFilter to skip", got)
	}
}

// A warming-up answer retries no pod: the filter judges nothing by it.
func TestRetrierIgnoresAWarmingUpAnswer(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(pendingPod("waits", "60M", linkFull)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	activated := make(activations, 10)
	r := &retrier{ctx: ctx, activator: activated, pods: corelisters.NewPodLister(indexer), wake: make(chan struct{}, 1), now: time.Now}
	r.heard(decoded(t, warmingUp(answer(map[string][2]float64{"a": {100, 20}}))))
	if len(r.wake) != 0 {
		t.Error("a warming-up answer woke the retrier")
	}
	r.retryNewest(klog.FromContext(ctx))
	if len(activated) != 0 {
		t.Errorf("a warming-up answer retried %v", <-activated)
	}
}
