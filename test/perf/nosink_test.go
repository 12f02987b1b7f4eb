//go:build perf

package perf

import (
	"context"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/custombind"
)

// registry is the binary's plugins, with CustomScorePlugin's and
// NetworkCapacity's PreScore timed (prescore_test.go), plus
// NoSinkBindPlugin: CustomBindPlugin whose events go through a recorder
// and broadcaster like the scheduler's, to a sink that drops them. Against
// CustomBindPlugin it separates what the event costs the scheduler (the
// placement, the message, the recorder) from what its API write costs the
// cluster.
func registry(ctx context.Context) frameworkruntime.Registry {
	r := plugins.Registry()
	timePreScore(r)
	broadcaster := events.NewBroadcaster(discardSink{})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		panic(err)
	}
	r[NoSinkBindPlugin] = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		recorder := broadcaster.NewRecorder(scheme.Scheme, h.ProfileName())
		pl, err := custombind.New(ctx, obj, recorderHandle{Handle: h, recorder: recorder})
		if err != nil {
			return nil, err
		}
		return renamed{PostBindPlugin: pl.(fwk.PostBindPlugin), name: NoSinkBindPlugin}, nil
	}
	return r
}

type recorderHandle struct {
	fwk.Handle
	recorder events.EventRecorderLogger
}

func (h recorderHandle) EventRecorder() events.EventRecorderLogger { return h.recorder }

type renamed struct {
	fwk.PostBindPlugin
	name string
}

func (p renamed) Name() string { return p.name }

// discardSink accepts every event and writes none.
type discardSink struct{}

func (discardSink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return e, nil
}
func (discardSink) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return e, nil
}
func (discardSink) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return e, nil
}
