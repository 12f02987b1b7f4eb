package customscore

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/kubernetes/test/utils/ktesting"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// fakeSource answers every cycle with sim, or with nothing and fallback.
type fakeSource struct {
	sim      *network.Simulation
	fallback string
	asked    int
}

func (f *fakeSource) simulation(context.Context, *v1.Pod) (*network.Simulation, string) {
	f.asked++
	return f.sim, f.fallback
}
func (f *fakeSource) held(time.Time) *network.Simulation { return nil }
func (f *fakeSource) run(ctx context.Context)            { <-ctx.Done() }

// PreScore, Score and NormalizeScore over whatever the source gives, and
// what the cycle leaves for the placement event.
func TestCycleFromSource(t *testing.T) {
	for _, tc := range []struct {
		name         string
		source       *fakeSource
		wantSkip     bool
		wantRaw      map[string]int64
		wantFallback string
		wantScored   float64
	}{
		{
			name:       "every candidate scored",
			source:     &fakeSource{sim: &network.Simulation{Scores: map[string]int64{"n1": 900, "n2": 100, "other": 1000}}},
			wantRaw:    map[string]int64{"n1": 900, "n2": 100},
			wantScored: 1,
		},
		{
			name:       "a candidate without a score scores 0",
			source:     &fakeSource{sim: &network.Simulation{Scores: map[string]int64{"n1": 500}, Invalid: []string{"n2"}}},
			wantRaw:    map[string]int64{"n1": 500, "n2": 0},
			wantScored: 1,
		},
		{
			name:     "no candidate scored: skipped, a none_scored fallback",
			source:   &fakeSource{sim: &network.Simulation{Scores: map[string]int64{"other": 1000}}},
			wantSkip: true, wantFallback: placement.FallbackNoneScored,
		},
		{
			name:     "no simulation: skipped with the source's reason",
			source:   &fakeSource{fallback: placement.FallbackBreakerOpen},
			wantSkip: true, wantFallback: placement.FallbackBreakerOpen,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl := &CustomScore{args: &apiconfig.CustomScorePluginArgs{RefreshMode: apiconfig.RefreshPerCycle}, metrics: newProfileMetrics(testProfile), source: tc.source}
			scored0 := scoredCycles(t)
			var fallbacks0 float64
			if tc.wantFallback != "" {
				fallbacks0 = fallbacks(t, tc.wantFallback)
			}
			state := framework.NewCycleState()
			pod := st.MakePod().Name("p").Obj()
			nodes := nodeInfos("n1", "n2")
			s := pl.PreScore(ctx, state, pod, nodes)
			if tc.source.asked != 1 {
				t.Errorf("the source was asked %d times, want once", tc.source.asked)
			}
			if s.IsSkip() != tc.wantSkip {
				t.Fatalf("PreScore = %v, want skip %t", s, tc.wantSkip)
			}
			if got := scoredCycles(t) - scored0; got != tc.wantScored {
				t.Errorf("scored cycles grew by %v, want %v", got, tc.wantScored)
			}
			if tc.wantSkip {
				if got := fallbacks(t, tc.wantFallback) - fallbacks0; got != 1 {
					t.Errorf("fallbacks{reason=%s} grew by %v, want 1", tc.wantFallback, got)
				}
				if p := placement.FromCycleState(state, pod, "n1"); p.Fallback != tc.wantFallback || p.Feasible != 2 {
					t.Errorf("placement %+v, want fallback %s among 2 feasible nodes", p, tc.wantFallback)
				}
				return
			}
			raw := map[string]int64{}
			for _, n := range nodes {
				score, s := pl.Score(ctx, state, pod, n)
				if !s.IsSuccess() {
					t.Fatal(s)
				}
				raw[n.Node().Name] = score
			}
			if diff := cmp.Diff(tc.wantRaw, raw); diff != "" {
				t.Errorf("raw scores (-want,+got):\n%s", diff)
			}
			if p := placement.FromCycleState(state, pod, "n1"); p.Fallback != "" || p.Rank != 1 {
				t.Errorf("placement on n1 %+v, want ranked first", p)
			}
		})
	}
}
