package customfilter

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/kubernetes/pkg/scheduler/util"
	"k8s.io/kubernetes/test/utils/ktesting"

	"kns3.dev/kns3/scheduler/plugins/placement"
)

var (
	plainPod    = st.MakePod().Name("plain").Obj()
	rigorousPod = withAnnotation(st.MakePod().Name("rigorous").Obj(), placement.AnnotationQoS, placement.ValueRigorous)
	relaxedPod  = withAnnotation(st.MakePod().Name("relaxed").Obj(), placement.AnnotationQoS, "relaxed")
)

func withAnnotation(p *v1.Pod, k, v string) *v1.Pod {
	p.Annotations = map[string]string{k: v}
	return p
}

func node(labels map[string]string) *v1.Node {
	n := st.MakeNode().Name("n").Obj()
	n.Labels = labels
	return n
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *fwk.Status
	}{
		{"plain pod, plain node", plainPod, node(nil), nil},
		{"plain pod, disabled node", plainPod, node(map[string]string{"scheduler": "disabled"}), fwk.NewStatus(fwk.Unschedulable, placement.ErrReasonDisabled)},
		{"plain pod, scheduler=enabled", plainPod, node(map[string]string{"scheduler": "enabled"}), nil},
		{"plain pod, rigorous node", plainPod, node(map[string]string{"capability": "rigorous"}), nil},
		{"rigorous pod, rigorous node", rigorousPod, node(map[string]string{"capability": "rigorous"}), nil},
		{"rigorous pod, plain node", rigorousPod, node(nil), fwk.NewStatus(fwk.Unschedulable, placement.ErrReasonNotRigorous)},
		{"rigorous pod, other capability", rigorousPod, node(map[string]string{"capability": "gpu"}), fwk.NewStatus(fwk.Unschedulable, placement.ErrReasonNotRigorous)},
		{"rigorous pod, label value case differs", rigorousPod, node(map[string]string{"capability": "Rigorous"}), fwk.NewStatus(fwk.Unschedulable, placement.ErrReasonNotRigorous)},
		{"rigorous pod, disabled rigorous node", rigorousPod, node(map[string]string{"capability": "rigorous", "scheduler": "disabled"}), fwk.NewStatus(fwk.Unschedulable, placement.ErrReasonDisabled)},
		{"other qos value, plain node", relaxedPod, node(nil), nil},
		{"rigorous as label not annotation", st.MakePod().Name("l").Label(placement.AnnotationQoS, placement.ValueRigorous).Obj(), node(nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ni := framework.NewNodeInfo()
			ni.SetNode(tt.node)
			pl, err := New(ctx, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := pl.(fwk.FilterPlugin).Filter(ctx, nil, tt.pod, ni)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	tests := []struct {
		name     string
		pod      *v1.Pod
		old, new interface{}
		want     fwk.QueueingHint
		wantErr  bool
	}{
		{"node added, plain", plainPod, nil, node(nil), fwk.Queue, false},
		{"node added, disabled", plainPod, nil, node(map[string]string{"scheduler": "disabled"}), fwk.QueueSkip, false},
		{"node added without capability, rigorous pod", rigorousPod, nil, node(nil), fwk.QueueSkip, false},
		{"node added with capability, rigorous pod", rigorousPod, nil, node(map[string]string{"capability": "rigorous"}), fwk.Queue, false},
		{"capability label set", rigorousPod, node(nil), node(map[string]string{"capability": "rigorous"}), fwk.Queue, false},
		{"disabled label removed", plainPod, node(map[string]string{"scheduler": "disabled"}), node(nil), fwk.Queue, false},
		{"unrelated label on a fitting node", plainPod, node(nil), node(map[string]string{"zone": "a"}), fwk.QueueSkip, false},
		{"capability removed", rigorousPod, node(map[string]string{"capability": "rigorous"}), node(nil), fwk.QueueSkip, false},
		{"not a node", plainPod, nil, "a string", fwk.Queue, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			pl := &CustomFilter{}
			got, err := pl.isSchedulableAfterNodeChange(logger, tt.pod, tt.old, tt.new)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	events, err := (&CustomFilter{}).EventsToRegister(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Event.Resource != fwk.Node ||
		events[0].Event.ActionType != fwk.Add|fwk.UpdateNodeLabel || events[0].QueueingHintFn == nil ||
		events[1].Event.Resource != fwk.TargetPod || events[1].Event.ActionType != fwk.Update || events[1].QueueingHintFn == nil {
		t.Errorf("unexpected events: %+v", events)
	}
}

func TestIsSchedulableAfterPodChange(t *testing.T) {
	relabeled := withAnnotation(st.MakePod().Name("p").Obj(), placement.AnnotationQoS, placement.ValueRigorous)
	relabeled.Labels = map[string]string{"app": "x"}
	tests := []struct {
		name     string
		old, new interface{}
		want     fwk.QueueingHint
		wantErr  bool
	}{
		{"rigorous annotation removed", rigorousPod, plainPod, fwk.Queue, false},
		{"rigorous annotation changed", rigorousPod, withAnnotation(st.MakePod().Name("p").Obj(), placement.AnnotationQoS, "relaxed"), fwk.Queue, false},
		{"rigorous pod, other change", rigorousPod, relabeled, fwk.QueueSkip, false},
		{"rigorous annotation added", plainPod, rigorousPod, fwk.QueueSkip, false},
		{"plain pod, other change", plainPod, plainPod, fwk.QueueSkip, false},
		{"not a pod", rigorousPod, "a string", fwk.Queue, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := (&CustomFilter{}).isSchedulableAfterPodChange(logger, rigorousPod, tt.old, tt.new)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSignPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := &CustomFilter{}
	sign := func(p *v1.Pod) []fwk.SignFragment {
		f, st := pl.SignPod(ctx, p)
		if !st.IsSuccess() {
			t.Fatalf("SignPod: %v", st)
		}
		return f
	}
	if cmp.Equal(sign(plainPod), sign(rigorousPod)) {
		t.Error("pods with and without the rigorous annotation must not share a signature")
	}
	other := withAnnotation(st.MakePod().Name("other").Obj(), placement.AnnotationQoS, placement.ValueRigorous)
	if !cmp.Equal(sign(rigorousPod), sign(other)) {
		t.Error("two rigorous pods must share a signature")
	}
}

// TestAsMatchesUpstream holds the local as to upstream's util.As, which
// the queueing hints used before: same values, same errors.
func TestAsMatchesUpstream(t *testing.T) {
	n1, n2 := node(nil), node(map[string]string{"zone": "a"})
	for _, tc := range []struct {
		name     string
		old, new any
	}{
		{"both", n1, n2},
		{"added", nil, n2},
		{"deleted", n1, nil},
		{"deleted, final state unknown", cache.DeletedFinalStateUnknown{Key: "n", Obj: n1}, n2},
		{"neither", nil, nil},
		{"new of another type", n1, "a string"},
		{"old of another type", plainPod, n2},
		{"final state of another type", cache.DeletedFinalStateUnknown{Key: "n", Obj: plainPod}, n2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotOld, gotNew, gotErr := as[*v1.Node](tc.old, tc.new)
			wantOld, wantNew, wantErr := util.As[*v1.Node](tc.old, tc.new)
			if gotOld != wantOld || gotNew != wantNew || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("as = %p, %p, %v; util.As = %p, %p, %v", gotOld, gotNew, gotErr, wantOld, wantNew, wantErr)
			}
		})
	}
}
