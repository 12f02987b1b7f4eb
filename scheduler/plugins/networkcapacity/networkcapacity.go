// Package networkcapacity implements NetworkCapacity, which ranks nodes by
// the bandwidth a new pod would find free on their link: the bandwidth the
// simulator serves, less the traffic it measured on the link, less what the
// pods placed on the node since that measurement need. The pods of one
// burst so see each other (the scheduler's cache holds the ones assumed and
// not yet bound), and a link that fills loses pods to one that does not.
//
// It reads the simulation CustomScorePlugin's PreScore took for the cycle,
// and never asks the simulator itself: list it after CustomScorePlugin at
// preScore. Without that simulation, or when it gives no feasible node a
// bandwidth, it skips, leaving the choice to the other plugins.
//
// Enabled at preFilter and filter as well (opt-in), it
// also rejects a node whose link has less free bandwidth than the pod
// declares (filter.go), and retries such a pod as soon as a new
// measurement may have freed a link (retry.go).
package networkcapacity

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = status.NetworkCapacity

// NetworkCapacity is the NetworkCapacity plugin. What a cycle knows is in
// its CycleState; between cycles it keeps only what it read of the last
// answer (answerLinks), which no cycle's result depends on having.
type NetworkCapacity struct {
	args *apiconfig.NetworkCapacityArgs
	// now is the clock pods assumed and not yet bound are placed at.
	now func() time.Time
	// retry retries the pods Filter rejected when a new measurement comes
	// (retry.go); nil without informers.
	retry *retrier
	// answer is the last answer PreScore read.
	answer atomic.Pointer[answerLinks]
}

var (
	_ fwk.PreScorePlugin    = &NetworkCapacity{}
	_ fwk.ScorePlugin       = &NetworkCapacity{}
	_ fwk.ScoreExtensions   = &NetworkCapacity{}
	_ fwk.EnqueueExtensions = &NetworkCapacity{}
	_ fwk.SignPlugin        = &NetworkCapacity{}
)

// New initializes the plugin from its NetworkCapacityArgs. Invalid args
// fail scheduler start-up with the field named.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := getArgs(obj)
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(1).Info("Plugin configured", "plugin", Name, "defaultPodMbps", args.DefaultPodMbps,
		"targetUtilizationPercent", args.TargetUtilizationPercent)
	// What the status says of the plugin's points (profile.Scoring): a
	// reader counts links as the plugin does.
	profile.DeclareScoring(h, status.ScorePlugin{Name: Name,
		Capacity: &status.CapacityArgs{DefaultPodMbps: args.DefaultPodMbps, TargetUtilizationPercent: args.TargetUtilizationPercent}})
	return &NetworkCapacity{args: args, now: time.Now, retry: newRetrier(ctx, h)}, nil
}

// Name returns the name of the plugin.
func (pl *NetworkCapacity) Name() string { return Name }

// PreScore works out, for every feasible node the simulation gives a
// bandwidth, what the pods placed there since the measurement need, and
// leaves it in the cycle's state for Score and for the placement event.
// What does not change with the cycle, the answer's links and the counts
// of nodes unchanged since an earlier cycle on it, it reads once
// (answerLinks).
func (pl *NetworkCapacity) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	c, err := placement.Read(state)
	if err != nil || c.Simulation == nil {
		klog.FromContext(ctx).V(4).Info("No simulation in the cycle: bandwidth not ranked", "plugin", Name, "pod", klog.KObj(pod))
		return fwk.NewStatus(fwk.Skip)
	}
	a := pl.answerFor(c.Simulation)
	if len(a.links) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	cs := &Cycle{answer: a, placed: make([]placedOn, len(a.links)), NeedMbps: capacity.NeedMbps(pod, pl.args.DefaultPodMbps),
		targetPercent: pl.args.TargetUtilizationPercent}
	now, described := pl.now(), 0
	a.mu.Lock()
	for _, n := range nodes {
		pos, ok := a.index[n.Node().Name]
		if !ok {
			continue
		}
		mbps, pods := a.counted(pos, n, now, pl.args.DefaultPodMbps)
		cs.placed[pos] = placedOn{mbps: mbps, pods: int32(pods), feasible: true}
		described++
	}
	a.mu.Unlock()
	if described == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	write(state, cs)
	return nil
}

