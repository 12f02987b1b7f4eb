package customscore

import (
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/kubernetes/test/utils/ktesting"

	"kns3.dev/kns3/scheduler/plugins/networkcapacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// warmUpBody is an answer while the simulator warms up: 3 of 100 nodes
// measured in full, under its 90 % quorum, and every measured node scored
// 0, each on a measured link.
const warmUpBody = `{"warm_up": {"measured_in_full": 3, "nodes": 100, "quorum": 0.9}, "window_seconds": 15, "results": {
	"n1": {"score": 0, "bandwidth_mbps": 100, "measured": {"bandwidth_mbps": {"value": 100, "low": 95, "high": 105, "samples": 5}}},
	"n2": {"score": 0, "bandwidth_mbps": 10, "measured": {"bandwidth_mbps": {"value": 10, "low": 9, "high": 11, "samples": 5}}}}}`

const warmUpMessage = "Fallback (warming_up): n1 chosen without network scores: live measurements cover 3 of 100 nodes in full, under the 90 % needed to rank"

// While the simulator warms up its scores rank nothing: PreScore falls
// back with the reason warming_up, counted in the fallbacks metric, and
// leaves no simulation in the cycle, so that NetworkCapacity, which reads
// it, skips too. The placement event says how far the measurements are.
func TestWarmUpFallsBack(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(warmUpBody)
	srv, _ := simulator(t, &body, &status)
	_, ctx := ktesting.NewTestContext(t)
	nodes := nodeInfos("n1", "n2")
	pod := st.MakePod().Name("p").Obj()
	check := func(t *testing.T, state *framework.CycleState) {
		t.Helper()
		c, err := placement.Read(state)
		if err != nil {
			t.Fatal(err)
		}
		if c.Fallback != placement.FallbackWarmingUp || c.Simulation != nil || c.Scores != nil {
			t.Errorf("cycle = %+v, want the fallback %q with no simulation and no scores", c, placement.FallbackWarmingUp)
		}
		if msg := placement.FromCycleState(state, pod, "n1").Message(); msg != warmUpMessage {
			t.Errorf("placement message %q, want %q", msg, warmUpMessage)
		}
	}

	t.Run("PerCycle", func(t *testing.T) {
		pl := newTestPlugin(t, srv.URL, "")
		before := fallbacks(t, placement.FallbackWarmingUp)
		state := framework.NewCycleState()
		if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSkip() {
			t.Fatalf("PreScore = %v, want Skip", s)
		}
		check(t, state)
		if got := fallbacks(t, placement.FallbackWarmingUp) - before; got != 1 {
			t.Errorf("fallbacks_total{reason=%q} grew by %v, want 1", placement.FallbackWarmingUp, got)
		}
	})

	t.Run("Background, with NetworkCapacity", func(t *testing.T) {
		fw, _ := batchProfile(t, ctx, srv.URL)
		var state *framework.CycleState
		eventually(t, "a cycle on the warming-up answer", func() bool {
			state = framework.NewCycleState()
			if _, s, _ := fw.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			if s := fw.RunPreScorePlugins(ctx, state, pod, nodes); !s.IsSuccess() {
				t.Fatalf("PreScore: %v", s)
			}
			c, err := placement.Read(state)
			return err == nil && c.Fallback != placement.FallbackStale
		})
		check(t, state)
		if skipped, want := state.GetSkipScorePlugins(), sets.New(Name, networkcapacity.Name); !skipped.Equal(want) {
			t.Errorf("PreScore skipped %v, want %v", sets.List(skipped), sets.List(want))
		}
	})
}
