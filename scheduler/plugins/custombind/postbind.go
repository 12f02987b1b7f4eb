// Package custombind implements CustomBindPlugin, which records each binding
// made by the kns-3-scheduler profile: a line in the scheduler's log and a
// placement event on the pod saying why the node was chosen. It reads the
// event from what the profile's plugins left in the cycle state, through
// placement: the cycle CustomScorePlugin's PreScore left, the points
// KNS-3's plugins' NormalizeScore left (weighed with the profile's
// weights, profile.Scoring) and the notes on the node (placement.Notes),
// so it imports no other plugin.
package custombind

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = "CustomBindPlugin"

// Message is the log message written for every bound pod.
const Message = "KNS-3 bound pod to node"

const (
	// EventReason is the reason of the placement event recorded on every
	// pod the profile binds (kubectl describe pod, kubectl events).
	EventReason = status.PlacementEventReason
	// EventAction is the placement event's action.
	EventAction = "Scheduling"
)

// CustomBind is the CustomBindPlugin. Binding itself is left to DefaultBinder.
type CustomBind struct {
	// recorder is the profile's event recorder (the framework's, reporting
	// as the profile's scheduler name); nil without a handle.
	recorder events.EventRecorderLogger
	handle   fwk.Handle
	// scores says whether the profile runs CustomScorePlugin's PreScore,
	// read once from the framework at the first binding.
	scoresOnce sync.Once
	scores     bool
	// scoring is the KNS-3 plugins the profile scores with, with their
	// weights, read once from the framework at the first binding; none
	// when the handle cannot tell (a test's).
	scoringOnce sync.Once
	scoring     []status.ScorePlugin
}

var _ fwk.PostBindPlugin = &CustomBind{}

// New initializes the plugin. It takes no arguments.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	pl := &CustomBind{handle: h}
	if h != nil {
		pl.recorder = h.EventRecorder()
	}
	return pl, nil
}

// Name returns the name of the plugin.
func (pl *CustomBind) Name() string { return Name }

// profileScores reports whether the profile runs CustomScorePlugin's
// PreScore; true when the handle cannot tell (a test's).
func (pl *CustomBind) profileScores() bool {
	pl.scoresOnce.Do(func() {
		runs, known := profile.Runs(pl.handle, profile.PreScore, placement.ScorePlugin)
		pl.scores = runs || !known
	})
	return pl.scores
}

// decision is what the points KNS-3's plugins left in the cycle state say
// of node (placement.Decide), nil when they left none to tell it from.
func (pl *CustomBind) decision(state fwk.CycleState, node string) *placement.Decision {
	pl.scoringOnce.Do(func() { pl.scoring, _ = profile.Scoring(pl.handle) })
	var points []placement.PluginPoints
	for _, p := range pl.scoring {
		if scores, ok := placement.ReadPoints(state, p.Name); ok {
			points = append(points, placement.PluginPoints{Plugin: p.Name, Weight: int64(p.Weight), Scores: scores})
		}
	}
	if d, ok := placement.Decide(points, node); ok {
		return &d
	}
	return nil
}

// PostBind logs the binding at verbosity 1, structured with pod and node,
// and records the placement event: the node's simulator score and rank
// among the feasible nodes and the best alternative, from the scheduling
// cycle's state, or why the cycle fell back; which of KNS-3's plugins
// decided, from the points they left (placement.Decide); and what the
// profile's plugins noted of the node (placement.Notes). One event per
// bound pod.
func (pl *CustomBind) PostBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	logger := klog.FromContext(ctx)
	p := placement.FromCycleState(state, pod, nodeName)
	p.Notes = placement.Notes(state, nodeName)
	p.Decision = pl.decision(state, nodeName)
	if p.Fallback == placement.FallbackSingleNode && !pl.profileScores() {
		// No cycle of this profile holds network scores: saying the node
		// was the only feasible one would be a guess.
		p.Fallback = placement.FallbackNoScorePlugin
	}
	logger.V(1).Info(Message, "pod", klog.KObj(pod), "node", nodeName, "placement", p.Message())
	if pl.recorder != nil {
		pl.recorder.WithLogger(logger).Eventf(pod, nil, v1.EventTypeNormal, EventReason, EventAction, "%s", p.Message())
	}
}
