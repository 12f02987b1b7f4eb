package customscore

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
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
	before, _ := testutil.GetCounterMetricValue(FallbacksTotal.WithLabelValues(testProfile, fallbackFailed))

	_, ctx := ktesting.NewTestContext(t)
	if s := pl.PreScore(ctx, framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodeInfos("n1", "n2")); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip: no node has a score", s)
	}
	if calls.Load() != 3 {
		t.Errorf("%d attempts, want 3 (the call and 2 retries)", calls.Load())
	}
	after, _ := testutil.GetCounterMetricValue(FallbacksTotal.WithLabelValues(testProfile, fallbackFailed))
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

func TestNormalizeScores(t *testing.T) {
	tests := []struct {
		name      string
		normalize func(fwk.NodeScoreList)
		in        []int64 // simulator score × 1000
		want      []int64
	}{
		{"min-max empty", normalizeScores, nil, nil},
		{"min-max one node", normalizeScores, []int64{420}, []int64{100}},
		{"min-max all zero", normalizeScores, []int64{0, 0, 0}, []int64{100, 100, 100}},
		{"min-max all equal", normalizeScores, []int64{7, 7}, []int64{100, 100}},
		{"min-max linear", normalizeScores, []int64{0, 250, 500, 1000}, []int64{0, 25, 50, 100}},
		{"min-max offset", normalizeScores, []int64{100, 200, 300}, []int64{0, 50, 100}},
		{"min-max close scores stretched", normalizeScores, []int64{900, 890}, []int64{100, 0}},
		{"min-max negative", normalizeScores, []int64{-1000, 0, 1000}, []int64{0, 50, 100}},
		{"min-max all negative", normalizeScores, []int64{-300, -200, -100}, []int64{0, 50, 100}},
		{"min-max rounds down", normalizeScores, []int64{0, 1, 3}, []int64{0, 33, 100}},
		{"min-max full int64 range", normalizeScores, []int64{math.MinInt64, 0, math.MaxInt64}, []int64{0, 50, 100}},
		{"min-max large close values", normalizeScores, []int64{math.MaxInt64 - 1000, math.MaxInt64}, []int64{0, 100}},
		// Past 2^53, float64 would round d × 100 and the quotient.
		{"min-max large span keeps the best at 100", normalizeScores, []int64{0, 1112603089564874}, []int64{0, 100}},
		{"min-max large span rounds down exactly", normalizeScores, []int64{0, 3823561820858031, 7497180040898100}, []int64{0, 51, 100}},
		{"min-max one below the highest", normalizeScores, []int64{math.MinInt64, math.MaxInt64 - 1, math.MaxInt64}, []int64{0, 99, 100}},
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
		normalizeScores(list)
		want := exactMinMax(in)
		for i := range list {
			if list[i].Score != want[i] {
				t.Errorf("normalizeScores(%v): score %d is %d, want %d", in, in[i], list[i].Score, want[i])
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

func TestSignPodRefusesBatching(t *testing.T) {
	_, s := (&CustomScore{}).SignPod(context.Background(), &v1.Pod{})
	if s.Code() != fwk.Unschedulable {
		t.Errorf("SignPod status = %v, want Unschedulable so that no pod reuses another's scores", s)
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
		nodes  []fwk.NodeInfo
		want   bool
	}{
		{"no results", nil, nodeInfos("n1", "n2"), false},
		{"results for other nodes only", map[string]int64{"x": 1, "y": 0}, nodeInfos("n1", "n2"), false},
		{"last candidate scored", map[string]int64{"n2": 0}, nodeInfos("n1", "n2"), true},
		{"first candidate scored", map[string]int64{"n1": 500}, nodeInfos("n1", "n2"), true},
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
	scored0, noneScored0 := scoredCycles(t), fallbacks(t, fallbackNoneScored)
	if s := pl.PreScore(ctx, framework.NewCycleState(), pod, nodeInfos("n1", "n2")); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip: the simulation scores no candidate", s)
	}
	// Such a cycle ranked nothing: it is a fallback, not a scored cycle.
	if got := scoredCycles(t) - scored0; got != 0 {
		t.Errorf("scored_cycles_total grew by %v for a cycle that scored no candidate, want 0", got)
	}
	if got := fallbacks(t, fallbackNoneScored) - noneScored0; got != 1 {
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
