package customscore

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/kubernetes/test/utils/ktesting"

	"kns3.dev/kns3/scheduler/plugins/placement"
)

func nodeInfos(names ...string) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, len(names))
	for i, n := range names {
		ni := framework.NewNodeInfo()
		ni.SetNode(st.MakeNode().Name(n).Obj())
		out[i] = ni
	}
	return out
}

func newTestPlugin(t *testing.T, url, extraArgs string) *CustomScore {
	t.Helper()
	return newProfilePlugin(t, url, extraArgs, nil)
}

// newProfilePlugin makes the plugin as newTestPlugin does, with handle h
// (nil: no framework, no profile).
func newProfilePlugin(t *testing.T, url, extraArgs string, h fwk.Handle) *CustomScore {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	args := fmt.Sprintf("simulatorURL: %s\n%s", url, extraArgs)
	// Test defaults, unless extraArgs sets them.
	for _, d := range []string{"timeout: 1s", "retryDelay: 1ms"} {
		if !strings.Contains(extraArgs, strings.Split(d, ":")[0]+":") {
			args += "\n" + d
		}
	}
	pl, err := New(ctx, testArgs(t, args), h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pl.(*CustomScore).Close() })
	return pl.(*CustomScore)
}

// scoreCycle runs PreScore, Score and NormalizeScore as the framework does,
// on a fresh CycleState, and returns the raw and the normalized scores.
func scoreCycle(t *testing.T, pl *CustomScore, nodes []fwk.NodeInfo) (raw, normalized map[string]int64) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	state := framework.NewCycleState()
	pod := st.MakePod().Name("p").Obj()
	raw, normalized = map[string]int64{}, map[string]int64{}
	if s := pl.PreScore(ctx, state, pod, nodes); s.IsSkip() {
		// The framework then runs neither Score nor NormalizeScore: the
		// plugin adds 0 to every node.
		for _, n := range nodes {
			raw[n.Node().Name], normalized[n.Node().Name] = 0, 0
		}
		return raw, normalized
	} else if !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	list := make(fwk.NodeScoreList, len(nodes))
	for i, n := range nodes {
		score, s := pl.Score(ctx, state, pod, n)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		raw[n.Node().Name] = score
		list[i] = fwk.NodeScore{Name: n.Node().Name, Score: score}
	}
	if s := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	for _, ns := range list {
		normalized[ns.Name] = ns.Score
	}
	// The placement event reads the same scores from the cycle state.
	if kept, ok := placement.ReadPoints(state, Name); !ok || !maps.Equal(kept, normalized) {
		t.Errorf("points left in the cycle state %v, %t; want the normalized scores %v", kept, ok, normalized)
	}
	return raw, normalized
}

func simulator(t *testing.T, body *atomic.Value, status *atomic.Int32) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		if code := status.Load(); code != 0 {
			http.Error(w, "down", int(code))
			return
		}
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestScoringCycle(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(`{"results":{"n1":{"score":0.9},"n2":{"score":0.45},"n3":{"score":0.1},"elsewhere":{"score":5}}}`)
	srv, calls := simulator(t, &body, &status)
	pl := newTestPlugin(t, srv.URL, "")
	nodes := nodeInfos("n1", "n2", "n3", "n4")

	raw, norm := scoreCycle(t, pl, nodes)
	if diff := cmp.Diff(map[string]int64{"n1": 900, "n2": 450, "n3": 100, "n4": 0}, raw); diff != "" {
		t.Errorf("raw scores (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"n1": 100, "n2": 50, "n3": 11, "n4": 0}, norm); diff != "" {
		t.Errorf("normalized scores (-want,+got):\n%s", diff)
	}
	if calls.Load() != 1 {
		t.Errorf("PreScore made %d calls, want 1 per cycle", calls.Load())
	}

	// The next cycle sees the simulator's new ranking, not the old one.
	body.Store(`{"results":[{"node":"n3","score":1},{"node":"n1","score":0}]}`)
	raw, _ = scoreCycle(t, pl, nodes)
	if diff := cmp.Diff(map[string]int64{"n1": 0, "n2": 0, "n3": 1000, "n4": 0}, raw); diff != "" {
		t.Errorf("second cycle raw scores (-want,+got):\n%s", diff)
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls after two cycles, want 2", calls.Load())
	}
}

func TestFallbackSkipsScoring(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(`{"results":{"n1":{"score":0.9}}}`)
	status.Store(http.StatusServiceUnavailable)
	srv, calls := simulator(t, &body, &status)
	pl := newTestPlugin(t, srv.URL, "breakerFailureThreshold: 100")
	before, _ := testutil.GetCounterMetricValue(FallbacksTotal.WithLabelValues(testProfile, placement.FallbackSimulatorFailed))

	_, ctx := ktesting.NewTestContext(t)
	if s := pl.PreScore(ctx, framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodeInfos("n1", "n2")); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip: no node has a score", s)
	}
	if calls.Load() != 3 {
		t.Errorf("%d attempts, want 3 (the call and 2 retries)", calls.Load())
	}
	after, _ := testutil.GetCounterMetricValue(FallbacksTotal.WithLabelValues(testProfile, placement.FallbackSimulatorFailed))
	if after-before != 1 {
		t.Errorf("fallbacks grew by %v, want 1", after-before)
	}
}

