package customscore

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

func TestPlacementOf(t *testing.T) {
	three := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name  string
		state *simulationState // nil: PreScore did not run
		node  string
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if tc.state != nil {
				state.Write(stateKey, tc.state)
			}
			got := PlacementOf(state, tc.node)
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
			if got := PlacementOf(state, "n2"); got != tc.want {
				t.Errorf("PlacementOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPlacementMessageIsBounded(t *testing.T) {
	long := strings.Repeat("n", 300) + "é"
	p := Placement{Node: long + "1", Score: 1, Rank: 1, Feasible: 2, Alternative: long + "2"}
	for _, n := range []int{MaxPlacementMessage, 40, 41} {
		got := truncate(p.Message()+strings.Repeat("x", 2000), n)
		if len(got) > n || !strings.HasSuffix(got, "…") {
			t.Errorf("truncate(…, %d) = %d bytes, suffix %q", n, len(got), got[max(0, len(got)-4):])
		}
	}
	if got := len(p.Message()); got > MaxPlacementMessage {
		t.Errorf("Message() is %d bytes, want ≤ %d", got, MaxPlacementMessage)
	}
}

var _ fwk.StateData = &simulationState{}
