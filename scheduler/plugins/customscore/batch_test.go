package customscore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	"k8s.io/kubernetes/test/utils/ktesting"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/networkcapacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// listingHandle is a profile's framework that lists the plugins it runs
// at PreFilter, as the scheduler's does.
type listingHandle struct {
	profileHandle
	preFilter []string
}

func (h listingHandle) ListPlugins() *config.Plugins {
	var ps config.Plugins
	for _, n := range h.preFilter {
		ps.PreFilter.Enabled = append(ps.PreFilter.Enabled, config.Plugin{Name: n})
	}
	return &ps
}

// The plugin signs pods only where a batch keeps its meaning: in
// Background mode, in a profile that runs its PreFilter, for pods outside
// pod groups.
func TestSignPod(t *testing.T) {
	grouped := st.MakePod().Name("g").Obj()
	grouped.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptrTo("group")}
	for _, tc := range []struct {
		name      string
		args      string
		preFilter []string
		pod       *v1.Pod
		signs     bool
	}{
		{"PerCycle", "", []string{Name}, st.MakePod().Name("p").Obj(), false},
		{"Background", "refreshMode: Background", []string{Name}, st.MakePod().Name("p").Obj(), true},
		{"Background, without the plugin at preFilter", "refreshMode: Background", []string{"NodeResourcesFit"}, st.MakePod().Name("p").Obj(), false},
		{"Background, a pod group's pod", "refreshMode: Background", []string{Name}, grouped, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := newProfilePlugin(t, "http://127.0.0.1:1", tc.args, listingHandle{profileHandle{name: testProfile}, tc.preFilter})
			_, s := pl.SignPod(context.Background(), tc.pod)
			if got := s.IsSuccess(); got != tc.signs {
				t.Errorf("SignPod = %v, want signed %t", s, tc.signs)
			}
			if !s.IsSuccess() && s.Code() != fwk.Unschedulable {
				t.Errorf("SignPod refuses with %v, want Unschedulable (an unsignable pod, not an error)", s.Code())
			}
		})
	}
	// A handle that cannot list its plugins: no batching.
	pl := newProfilePlugin(t, "http://127.0.0.1:1", "refreshMode: Background", nil)
	if _, s := pl.SignPod(context.Background(), st.MakePod().Name("p").Obj()); s.IsSuccess() {
		t.Error("SignPod signs without knowing whether the profile runs the plugin's PreFilter")
	}
}

func ptrTo[T any](v T) *T { return &v }

// batchProfile is a framework with CustomScorePlugin and NetworkCapacity
// as the live control-plane install's profile runs them: Background mode,
// CustomScorePlugin at preFilter, preScore and score (weight 10), and
// NetworkCapacity after it at preScore and score (weight 20). It returns
// the framework and its CustomScorePlugin.
func batchProfile(t *testing.T, ctx context.Context, url string) (framework.Framework, *CustomScore) {
	t.Helper()
	var pl *CustomScore
	newScore := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := New(ctx, testArgs(t, "simulatorURL: "+url+"\nrefreshMode: Background\nrefreshInterval: 10ms\nmaxSimulationAge: 10s\ntimeout: 1s"), h)
		if err == nil {
			pl = p.(*CustomScore)
			t.Cleanup(func() { _ = pl.Close() })
		}
		return p, err
	}
	fw, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensionsWithWeight(Name, 10, newScore, "PreFilter", "PreScore", "Score"),
		tf.RegisterPluginAsExtensionsWithWeight(networkcapacity.Name, 20, networkcapacity.New, "PreScore", "Score"),
	}, testProfile, frameworkruntime.WithSnapshotSharedLister(cache.NewEmptySnapshot()))
	if err != nil {
		t.Fatal(err)
	}
	return fw, pl
}

// linksBody is an answer scoring n1 at score1 and n2 at 0.1, each on a
// measured 100 Mbit/s link, measured at.
func linksBody(score1 float64, at time.Time) string {
	link := fmt.Sprintf(`"bandwidth_mbps": 100, "measured": {"bandwidth_mbps": {"value": 100, "low": 95, "high": 105, "samples": 5, "measured_at": %q}}`,
		at.Format(time.RFC3339Nano))
	return fmt.Sprintf(`{"window_seconds": 5, "results": {"n1": {"score": %g, %s}, "n2": {"score": 0.1, %s}}}`, score1, link, link)
}

