package placement

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	fwk "k8s.io/kube-scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
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
			if got != tc.want {
				t.Errorf("Of = %+v, want %+v", got, tc.want)
			}
			if msg := got.Message(); !strings.Contains(msg, tc.msg) {
				t.Errorf("Message() = %q, want it to contain %q", msg, tc.msg)
			}
		})
	}
}

// TestPlacementMessageIsBounded: Message never exceeds MaxMessage.
// No real placement reaches the bound: node names are DNS subdomains of at
// most 253 bytes, and the longest message, two such names with the widest
// numbers, is under 700 bytes. So truncate is checked at the boundary
// itself, Message is checked with names longer than a node may have (the
// type allows them), and the longest legal names must come out whole.
func TestPlacementMessageIsBounded(t *testing.T) {
	// 1-, 2-, 3- and 4-byte runes, shifted by an ASCII prefix so that the
	// cut falls on every byte of each.
	const runes = "aé€𝄞"
	for offset := range len(runes) {
		s := strings.Repeat("x", offset) + strings.Repeat(runes, MaxMessage/len(runes)+2)
		for n := MaxMessage - 2*len(runes); n <= MaxMessage; n++ {
			got := truncate(s, n)
			if len(got) > n || len(got) <= n-utf8.UTFMax || !utf8.ValidString(got) ||
				!strings.HasSuffix(got, "…") || !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Errorf("truncate(%d bytes, %d) = %d bytes ending %q: want at most %d and more than %d bytes, cut on a rune boundary, ending …",
					len(s), n, len(got), got[max(0, len(got)-8):], n, n-utf8.UTFMax)
			}
		}
	}
	for _, s := range []string{strings.Repeat("x", MaxMessage), strings.Repeat("é", MaxMessage/2)} {
		if got := truncate(s, MaxMessage); got != s {
			t.Errorf("truncate cut a %d-byte string at %d bytes", len(s), MaxMessage)
		}
	}
	if got := truncate(strings.Repeat("x", MaxMessage+1), MaxMessage); len(got) != MaxMessage || !strings.HasSuffix(got, "…") {
		t.Errorf("truncate of %d bytes = %d bytes ending %q, want %d ending …", MaxMessage+1, len(got), got[len(got)-8:], MaxMessage)
	}

	fallbacks := []string{"", FallbackNodeUnscored, FallbackSingleNode, FallbackSimulatorFailed, FallbackBreakerOpen, FallbackStale, FallbackNoneScored}
	placement := func(node, alternative, fallback string) Placement {
		return Placement{Node: node, Fallback: fallback, Score: math.MinInt64, Rank: math.MaxInt, Feasible: math.MaxInt,
			Alternative: alternative, AlternativeScore: math.MinInt64}
	}
	// Every message names the node, so a node name over the bound gives a
	// message over it.
	tooLong := strings.Repeat("é", MaxMessage)
	for _, fallback := range fallbacks {
		msg := placement(tooLong+"1", tooLong+"2", fallback).Message()
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
		msg := p.Message()
		if len(msg) > MaxMessage || strings.HasSuffix(msg, "…") || !strings.Contains(msg, p.Node) {
			t.Errorf("fallback %q, 253-byte names: Message() = %d bytes %q, want it whole, at most %d", fallback, len(msg), msg, MaxMessage)
		}
		if (fallback == "" || fallback == FallbackNodeUnscored) && !strings.Contains(msg, p.Alternative) {
			t.Errorf("fallback %q, 253-byte names: Message() = %q lacks the alternative", fallback, msg)
		}
	}
}

