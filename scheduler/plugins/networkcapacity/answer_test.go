package networkcapacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// links are the links a cycle's state holds for nodes, as the placement
// event reads them.
func links(t *testing.T, state fwk.CycleState, nodes []fwk.NodeInfo) map[string]Link {
	t.Helper()
	cs, err := read(state)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Link{}
	for _, n := range nodes {
		if l, ok := cs.link(n.Node().Name); ok {
			out[n.Node().Name] = l
		}
	}
	return out
}

// TestCountsOnOneAnswer: over cycles on one answer, the counts a plugin
// keeps from cycle to cycle give what a plugin reading the answer afresh
// in each cycle gives, as pods land on the nodes (each landing a new
// NodeInfo generation, as in the scheduler's cache).
func TestCountsOnOneAnswer(t *testing.T) {
	body := answer(map[string][2]float64{"a": {100, 0}, "b": {100, 0}, "c": {60, 10}})
	sim := &network.Simulation{Body: body}
	now := measuredAt.Add(time.Second)
	kept := newPlugin(t, now)
	old := pulling("old", measuredAt.Add(-time.Hour), declares("5M"))
	nodes := []fwk.NodeInfo{node("a"), node("b", old), node("c", boundAt("settled", measuredAt.Add(-time.Hour), nil))}
	for i := range 12 {
		got, gotState := scoreCycleOn(t, kept, sim, nodes)
		want, wantState := scoreCycle(t, newPlugin(t, now), body, nodes)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cycle %d: scores (-afresh,+kept):\n%s", i, diff)
		}
		if diff := cmp.Diff(links(t, wantState, nodes), links(t, gotState, nodes)); diff != "" {
			t.Fatalf("cycle %d: links (-afresh,+kept):\n%s", i, diff)
		}
		best := nodes[0]
		for _, n := range nodes[1:] {
			if got[n.Node().Name] > got[best.Node().Name] {
				best = n
			}
		}
		best.(*framework.NodeInfo).AddPod(assumed(fmt.Sprintf("p%d", i), declares("8M")))
	}
	if counted := links(t, func() fwk.CycleState { _, s := scoreCycleOn(t, kept, sim, nodes); return s }(), nodes); counted["a"].CountedPods+counted["b"].CountedPods+counted["c"].CountedPods != 13 {
		t.Errorf("links after 12 placements %+v: want the 12 pods placed and the one starting counted", counted)
	}
}

// TestCountsFollowTheClock: a pod not ready counts from the time its
// link's window no longer holds it, so a count kept from before that time
// is not one after it, though the node is unchanged.
func TestCountsFollowTheClock(t *testing.T) {
	sim := &network.Simulation{Body: answer(map[string][2]float64{"a": {100, 0}, "b": {100, 0}})}
	// The window began at measuredAt − 5 s; a pod not ready counts once the
	// clock passes its start less 6 s (capacity.CountedSince).
	pl := newPlugin(t, measuredAt.Add(-20*time.Second))
	nodes := []fwk.NodeInfo{node("a", pulling("starting", measuredAt.Add(-time.Hour), declares("30M"))), node("b")}
	_, state := scoreCycleOn(t, pl, sim, nodes)
	if l := links(t, state, nodes)["a"]; l.CountedPods != 0 {
		t.Fatalf("before the window's start: %d pods counted on a, want 0", l.CountedPods)
	}
	pl.now = func() time.Time { return measuredAt.Add(time.Second) }
	_, state = scoreCycleOn(t, pl, sim, nodes)
	if l := links(t, state, nodes)["a"]; l.CountedPods != 1 || l.CountedMbps != 30 {
		t.Errorf("after it: %d pods, %g Mbit/s counted on a, want the starting pod's 1 and 30", l.CountedPods, l.CountedMbps)
	}
}
