package placement

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// TestJudge: a node is a candidate only when KNS-3's filter, cordons and
// taints all let the pod through; the verdict says which refused.
func TestJudge(t *testing.T) {
	rigorous := st.MakePod().Name("r").Annotation(AnnotationQoS, ValueRigorous).Obj()
	plain := st.MakePod().Name("p").Obj()
	tolerant := st.MakePod().Name("t").Toleration("k").Obj()
	taint := []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name        string
		pod         *v1.Pod
		node        *v1.Node
		filter, any bool // want a Filter reason, an Other reason
	}{
		{"plain node", plain, st.MakeNode().Name("n").Obj(), false, false},
		{"disabled", plain, st.MakeNode().Name("n").Label(LabelScheduler, ValueDisabled).Obj(), true, false},
		{"rigorous pod on a plain node", rigorous, st.MakeNode().Name("n").Obj(), true, false},
		{"rigorous pod on a rigorous node", rigorous, st.MakeNode().Name("n").Label(LabelCapability, ValueRigorous).Obj(), false, false},
		{"cordoned", plain, st.MakeNode().Name("n").Unschedulable(true).Obj(), false, true},
		{"tainted", plain, st.MakeNode().Name("n").Taints(taint).Obj(), false, true},
		{"tainted, tolerated", tolerant, st.MakeNode().Name("n").Taints(taint).Obj(), false, false},
		{"disabled and tainted", plain, st.MakeNode().Name("n").Label(LabelScheduler, ValueDisabled).Taints(taint).Obj(), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.pod, tc.node)
			if (v.Filter != "") != tc.filter || (v.Other != "") != tc.any {
				t.Errorf("Judge = %+v, want a filter reason %t, another reason %t", v, tc.filter, tc.any)
			}
			if want := !tc.filter && !tc.any; v.Candidate() != want {
				t.Errorf("Candidate() = %t, want %t", v.Candidate(), want)
			}
		})
	}
}

// TestClass: equal values make one class, whatever their pointers and
// order; any value Judge reads tells classes apart; and pods of one class
// get one verdict on every node.
func TestClass(t *testing.T) {
	secs := func(s int64) *int64 { return &s }
	tol := func(key string, seconds *int64) v1.Toleration {
		return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds}
	}
	withTolerations := func(ts ...v1.Toleration) *v1.Pod {
		p := st.MakePod().Name("p").Obj()
		p.Spec.Tolerations = ts
		return p
	}
	a := withTolerations(tol("not-ready", secs(300)), tol("unreachable", secs(300)))
	same := withTolerations(tol("unreachable", secs(300)), tol("not-ready", secs(300)))
	if Class(a) != Class(same) {
		t.Errorf("equal tolerations, other pointers and order: %q != %q", Class(a), Class(same))
	}
	rigorous := withTolerations(tol("not-ready", secs(300)), tol("unreachable", secs(300)))
	rigorous.Annotations = map[string]string{AnnotationQoS: ValueRigorous}
	others := []*v1.Pod{
		withTolerations(tol("not-ready", secs(600)), tol("unreachable", secs(300))),
		withTolerations(tol("not-ready", nil), tol("unreachable", secs(300))),
		withTolerations(tol("not-ready", secs(300))),
		withTolerations(tol("not-ready", secs(300)), tol("unreachable", secs(300)), tol("k", nil)),
		withTolerations(tol(`not-ready" "Exists`, secs(300)), tol("unreachable", secs(300))),
		rigorous,
	}
	for i, p := range others {
		if Class(p) == Class(a) {
			t.Errorf("pod %d shares the class %q", i, Class(a))
		}
	}
	nodes := []*v1.Node{
		st.MakeNode().Name("plain").Obj(),
		st.MakeNode().Name("k").Taints([]v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}).Obj(),
		st.MakeNode().Name("not-ready").Taints([]v1.Taint{{Key: "not-ready", Effect: v1.TaintEffectNoExecute}}).Obj(),
		st.MakeNode().Name("rigorous").Label(LabelCapability, ValueRigorous).Obj(),
	}
	for _, n := range nodes {
		if Judge(a, n) != Judge(same, n) {
			t.Errorf("node %s: one class, two verdicts: %+v, %+v", n.Name, Judge(a, n), Judge(same, n))
		}
	}
}