// A batch ranks every pod with one simulation, and with every plugin of
// the profile. The scheduler re-scores the node the previous pod took
// with PreScore on a copy of the cycle's state (upstream's
// rescoreHintedNode); a refresh in between must not give that node a
// score from a newer simulation than the batch's others, and
// NetworkCapacity, which reads the simulation CustomScorePlugin leaves,
// must score it too: a plugin that skips the re-score is left out of the
// batch's new ranking, and the link that just took a pod would look as
// free as before. The next cycle that scores in full takes the newer
// simulation.
func TestRescoreInsideABatchKeepsItsSimulation(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	measured := time.Now()
	body.Store(linksBody(0.9, measured))
	srv, _ := simulator(t, &body, &status)
	_, ctx := ktesting.NewTestContext(t)
	fw, pl := batchProfile(t, ctx, srv.URL)
	pod := st.MakePod().Name("p").Annotation(networkcapacity.IngressBandwidthAnnotation, "60M").Obj()
	// rawScores runs the profile's PreScore on state over nodes, as the
	// scheduler does, then Score on node, and returns each plugin's raw
	// score; PreScore's skips are the plugins missing.
	rawScores := func(state fwk.CycleState, nodes []fwk.NodeInfo, node fwk.NodeInfo) map[string]int64 {
		t.Helper()
		if s := fw.RunPreScorePlugins(ctx, state, pod, nodes); !s.IsSuccess() {
			t.Fatalf("PreScore: %v", s)
		}
		scores, s := fw.RunRawScorePlugins(ctx, state, pod, node)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		out := map[string]int64{}
		for _, ps := range scores {
			out[ps.Name] = ps.Score
		}
		return out
	}
	preFilter := func() fwk.CycleState {
		t.Helper()
		state := framework.NewCycleState()
		if _, s, _ := fw.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
			t.Fatalf("PreFilter: %v", s)
		}
		return state
	}
	nodes := nodeInfos("n1", "n2")
	eventually(t, "the first simulation", func() bool {
		return rawScores(preFilter(), nodes, nodes[0])[Name] == 900
	})

	// The batch's first pod ranked with 0.9 and went to n1; the simulator
	// now says 0.5.
	body.Store(linksBody(0.5, measured))
	eventually(t, "the refresh", func() bool {
		sim, _ := pl.source.simulation(ctx, pod)
		return sim != nil && sim.Scores["n1"] == 500
	})
	n1 := framework.NewNodeInfo(st.MakePod().Name("previous").Annotation(networkcapacity.IngressBandwidthAnnotation, "60M").Obj())
	n1.SetNode(nodes[0].Node())

	// The next pod of the batch: its cycle's PreFilter, then the re-score
	// of n1 on a copy of its state, over the batch's nodes and n1.
	state := preFilter()
	copied := state.Clone()
	got := rawScores(copied, []fwk.NodeInfo{nodes[1], n1}, n1)
	if skipped := copied.GetSkipScorePlugins(); skipped.Len() > 0 {
		t.Errorf("PreScore skipped %v in the re-score: the batch's new ranking leaves them out", sets.List(skipped))
	}
	if got[Name] != 900 {
		t.Errorf("re-scored n1 inside the batch at %d, want 900, the batch's simulation", got[Name])
	}
	// 40 Mbit/s left of 100 with the previous pod's 60 counted: 20 below
	// the 80 % target, and a tenth of the 20 in the reserve.
	if want := int64(22000); got[networkcapacity.Name] != want {
		t.Errorf("NetworkCapacity re-scored n1 at %d, want %d: the previous pod's 60 Mbit/s counted on its link", got[networkcapacity.Name], want)
	}
	// The pod took a node from the batch: its event says so.
	p := placement.FromCycleState(state, pod, "n1")
	if p.Reused != placement.ReusedRanking || p.Score != 900 {
		t.Errorf("placement of the batched pod = %+v, want the reused ranking (score 900)", p)
	}
	if msg := p.Message(); !strings.Contains(msg, "ranking reused from the pod scheduled before it") {
		t.Errorf("message %q does not say the ranking was reused", msg)
	}

	// A cycle of its own takes the newer simulation.
	if got := rawScores(preFilter(), nodes, nodes[0]); got[Name] != 500 {
		t.Errorf("a cycle scoring in full scored n1 %d, want 500, the newer simulation", got[Name])
	}
}

