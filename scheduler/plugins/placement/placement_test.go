package placement

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
)

func TestOf(t *testing.T) {
	three := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name  string
		cycle *Cycle // nil: PreScore did not run
		// nominated is the pod's nominated node.
		nominated string
		node      string
		want      Placement
		msg       string
	}{
		{
			name:  "best node, rank 1, runner-up is the alternative",
			cycle: &Cycle{Scores: map[string]int64{"a": 950, "b": 707, "c": 400}, Feasible: three},
			node:  "a",
			want:  Placement{Node: "a", Score: 950, Rank: 1, Feasible: 3, Alternative: "b", AlternativeScore: 707},
			msg:   "Network-aware: a has simulator score 0.950, rank 1 of 3 feasible nodes; best alternative b (0.707)",
		},
		{
			name:  "other plugins outweighed the network: rank 2, the best is the alternative",
			cycle: &Cycle{Scores: map[string]int64{"a": 950, "b": 707, "c": 400}, Feasible: three},
			node:  "b",
			want:  Placement{Node: "b", Score: 707, Rank: 2, Feasible: 3, Alternative: "a", AlternativeScore: 950},
			msg:   "rank 2 of 3 feasible nodes; best alternative a (0.950)",
		},
		{
			name:  "an infeasible node's better score neither ranks nor is an alternative",
			cycle: &Cycle{Scores: map[string]int64{"a": 500, "b": 300, "x": 999}, Feasible: []string{"a", "b"}},
			node:  "b",
			want:  Placement{Node: "b", Score: 300, Rank: 2, Feasible: 2, Alternative: "a", AlternativeScore: 500},
		},
		{
			name:  "ties share a rank; the alternative is the first name among equals",
			cycle: &Cycle{Scores: map[string]int64{"a": 500, "b": 500, "c": 500}, Feasible: three},
			node:  "b",
			want:  Placement{Node: "b", Score: 500, Rank: 1, Feasible: 3, Alternative: "a", AlternativeScore: 500},
		},
		{
			name:  "no other node scored",
			cycle: &Cycle{Scores: map[string]int64{"a": 100}, Feasible: three},
			node:  "a",
			want:  Placement{Node: "a", Score: 100, Rank: 1, Feasible: 3},
			msg:   "no other feasible node was scored",
		},
		{
			name:  "the chosen node has no score though others do",
			cycle: &Cycle{Scores: map[string]int64{"a": 100, "b": 200}, Feasible: three},
			node:  "c",
			want:  Placement{Node: "c", Fallback: FallbackNodeUnscored, Feasible: 3, Alternative: "b", AlternativeScore: 200},
			msg:   "Fallback (node_unscored): the simulator has no score for c, chosen by the other plugins; best scored alternative b (0.200)",
		},
		{
			name:  "simulator failed",
			cycle: &Cycle{Feasible: three, Fallback: FallbackSimulatorFailed},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackSimulatorFailed, Feasible: 3},
			msg:   "Fallback (simulator_failed): a chosen without network scores: the simulator did not answer",
		},
		{
			name:  "breaker open",
			cycle: &Cycle{Feasible: three, Fallback: FallbackBreakerOpen},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackBreakerOpen, Feasible: 3},
			msg:   "circuit breaker is open",
		},
		{
			name:  "stale simulation",
			cycle: &Cycle{Feasible: three, Fallback: FallbackStale},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackStale, Feasible: 3},
			msg:   "maxSimulationAge",
		},
		{
			name:  "simulation scores no feasible node",
			cycle: &Cycle{Scores: map[string]int64{"x": 1}, Feasible: three, Fallback: FallbackNoneScored},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackNoneScored, Feasible: 3},
			msg:   "scores none of the 3 feasible nodes",
		},
		{
			name:  "the simulator is warming up",
			cycle: &Cycle{Feasible: three, Fallback: FallbackWarmingUp, WarmUp: &network.WarmUp{MeasuredInFull: 3, Nodes: 100, Quorum: 0.9}},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackWarmingUp, Feasible: 3, WarmUp: &network.WarmUp{MeasuredInFull: 3, Nodes: 100, Quorum: 0.9}},
			msg:   "Fallback (warming_up): a chosen without network scores: live measurements cover 3 of 100 nodes in full, under the 90 % needed to rank",
		},
		{
			name:  "warming up, to a quorum with a fraction of a point",
			cycle: &Cycle{Feasible: three, Fallback: FallbackWarmingUp, WarmUp: &network.WarmUp{MeasuredInFull: 7, Nodes: 8, Quorum: 0.955}},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackWarmingUp, Feasible: 3, WarmUp: &network.WarmUp{MeasuredInFull: 7, Nodes: 8, Quorum: 0.955}},
			msg:   "live measurements cover 7 of 8 nodes in full, under the 95.5 % needed to rank",
		},
		{
			name: "PreScore did not run: a single feasible node",
			node: "a",
			want: Placement{Node: "a", Fallback: FallbackSingleNode},
			msg:  "Not ranked (single_node): a was the only feasible node, so the scheduler scored no node",
		},
		{
			name: "PreScore did not run: the pod went to its nominated node", nominated: "a",
			node: "a",
			want: Placement{Node: "a", Fallback: FallbackNominatedNode},
			msg:  "Not ranked (nominated_node): a, the node the pod was nominated for, still fits it, so the scheduler evaluated no other node",
		},
		{
			name: "nominated elsewhere: a single feasible node", nominated: "b",
			node: "a",
			want: Placement{Node: "a", Fallback: FallbackSingleNode},
		},
		{
			name:  "a reused ranking, confirmed by the re-score",
			cycle: &Cycle{Scores: map[string]int64{"a": 950, "b": 707, "c": 400}, Feasible: three, Reuse: confirmed()},
			node:  "b",
			want:  Placement{Node: "b", Score: 707, Rank: 2, Feasible: 3, Alternative: "a", AlternativeScore: 950, Reused: ReusedRanking},
			msg:   "Network-aware: b has simulator score 0.707, rank 2 of 3 feasible nodes; best alternative a (0.950); ranking reused from the pod scheduled before it (opportunistic batching)",
		},
		{
			name:  "a ranking that may have been reused",
			cycle: &Cycle{Scores: map[string]int64{"a": 950, "b": 707, "c": 400}, Feasible: three, Reuse: &Reuse{}},
			node:  "a",
			want:  Placement{Node: "a", Score: 950, Rank: 1, Feasible: 3, Alternative: "b", AlternativeScore: 707, Reused: ReusedUnlessOnly},
			msg:   "; ranking reused from the pod scheduled before it (opportunistic batching), unless the node was the only feasible one",
		},
		{
			name:  "a reused fallback ranking",
			cycle: &Cycle{Feasible: three, Fallback: FallbackStale, Reuse: confirmed()},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackStale, Feasible: 3, Reused: ReusedRanking},
			msg:   "Fallback (stale): a chosen without network scores: no simulation younger than maxSimulationAge; ranking reused",
		},
		{
			name:      "a nominated pod is never batched",
			cycle:     &Cycle{Scores: map[string]int64{"a": 950, "b": 707}, Feasible: []string{"a", "b"}, Reuse: &Reuse{}},
			nominated: "a", node: "a",
			want: Placement{Node: "a", Fallback: FallbackNominatedNode},
		},
		{
			name:      "a nominated pod whose cycle scored",
			cycle:     &Cycle{Scores: map[string]int64{"a": 950, "b": 707}, Feasible: []string{"a", "b"}},
			nominated: "a", node: "a",
			want: Placement{Node: "a", Score: 950, Rank: 1, Feasible: 2, Alternative: "b", AlternativeScore: 707},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := st.MakePod().Name("p").Obj()
			pod.Status.NominatedNodeName = tc.nominated
			got := Of(tc.cycle, pod, tc.node)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Of = %+v, want %+v", got, tc.want)
			}
			if msg := got.Message(); !strings.Contains(msg, tc.msg) {
				t.Errorf("Message() = %q, want it to contain %q", msg, tc.msg)
			}
		})
	}
}