func TestNormalizeScores(t *testing.T) {
	tests := []struct {
		name      string
		normalize func(fwk.NodeScoreList)
		in        []int64 // simulator score × 1000
		want      []int64
	}{
		{"min-max empty", minMax, nil, nil},
		{"min-max one node", minMax, []int64{420}, []int64{100}},
		{"min-max all zero", minMax, []int64{0, 0, 0}, []int64{100, 100, 100}},
		{"min-max all equal", minMax, []int64{7, 7}, []int64{100, 100}},
		{"min-max linear", minMax, []int64{0, 250, 500, 1000}, []int64{0, 25, 50, 100}},
		{"min-max offset", minMax, []int64{100, 200, 300}, []int64{0, 50, 100}},
		{"min-max close scores stretched", minMax, []int64{900, 890}, []int64{100, 0}},
		{"min-max negative", minMax, []int64{-1000, 0, 1000}, []int64{0, 50, 100}},
		{"min-max all negative", minMax, []int64{-300, -200, -100}, []int64{0, 50, 100}},
		{"min-max rounds down", minMax, []int64{0, 1, 3}, []int64{0, 33, 100}},
		{"min-max full int64 range", minMax, []int64{math.MinInt64, 0, math.MaxInt64}, []int64{0, 50, 100}},
		{"min-max large close values", minMax, []int64{math.MaxInt64 - 1000, math.MaxInt64}, []int64{0, 100}},
		// Past 2^53, float64 would round d × 100 and the quotient.
		{"min-max large span keeps the best at 100", minMax, []int64{0, 1112603089564874}, []int64{0, 100}},
		{"min-max large span rounds down exactly", minMax, []int64{0, 3823561820858031, 7497180040898100}, []int64{0, 51, 100}},
		{"min-max one below the highest", minMax, []int64{math.MinInt64, math.MaxInt64 - 1, math.MaxInt64}, []int64{0, 99, 100}},
		{"absolute empty", absoluteScores, nil, nil},
		{"absolute keeps the scale", absoluteScores, []int64{900, 890, 100}, []int64{90, 89, 10}},
		{"absolute all equal", absoluteScores, []int64{700, 700}, []int64{70, 70}},
		{"absolute all zero", absoluteScores, []int64{0, 0}, []int64{0, 0}},
		{"absolute rounds down", absoluteScores, []int64{999, 1}, []int64{99, 0}},
		{"absolute clamps above 1", absoluteScores, []int64{1000, 5000, math.MaxInt64}, []int64{100, 100, 100}},
		{"absolute clamps below 0", absoluteScores, []int64{-1, -1000, math.MinInt64}, []int64{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := make(fwk.NodeScoreList, len(tt.in))
			for i, s := range tt.in {
				list[i] = fwk.NodeScore{Name: fmt.Sprint(i), Score: s}
			}
			tt.normalize(list)
			for i := range list {
				if list[i].Score != tt.want[i] {
					t.Fatalf("normalize(%v) = %v, want %v", tt.in, list, tt.want)
				}
				if list[i].Score < 0 || list[i].Score > fwk.MaxNodeScore {
					t.Fatalf("score %d out of range", list[i].Score)
				}
			}
		})
	}

	// Large spans, 1e14 to 1e18 and up to the whole int64 range, against an
	// exact computation.
	r := rand.New(rand.NewPCG(1, 2))
	var inputs [][]int64
	for range 500 {
		span := uint64(math.Pow(10, 14+4*r.Float64()))
		lowest := math.MinInt64 + int64(r.Uint64N(math.MaxUint64-span))
		in := []int64{lowest, int64(uint64(lowest) + span)}
		for range 4 {
			in = append(in, int64(uint64(lowest)+r.Uint64N(span+1)))
		}
		inputs = append(inputs, in)
	}
	inputs = append(inputs,
		[]int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 / 3, math.MaxInt64 - 1, math.MaxInt64},
		[]int64{math.MinInt64, math.MinInt64 + 1e17 + 3, math.MinInt64 + 1e18 - 1, math.MinInt64 + 1e18},
		[]int64{math.MaxInt64 - 1e18, math.MaxInt64 - 1e16 - 7, math.MaxInt64 - 1, math.MaxInt64},
		[]int64{math.MinInt64, math.MinInt64 + 1e14, math.MinInt64 + 99999999999999},
		[]int64{math.MaxInt64 - 1e14, math.MaxInt64 - 1, math.MaxInt64},
		[]int64{-1e18, -1, 1e18 - 1, 1e18},
	)
	for _, in := range inputs {
		list := make(fwk.NodeScoreList, len(in))
		for i, s := range in {
			list[i] = fwk.NodeScore{Name: fmt.Sprint(i), Score: s}
		}
		minMax(list)
		want := exactMinMax(in)
		for i := range list {
			if list[i].Score != want[i] {
				t.Errorf("minMax(%v): score %d is %d, want %d", in, in[i], list[i].Score, want[i])
			}
		}
	}
}

// exactMinMax is MinMax normalization in arbitrary precision:
// floor((s − lowest) × MaxNodeScore / (highest − lowest)), all MaxNodeScore
// when every score is equal.
func exactMinMax(in []int64) []int64 {
	lowest, highest := slices.Min(in), slices.Max(in)
	out := make([]int64, len(in))
	span := new(big.Int).Sub(big.NewInt(highest), big.NewInt(lowest))
	for i, s := range in {
		if lowest == highest {
			out[i] = fwk.MaxNodeScore
			continue
		}
		n := new(big.Int).Sub(big.NewInt(s), big.NewInt(lowest))
		n.Mul(n, big.NewInt(fwk.MaxNodeScore))
		out[i] = n.Quo(n, span).Int64()
	}
	return out
}

func TestRank(t *testing.T) {
	scores := map[string]int64{"a": 900, "b": 500, "c": 500, "x": 999}
	candidates := []string{"a", "b", "c", "d"}
	for node, want := range map[string]int{"a": 1, "b": 2, "c": 2, "d": 0} {
		if got := Rank(scores, candidates, node); got != want {
			t.Errorf("Rank(%s) = %d, want %d (x is no candidate, d has no score)", node, got, want)
		}
	}
}

func TestMilliScore(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want int64
		ok   bool
	}{
		{0.9, 900, true}, {-0.5, -500, true}, {0.0001, 0, true},
		{1e300, math.MaxInt64, true}, {-1e300, math.MinInt64, true}, {9.3e15, math.MaxInt64, true},
		{math.NaN(), 0, false}, {math.Inf(1), 0, false}, {math.Inf(-1), 0, false},
	} {
		if got, ok := MilliScore(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("MilliScore(%v) = %d, %t; want %d, %t", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
