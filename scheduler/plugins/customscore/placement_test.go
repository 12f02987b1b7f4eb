package customscore

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

func TestPlacementOf(t *testing.T) {
	three := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name  string
		state *simulationState // nil: PreScore did not run
		// nominated is the pod's nominated node.
		nominated string
		node      string
		want  Placement
		msg   string
	}{
		{
			name:  "best node, rank 1, runner-up is the alternative",
			state: &simulationState{scores: map[string]int64{"a": 950, "b": 707, "c": 400}, feasible: three},
			node:  "a",
			want:  Placement{Node: "a", Score: 950, Rank: 1, Feasible: 3, Alternative: "b", AlternativeScore: 707},
			msg:   "Network-aware: a has simulator score 0.950, rank 1 of 3 feasible nodes; best alternative b (0.707)",
		},
		{
			name:  "other plugins outweighed the network: rank 2, the best is the alternative",
			state: &simulationState{scores: map[string]int64{"a": 950, "b": 707, "c": 400}, feasible: three},
			node:  "b",
			want:  Placement{Node: "b", Score: 707, Rank: 2, Feasible: 3, Alternative: "a", AlternativeScore: 950},
			msg:   "rank 2 of 3 feasible nodes; best alternative a (0.950)",
		},
		{
			name:  "an infeasible node's better score neither ranks nor is an alternative",
			state: &simulationState{scores: map[string]int64{"a": 500, "b": 300, "x": 999}, feasible: []string{"a", "b"}},
			node:  "b",
			want:  Placement{Node: "b", Score: 300, Rank: 2, Feasible: 2, Alternative: "a", AlternativeScore: 500},
		},
		{
			name:  "ties share a rank; the alternative is the first name among equals",
			state: &simulationState{scores: map[string]int64{"a": 500, "b": 500, "c": 500}, feasible: three},
			node:  "b",
			want:  Placement{Node: "b", Score: 500, Rank: 1, Feasible: 3, Alternative: "a", AlternativeScore: 500},
		},
		{
			name:  "no other node scored",
			state: &simulationState{scores: map[string]int64{"a": 100}, feasible: three},
			node:  "a",
			want:  Placement{Node: "a", Score: 100, Rank: 1, Feasible: 3},
			msg:   "no other feasible node was scored",
		},
		{
			name:  "the chosen node has no score though others do",
			state: &simulationState{scores: map[string]int64{"a": 100, "b": 200}, feasible: three},
			node:  "c",
			want:  Placement{Node: "c", Fallback: FallbackNodeUnscored, Feasible: 3, Alternative: "b", AlternativeScore: 200},
			msg:   "Fallback (node_unscored): the simulator has no score for c, chosen by the other plugins; best scored alternative b (0.200)",
		},
		{
			name:  "simulator failed",
			state: &simulationState{feasible: three, fallback: FallbackSimulatorFailed},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackSimulatorFailed, Feasible: 3},
			msg:   "Fallback (simulator_failed): a chosen without network scores: the simulator did not answer",
		},
		{
			name:  "breaker open",
			state: &simulationState{feasible: three, fallback: FallbackBreakerOpen},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackBreakerOpen, Feasible: 3},
			msg:   "circuit breaker is open",
		},
		{
			name:  "stale simulation",
			state: &simulationState{feasible: three, fallback: FallbackStale},
			node:  "a",
			want:  Placement{Node: "a", Fallback: FallbackStale, Feasible: 3},
			msg:   "maxSimulationAge",
		},
		{
			name:  "simulation scores no feasible node",
			state: &simulationState{scores: map[string]int64{"x": 1}, feasible: three, fallback: FallbackNoneScored},
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
			state:     &simulationState{scores: map[string]int64{"a": 950, "b": 707}, feasible: []string{"a", "b"}},
			nominated: "a", node: "a",
			want: Placement{Node: "a", Score: 950, Rank: 1, Feasible: 2, Alternative: "b", AlternativeScore: 707},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if tc.state != nil {
				state.Write(stateKey, tc.state)
			}
			pod := st.MakePod().Name("p").Obj()
			pod.Status.NominatedNodeName = tc.nominated
			got := PlacementOf(state, pod, tc.node)
			if got != tc.want {
				t.Errorf("PlacementOf = %+v, want %+v", got, tc.want)
			}
			if msg := got.Message(); !strings.Contains(msg, tc.msg) {
				t.Errorf("Message() = %q, want it to contain %q", msg, tc.msg)
			}
		})
	}
}

