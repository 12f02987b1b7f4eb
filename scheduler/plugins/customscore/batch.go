package customscore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

// Opportunistic batching (KEP-5598, on by default in Kubernetes v1.37)
// lets the scheduler place a run of similar pods from one ranking: the
// first pod of the run is filtered and scored in full, and each next pod
// with the same signature takes the best node left in that ranking, after
// the scheduler filters it again. When the node the pod before took still
// fits, the scheduler first re-scores that one node (PreScore, Score and
// NormalizeScore, on a copy of the cycle's state) and puts it back in the
// ranking. A run ends when a pod's signature differs, a cycle fails or
// belongs to another profile, or 500 ms after the run's first pod
// (maxBatchAge in pkg/scheduler/framework/runtime/batch.go).
//
// Upstream signs a pod when it enters the scheduling queue, not when its
// cycle runs. So a signature cannot carry the simulation the pod will be
// scored with: a pod signed before a refresh, scheduled after it, would
// carry the old simulation's identity, and two such pods could share a
// ranking made from either. The plugin instead keeps a run on one
// simulation (ranking): in Background mode a cycle that scores in full
// takes the newest simulation, as before, and remembers it; a re-score
// inside a run (a cycle whose state is a copy, which PreFilter's mark
// tells) uses the remembered simulation, never a newer one. A full cycle
// either starts a new run with its own ranking or ends the old one (a
// failed cycle breaks the run of cycle numbers), so no run mixes two
// simulations or outlives the ranking it was made from. A refresh between
// two pods of a run takes effect at the next pod scored in full: at the
// latest when the run ends, at most 500 ms after it began. Background
// mode already scores with a simulation up to maxSimulationAge old; a run
// adds at most those 500 ms.
//
// PerCycle mode refuses to sign (SignPod): it promises a simulation asked
// for in each cycle, and a pod placed from a run asks for none (the
// scheduler runs no PreScore for it, or only the re-score of one node).

// maxBatchAge is how long after its first pod upstream may still reuse a
// ranking (pkg/scheduler/framework/runtime/batch.go); reuseWindow adds
// slack for the rest of that pod's cycle, after PreScore.
const (
	maxBatchAge = 500 * time.Millisecond
	reuseWindow = 2 * maxBatchAge
)

// markKey is where PreFilter leaves its mark in each scheduling cycle's
// state, when the plugin signs pods.
const markKey fwk.StateKey = Name + "/mark"

// mark tells the cycle's own state from a copy: Clone returns a copy
// marked as such. The scheduler copies the state only to re-score the
// previous pod's node inside a batch.
type mark struct{ copied bool }

func (m *mark) Clone() fwk.StateData { return &mark{copied: true} }

// ranking is what the last cycle that scored in full ranked the nodes
// with: the simulation's scores (nil when it fell back, Fallback says
// why) and its feasible nodes, as that cycle's placement.Cycle has them.
type ranking struct {
	cycle *placement.Cycle
	// at is when the cycle ranked: a batch can reuse the ranking only
	// within reuseWindow of it.
	at time.Time
}

// batching is the plugin's part in opportunistic batching: whether it
// signs pods, and the ranking a batch reuses.
type batching struct {
	// on: Background mode, and the profile runs the plugin's PreFilter,
	// without which a re-score cannot be told from a full cycle. It is
	// decided once, from the framework, when first asked.
	once sync.Once
	on   bool
	// ranked is the last full cycle's ranking. The scheduling loop writes
	// and reads it; the binding cycles do not.
	ranked atomic.Pointer[ranking]
	now    func() time.Time
}

// signs reports whether the plugin signs pods in this profile: in
// Background mode, when the profile runs its PreFilter. A handle that
// cannot tell (a test's) counts as without.
func (pl *CustomScore) signs() bool {
	pl.batch.once.Do(func() {
		if pl.args.RefreshMode != apiconfig.RefreshBackground {
			return
		}
		runs, known := profile.Runs(pl.handle, profile.PreFilter, Name)
		pl.batch.on = runs && known
	})
	return pl.batch.on
}