// Score is the node's free bandwidth, in kbit/s, the reserve above the
// target utilization at a tenth, with a bandwidth alike a faster link's
// (within the noise, or too little below it to count) taken as that one's
// (Link.rankMbps); 0 for a node whose link the simulation does not
// describe: unknown is never the best.
func (pl *NetworkCapacity) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	cs, err := read(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	l, _ := cs.link(nodeInfo.Node().Name)
	return capacity.RankMilli(l.rankMbps()), nil
}

// ScoreExtensions returns the plugin itself, which normalizes its scores.
func (pl *NetworkCapacity) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore scales the scores so that the most free scores
// MaxNodeScore: in proportion, not stretched, so that two links a few
// Mbit/s apart score a few points apart, and a full link scores 0.
//
// A lower bound ranks at its bound (network.Link's RankedBandwidthMbps,
// by the shared tie rule of simulator/api/ties), with the rule's one
// exception, a bound that already means enough: a link the probes could
// only measure as at least some bandwidth, on which the pod fits below the
// fill target even so, scores as the most free. Two such links differ
// only in how far the probes happened to push them, and more than enough
// changes nothing.
//
// It leaves the scores in the cycle state for the placement event
// (placement.WritePoints).
func (pl *NetworkCapacity) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	var roomyLowerBound func(string) bool
	// An answer with no lower bound has no node to ask about.
	if cs, err := read(state); err == nil && cs.answer.atLeast {
		roomyLowerBound = func(node string) bool {
			l, ok := cs.link(node)
			return ok && l.BandwidthAtLeast && l.BelowTargetMbps >= cs.NeedMbps
		}
	}
	capacity.Normalize(scores, roomyLowerBound)
	placement.WritePoints(state, pointsKey, scores)
	return nil
}

// pointsKey is where NormalizeScore leaves the cycle's normalized scores,
// for the placement event.
var pointsKey = placement.PointsKey(Name)

// EventsToRegister registers what may turn Filter's rejection into a fit:
// a pod leaving a node, whose need stops being counted and whose traffic
// stops, and a new node, which Filter lets through until it is measured.
// Every such event may free a link, so neither needs a hint to tell. A new
// measurement is no cluster event: the retrier (retry.go) retries the pods
// the filter rejected when one comes.
func (pl *NetworkCapacity) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
	}, nil
}

// SignPod lets pods that declare the same bandwidth share a batched
// ranking: a node's score depends on the pod only through its declared
// need. A placement changes only the chosen node's count, and upstream's
// batching filters and scores that node again before it reuses the rest
// of the ranking, so the nodes it reuses still hold. The re-score reads
// the batch's simulation from the cycle CustomScorePlugin's re-score
// leaves; were it missing, PreScore would skip and upstream would re-rank
// the batch without this plugin.
func (pl *NetworkCapacity) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{
		{Key: ingressSignerName, Value: pod.Annotations[IngressBandwidthAnnotation]},
		{Key: egressSignerName, Value: pod.Annotations[EgressBandwidthAnnotation]},
	}, nil
}

// describe is how a Link reads in the placement event, e.g. "70 Mbit/s
// free of 100 Mbit/s, 50 Mbit/s of it below the 80 % fill target (10 Mbit/s
// in use; 20 Mbit/s counted for 1 pod placed since the measurement)".
func describe(l Link) string {
	bw := mbps(l.BandwidthMbps)
	if l.BandwidthAtLeast {
		bw = "at least " + bw
	}
	use := "use not measured"
	if l.UseMeasured {
		use = mbps(l.UseMbps) + " in use"
	}
	pods := "pods"
	if l.CountedPods == 1 {
		pods = "pod"
	}
	details := fmt.Sprintf("%s; %s counted for %d %s placed since the measurement", use, mbps(l.CountedMbps), l.CountedPods, pods)
	// Said only where it shows: two links at 98.9 and 99.4 are both 99.
	if ranked := mbps(l.RankedBandwidthMbps); ranked != mbps(l.BandwidthMbps) {
		details += "; ranked as " + ranked + ", within the measurement's noise or a fifth of a faster link"
	}
	return fmt.Sprintf("%s free of %s, %s of it below the %d %% fill target (%s)",
		mbps(l.FreeMbps), bw, mbps(l.BelowTargetMbps), l.TargetPercent, details)
}

// mbps is a bandwidth in whole Mbit/s, with its unit.
func mbps(v float64) string { return fmt.Sprintf("%.0f Mbit/s", v) }