// TestPlacementFromPreScore runs PreScore and reads its placement, as the
// binding cycle does.
func TestPlacementFromPreScore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		status int
		want   Placement
	}{
		{name: "scored", status: 200, body: `{"results":{"n1":{"score":0.9},"n2":{"score":0.4}}}`,
			want: Placement{Node: "n2", Score: 400, Rank: 2, Feasible: 2, Alternative: "n1", AlternativeScore: 900}},
		{name: "simulator fails", status: 500, body: `{"detail":"down"}`,
			want: Placement{Node: "n2", Fallback: FallbackSimulatorFailed, Feasible: 2}},
		{name: "no candidate scored", status: 200, body: `{"results":{"other":{"score":0.9}}}`,
			want: Placement{Node: "n2", Fallback: FallbackNoneScored, Feasible: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			pl := newTestPlugin(t, srv.URL, "retries: 0")
			state := framework.NewCycleState()
			pl.PreScore(t.Context(), state, st.MakePod().Name("p").Obj(), nodeInfos("n1", "n2"))
			if got := PlacementOf(state, nil, "n2"); got != tc.want {
				t.Errorf("PlacementOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPlacementMessageIsBounded: Message never exceeds MaxPlacementMessage.
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
		s := strings.Repeat("x", offset) + strings.Repeat(runes, MaxPlacementMessage/len(runes)+2)
		for n := MaxPlacementMessage - 2*len(runes); n <= MaxPlacementMessage; n++ {
			got := truncate(s, n)
			if len(got) > n || len(got) <= n-utf8.UTFMax || !utf8.ValidString(got) ||
				!strings.HasSuffix(got, "…") || !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Errorf("truncate(%d bytes, %d) = %d bytes ending %q: want at most %d and more than %d bytes, cut on a rune boundary, ending …",
					len(s), n, len(got), got[max(0, len(got)-8):], n, n-utf8.UTFMax)
			}
		}
	}
	for _, s := range []string{strings.Repeat("x", MaxPlacementMessage), strings.Repeat("é", MaxPlacementMessage/2)} {
		if got := truncate(s, MaxPlacementMessage); got != s {
			t.Errorf("truncate cut a %d-byte string at %d bytes", len(s), MaxPlacementMessage)
		}
	}
	if got := truncate(strings.Repeat("x", MaxPlacementMessage+1), MaxPlacementMessage); len(got) != MaxPlacementMessage || !strings.HasSuffix(got, "…") {
		t.Errorf("truncate of %d bytes = %d bytes ending %q, want %d ending …", MaxPlacementMessage+1, len(got), got[len(got)-8:], MaxPlacementMessage)
	}

	fallbacks := []string{"", FallbackNodeUnscored, FallbackSingleNode, FallbackSimulatorFailed, FallbackBreakerOpen, FallbackStale, FallbackNoneScored}
	placement := func(node, alternative, fallback string) Placement {
		return Placement{Node: node, Fallback: fallback, Score: math.MinInt64, Rank: math.MaxInt, Feasible: math.MaxInt,
			Alternative: alternative, AlternativeScore: math.MinInt64}
	}
	// Every message names the node, so a node name over the bound gives a
	// message over it.
	tooLong := strings.Repeat("é", MaxPlacementMessage)
	for _, fallback := range fallbacks {
		msg := placement(tooLong+"1", tooLong+"2", fallback).Message()
		if len(msg) > MaxPlacementMessage || !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…") {
			t.Errorf("fallback %q, %d-byte names: Message() is %d bytes ending %q, want at most %d, valid UTF-8, ending …",
				fallback, len(tooLong)+1, len(msg), msg[max(0, len(msg)-8):], MaxPlacementMessage)
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
		if len(msg) > MaxPlacementMessage || strings.HasSuffix(msg, "…") || !strings.Contains(msg, p.Node) {
			t.Errorf("fallback %q, 253-byte names: Message() = %d bytes %q, want it whole, at most %d", fallback, len(msg), msg, MaxPlacementMessage)
		}
		if (fallback == "" || fallback == FallbackNodeUnscored) && !strings.Contains(msg, p.Alternative) {
			t.Errorf("fallback %q, 253-byte names: Message() = %q lacks the alternative", fallback, msg)
		}
	}
}

var _ fwk.StateData = &simulationState{}