// SignPod lets upstream's opportunistic batching place a run of pods from
// one ranking, in Background mode (see the comment at the top of this
// file): Score reads only the node's score in the simulation, so the
// signature needs nothing of the pod; the other plugins' fragments say
// which pods rank the nodes alike. It refuses in PerCycle mode, which asks
// the simulator in every cycle; in a profile without the plugin's
// PreFilter; and for a pod of a pod group, whose pods the scheduler may
// place in one cycle number, so that a failed cycle does not end a run.
func (pl *CustomScore) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	switch {
	case pl.args.RefreshMode != apiconfig.RefreshBackground:
		return nil, fwk.NewStatus(fwk.Unschedulable, "refreshMode PerCycle asks the simulator in every scheduling cycle")
	case !pl.signs():
		return nil, fwk.NewStatus(fwk.Unschedulable, "the profile does not run CustomScorePlugin at preFilter")
	case pod.Spec.SchedulingGroup != nil:
		return nil, fwk.NewStatus(fwk.Unschedulable, "the pod belongs to a pod group")
	}
	return nil, nil
}

// markCycle marks the cycle's own state, so that PreScore can tell a
// re-score inside a batch, which runs on a copy, from a cycle of its own.
func markCycle(state fwk.CycleState) { state.Write(markKey, &mark{}) }

// offerRanking leaves in state the ranking of the last cycle that scored
// in full, while a batch may still reuse it, for the placement event: the
// cycle replaces it if it scores for itself.
func (pl *CustomScore) offerRanking(state fwk.CycleState) {
	if r := pl.batch.ranked.Load(); r != nil && pl.batch.now().Sub(r.at) <= reuseWindow {
		c := *r.cycle
		c.Reuse = &placement.Reuse{}
		placement.Write(state, &c)
	}
}

// rescoring reports whether PreScore runs on a copy of the cycle's state:
// upstream's batching re-scoring the previous pod's node.
func rescoring(state fwk.CycleState) bool {
	data, err := state.Read(markKey)
	if err != nil {
		return false
	}
	m, ok := data.(*mark)
	return ok && m.copied
}

// remember keeps cs, the ranking of a cycle that scored in full, for the
// re-scores of the batch it may start.
func (pl *CustomScore) remember(cs *placement.Cycle) {
	pl.batch.ranked.Store(&ranking{cycle: cs, at: pl.batch.now()})
}

// rescore is PreScore when upstream's batching re-scores the node the
// previous pod took: it scores with the ranking the batch was made from,
// whatever simulation is newer, so that the node's new score and the
// batch's others come from one simulation. It leaves that ranking's
// simulation too: the profile's other plugins that read it
// (NetworkCapacity) skip without it, and upstream re-ranks the batch
// without the plugins whose PreScore skipped the re-score. It confirms,
// for the placement event, that this cycle took its node from a reused
// ranking.
func (pl *CustomScore) rescore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if c, err := placement.Read(state); err == nil && c.Reuse != nil {
		c.Reuse.Confirm() // the Cycle PreFilter left, shared with the cycle's own state
	}
	r := pl.batch.ranked.Load()
	if r == nil {
		// Not reached: a batch starts from a cycle that scored in full.
		return fwk.AsStatus(fmt.Errorf("re-scoring pod %s inside a batch with no ranking kept", klog.KObj(pod)))
	}
	cs := &placement.Cycle{Scores: r.cycle.Scores, Feasible: make([]string, len(nodes)), Fallback: r.cycle.Fallback,
		Simulation: r.cycle.Simulation, WarmUp: r.cycle.WarmUp}
	for i, n := range nodes {
		cs.Feasible[i] = n.Node().Name
	}
	placement.Write(state, cs)
	klog.FromContext(ctx).V(5).Info("Re-scoring inside a batch with its ranking", "pod", klog.KObj(pod), "nodes", len(nodes), "fallback", cs.Fallback)
	if cs.Fallback != "" {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}
