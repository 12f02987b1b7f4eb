// Package custombind implements CustomBindPlugin, which records each binding
// made by the kns-3-scheduler profile: a line in the scheduler's log and a
// placement event on the pod saying why the node was chosen. It reads the
// event from placement alone: the cycle CustomScorePlugin's PreScore left
// in the cycle state and the notes the profile's plugins left on the node
// (placement.Notes), so it imports no other plugin.
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

// PostBind logs the binding at verbosity 1, structured with pod and node,
// and records the placement event: the node's simulator score and rank
// among the feasible nodes and the best alternative, from the scheduling
// cycle's state, or why the cycle fell back, and what the profile's
// plugins noted of the node (placement.Notes). One event per bound pod.
func (pl *CustomBind) PostBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	logger := klog.FromContext(ctx)
	p := placement.FromCycleState(state, pod, nodeName)
	p.Notes = placement.Notes(state, nodeName)
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