func TestScoreWithoutPreScoreIsAnError(t *testing.T) {
	pl := &CustomScore{}
	_, s := pl.Score(context.Background(), framework.NewCycleState(), &v1.Pod{}, nodeInfos("n1")[0])
	if s.IsSuccess() {
		t.Error("Score without PreScore state must fail")
	}
}

// The plugin normalizes as its args say: MinMax by default, Absolute when
// asked.
func TestNormalizationArg(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(`{"results":{"n1":{"score":0.90},"n2":{"score":0.89}}}`)
	srv, _ := simulator(t, &body, &status)
	nodes := nodeInfos("n1", "n2")
	for _, tt := range []struct {
		args string
		want map[string]int64
	}{
		{"", map[string]int64{"n1": 100, "n2": 0}},
		{"normalization: MinMax", map[string]int64{"n1": 100, "n2": 0}},
		{"normalization: Absolute", map[string]int64{"n1": 90, "n2": 89}},
	} {
		_, norm := scoreCycle(t, newTestPlugin(t, srv.URL, tt.args), nodes)
		if diff := cmp.Diff(tt.want, norm); diff != "" {
			t.Errorf("args %q: normalized scores (-want,+got):\n%s", tt.args, diff)
		}
	}
}

func TestNewRejectsInvalidArgs(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	_, err := New(ctx, testArgs(t, "timeout: -1s"), nil)
	if err == nil {
		t.Fatal("want an error for a negative timeout")
	}
}

func TestScoresAny(t *testing.T) {
	tests := []struct {
		name   string
		scores map[string]int64
		nodes  []string
		want   bool
	}{
		{"no results", nil, []string{"n1", "n2"}, false},
		{"results for other nodes only", map[string]int64{"x": 1, "y": 0}, []string{"n1", "n2"}, false},
		{"last candidate scored", map[string]int64{"n2": 0}, []string{"n1", "n2"}, true},
		{"first candidate scored", map[string]int64{"n1": 500}, []string{"n1", "n2"}, true},
		{"no candidates", map[string]int64{"n1": 1}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scoresAny(tt.scores, tt.nodes); got != tt.want {
				t.Errorf("scoresAny = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreScoreSkipsWhenNoCandidateIsScored(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(`{"results":{"elsewhere":{"score":0.9},"n2":{"score":"NaN"}}}`)
	srv, _ := simulator(t, &body, &status)
	pl := newTestPlugin(t, srv.URL, "")
	t.Cleanup(func() { _ = pl.Close() })
	_, ctx := ktesting.NewTestContext(t)
	pod := st.MakePod().Name("p").Obj()
	scored0, noneScored0 := scoredCycles(t), fallbacks(t, placement.FallbackNoneScored)
	if s := pl.PreScore(ctx, framework.NewCycleState(), pod, nodeInfos("n1", "n2")); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip: the simulation scores no candidate", s)
	}
	// Such a cycle ranked nothing: it is a fallback, not a scored cycle.
	if got := scoredCycles(t) - scored0; got != 0 {
		t.Errorf("scored_cycles_total grew by %v for a cycle that scored no candidate, want 0", got)
	}
	if got := fallbacks(t, placement.FallbackNoneScored) - noneScored0; got != 1 {
		t.Errorf("fallbacks_total{reason=none_scored} grew by %v, want 1", got)
	}
	if s := pl.PreScore(ctx, framework.NewCycleState(), pod, nodeInfos("n1", "elsewhere")); !s.IsSuccess() {
		t.Errorf("PreScore = %v, want Success: one candidate is scored", s)
	}
	if got := scoredCycles(t) - scored0; got != 1 {
		t.Errorf("scored_cycles_total grew by %v after a scored cycle, want 1", got)
	}
}

func scoredCycles(t *testing.T) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(ScoredCyclesTotal.WithLabelValues(testProfile))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