// TestPlacementMessageNotes: the plugins' notes follow what the ranking
// said, each its own clause, before what batching reused.
func TestPlacementMessageNotes(t *testing.T) {
	p := Placement{Node: "a", Fallback: FallbackSingleNode, Reused: ReusedRanking,
		Notes: []string{"link: 70 Mbit/s free", "zone: one"}}
	want := "Not ranked (single_node): a was the only feasible node, so the scheduler scored no node" +
		"; link: 70 Mbit/s free; zone: one; ranking reused from the pod scheduled before it (opportunistic batching)"
	if got := p.Message(); got != want {
		t.Errorf("Message() = %q, want %q", got, want)
	}
}

func confirmed() *Reuse {
	r := &Reuse{}
	r.Confirm()
	return r
}

// TestPlacementMessageIsBounded: Message never exceeds MaxMessage.
// No real placement reaches the bound: node names are DNS subdomains of at
// most 253 bytes, and the longest message, two such names with the widest
// numbers, is under 700 bytes. So the cut is checked at the boundary
// itself (internal/text's test), Message is checked with names longer
// than a node may have (the type allows them), and the longest legal names
// must come out whole.
func TestPlacementMessageIsBounded(t *testing.T) {
	fallbacks := []string{"", FallbackNodeUnscored, FallbackSingleNode, FallbackNoScorePlugin, FallbackSimulatorFailed, FallbackBreakerOpen, FallbackStale, FallbackNoneScored}
	placement := func(node, alternative, fallback string) Placement {
		return Placement{Node: node, Fallback: fallback, Score: math.MinInt64, Rank: math.MaxInt, Feasible: math.MaxInt,
			Alternative: alternative, AlternativeScore: math.MinInt64}
	}
	// Every message names the node, so a node name over the bound gives a
	// message over it.
	tooLong := strings.Repeat("é", MaxMessage)
	for _, fallback := range fallbacks {
		p := placement(tooLong+"1", tooLong+"2", fallback)
		p.Reused = ReusedUnlessOnly
		msg := p.Message()
		if len(msg) > MaxMessage || !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…") {
			t.Errorf("fallback %q, %d-byte names: Message() is %d bytes ending %q, want at most %d, valid UTF-8, ending …",
				fallback, len(tooLong)+1, len(msg), msg[max(0, len(msg)-8):], MaxMessage)
		}
	}
	label := strings.Repeat("a", 63) + "."
	longest := strings.Repeat(label, 3) + strings.Repeat("b", 253-3*len(label)-1)
	if len(longest+"1") != 253 {
		t.Fatalf("longest legal name is %d bytes, want 253", len(longest+"1"))
	}
	for _, fallback := range fallbacks {
		p := placement(longest+"1", longest+"2", fallback)
		p.Reused = ReusedUnlessOnly
		msg := p.Message()
		if len(msg) > MaxMessage || strings.HasSuffix(msg, "…") || !strings.Contains(msg, p.Node) {
			t.Errorf("fallback %q, 253-byte names: Message() = %d bytes %q, want it whole, at most %d", fallback, len(msg), msg, MaxMessage)
		}
		if (fallback == "" || fallback == FallbackNodeUnscored) && !strings.Contains(msg, p.Alternative) {
			t.Errorf("fallback %q, 253-byte names: Message() = %q lacks the alternative", fallback, msg)
		}
	}
}

// BenchmarkOf is the placement event's ranking at 5,000 nodes: a
// simulation scoring every node, 500 of them feasible (upstream scores 10%
// of 5,000 nodes).
func BenchmarkOf(b *testing.B) {
	scores := make(map[string]int64, 5000)
	feasible := make([]string, 0, 500)
	for i := range 5000 {
		name := fmt.Sprintf("perf-node-%05d", i)
		scores[name] = int64(i * 7919 % 1000)
		if i%10 == 0 {
			feasible = append(feasible, name)
		}
	}
	cycle := &Cycle{Scores: scores, Feasible: feasible}
	pod := st.MakePod().Name("p").Obj()
	b.ReportAllocs()
	for b.Loop() {
		_ = Of(cycle, pod, feasible[250]).Message()
	}
}