// Without a re-score the plugin cannot tell a pod placed from a batch
// from one whose node was the only feasible one: the event says both.
// Long after the last ranking, no batch can be reused, and PreFilter
// leaves nothing.
func TestPreFilterLeavesTheReusableRanking(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(goodBody)
	srv, _ := simulator(t, &body, &status)
	pl := newTestPlugin(t, srv.URL, "refreshMode: Background\nrefreshInterval: 10ms\nmaxSimulationAge: 10s")
	_, ctx := ktesting.NewTestContext(t)
	nodes := nodeInfos("n1", "n2")
	pod := st.MakePod().Name("p").Obj()
	eventually(t, "a scored cycle", func() bool {
		return pl.PreScore(ctx, framework.NewCycleState(), pod, nodes).IsSuccess()
	})
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	p := placement.FromCycleState(state, pod, "n1")
	if p.Reused != placement.ReusedUnlessOnly {
		t.Errorf("placement without a re-score = %+v, want Reused %q", p, placement.ReusedUnlessOnly)
	}
	if msg := p.Message(); !strings.Contains(msg, "unless the node was the only feasible one") {
		t.Errorf("message %q", msg)
	}

	pl.batch.now = func() time.Time { return time.Now().Add(reuseWindow + time.Second) }
	state = framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	if p := placement.FromCycleState(state, pod, "n1"); p.Fallback != placement.FallbackSingleNode || p.Reused != "" {
		t.Errorf("placement long after the last ranking = %+v, want single_node", p)
	}
}

// In Background mode PreFilter holds the newest simulation for the
// profile's Filter plugins (NetworkCapacity's), which run before PreScore;
// in PerCycle mode, which asks the simulator in PreScore, the last answer
// while it is young enough.
func TestPreFilterHoldsTheSimulation(t *testing.T) {
	var body atomic.Value
	var status atomic.Int32
	body.Store(`{"results":{"n1":{"score":0.9},"n2":{"score":0.1}}}`)
	srv, _ := simulator(t, &body, &status)
	_, ctx := ktesting.NewTestContext(t)
	nodes := nodeInfos("n1", "n2")
	pod := st.MakePod().Name("p").Obj()
	held := func(pl *CustomScore) *placement.Cycle {
		t.Helper()
		state := framework.NewCycleState()
		if _, s := pl.PreFilter(ctx, state, pod, nodes); !s.IsSuccess() {
			t.Fatalf("PreFilter: %v", s)
		}
		if sim := network.Held(state); sim != nil {
			return &placement.Cycle{Scores: sim.Scores}
		}
		return nil
	}

	background := newTestPlugin(t, srv.URL, "refreshMode: Background\nrefreshInterval: 10ms\nmaxSimulationAge: 10s")
	eventually(t, "a held simulation in Background mode", func() bool {
		c := held(background)
		return c != nil && c.Scores["n1"] == 900
	})

	// PerCycle: nothing before any answer; then the last answer, whoever
	// asked, while it is younger than maxSimulationAge; PreScore still asks
	// anew.
	pc := newTestPlugin(t, srv.URL, "maxSimulationAge: 10s")
	if c := held(pc); c != nil {
		t.Errorf("PreFilter in PerCycle mode holds a simulation (%v) before the simulator answered once", c.Scores)
	}
	if raw, _ := scoreCycle(t, pc, nodes); raw["n1"] != 900 {
		t.Fatalf("the PerCycle cycle scored n1 %d, want 900", raw["n1"])
	}
	if c := held(pc); c == nil || c.Scores["n1"] != 900 {
		t.Errorf("PreFilter in PerCycle mode holds %v after a cycle's answer, want n1 at 900", c)
	}
	pc.source.(*perCycle).maxAge = time.Nanosecond
	if c := held(pc); c != nil {
		t.Errorf("PreFilter in PerCycle mode holds an answer older than maxSimulationAge (%v)", c.Scores)
	}
}
