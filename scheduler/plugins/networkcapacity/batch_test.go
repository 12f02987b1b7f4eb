package networkcapacity

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// rescore does what upstream's opportunistic batching does when the node
// the previous pod took still fits (rescoreHintedNode in
// pkg/scheduler/framework/runtime/batch.go): PreScore on a copy of the
// pod's cycle state over the batch's nodes and that node, Score on that
// node alone, and NormalizeScore over the batch's cached raw scores and
// the fresh one. It returns the raw and the normalized scores, and false
// when PreScore skipped, which leaves the plugin out of the batch's new
// ranking.
func rescore(t *testing.T, pl *NetworkCapacity, state fwk.CycleState, pod *v1.Pod, cached map[string]int64, others []fwk.NodeInfo, chosen fwk.NodeInfo) (raw, normalized map[string]int64, ok bool) {
	t.Helper()
	ctx := context.Background()
	copied := state.Clone()
	if s := pl.PreScore(ctx, copied, pod, append(slices.Clone(others), chosen)); s.IsSkip() {
		return nil, nil, false
	} else if !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	fresh, s := pl.Score(ctx, copied, pod, chosen)
	if !s.IsSuccess() {
		t.Fatalf("Score: %v", s)
	}
	raw = map[string]int64{chosen.Node().Name: fresh}
	list := fwk.NodeScoreList{{Name: chosen.Node().Name, Score: fresh}}
	for _, n := range others {
		list = append(list, fwk.NodeScore{Name: n.Node().Name, Score: cached[n.Node().Name]})
		raw[n.Node().Name] = cached[n.Node().Name]
	}
	if s := pl.NormalizeScore(ctx, copied, pod, list); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	normalized = map[string]int64{}
	for _, s := range list {
		normalized[s.Name] = s.Score
	}
	return raw, normalized, true
}

// rawScores runs PreScore and Score over nodes on a cycle holding sim, as
// a cycle that scores in full does, and returns the raw scores.
func rawScores(t *testing.T, pl *NetworkCapacity, sim *network.Simulation, pod *v1.Pod, nodes ...fwk.NodeInfo) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	placement.Write(state, &placement.Cycle{Simulation: sim})
	if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	raw := map[string]int64{}
	for _, n := range nodes {
		v, s := pl.Score(ctx, state, pod, n)
		if !s.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Node().Name, s)
		}
		raw[n.Node().Name] = v
	}
	return raw
}

// SignPod lets pods that declare the same bandwidth share a batch's
// ranking, because a placement changes only the chosen node's count and
// upstream's batching scores that node again before it reuses the rest.
// That holds when the re-score's cycle carries the batch's simulation, as
// CustomScorePlugin's re-score leaves it: the link that took the previous
// pod ranks by what it has left, and the next pod goes to the other link
// once it has more; the nodes reused keep the scores a full cycle would
// give them now. Without the simulation PreScore skips, and upstream would
// re-rank the batch without the plugin.
func TestRescoreInsideABatch(t *testing.T) {
	now := measuredAt.Add(time.Second)
	pl := newPlugin(t, now)
	sim := &network.Simulation{Body: answer(map[string][2]float64{"a": {100, -1}, "b": {100, -1}})}
	pod := assumed("next", declares("30M"))

	// The batch's first pod: a and b tie, and it goes to a.
	first := rawScores(t, pl, sim, pod, node("a"), node("b"))
	if first["a"] != first["b"] {
		t.Fatalf("idle links scored %v, want a tie", first)
	}

	// The next pod: its cycle holds the batch's ranking and simulation,
	// and upstream re-scores a, which now holds the first pod.
	a1 := node("a", assumed("first", declares("30M")))
	state := framework.NewCycleState()
	placement.Write(state, &placement.Cycle{Scores: map[string]int64{"a": 900, "b": 100}, Simulation: sim})
	raw, normalized, ok := rescore(t, pl, state, pod, first, []fwk.NodeInfo{node("b")}, a1)
	if !ok {
		t.Fatal("PreScore skipped the re-score of a cycle that holds the batch's simulation")
	}
	// 50 below the target and 2 in the reserve, against b's 80 and 2.
	if want := map[string]int64{"a": 63, "b": 100}; !maps.Equal(normalized, want) {
		t.Errorf("after a took a pod, the batch scores %v, want %v: a has 70 Mbit/s left, b 100", normalized, want)
	}
	// The scores the batch goes on with are those a full cycle gives now.
	if now := rawScores(t, pl, sim, pod, a1, node("b")); now["a"] != raw["a"] || now["b"] != raw["b"] {
		t.Errorf("the batch ranks by %v, a full cycle now by %v", raw, now)
	}

	// The pod after: b took the second pod, and a's score is the batch's.
	b1 := node("b", assumed("second", declares("30M")))
	if _, normalized, _ := rescore(t, pl, state, pod, raw, []fwk.NodeInfo{a1}, b1); normalized["a"] != 100 || normalized["b"] != 100 {
		t.Errorf("after b took the second pod, the batch scores %v, want a tie at 100", normalized)
	}

	// A cycle without the simulation: PreScore skips the re-score.
	bare := framework.NewCycleState()
	placement.Write(bare, &placement.Cycle{Scores: map[string]int64{"a": 900, "b": 100}})
	if _, _, ok := rescore(t, pl, bare, pod, first, []fwk.NodeInfo{node("b")}, a1); ok {
		t.Error("PreScore scored a re-score whose cycle holds no simulation")
	}
}
