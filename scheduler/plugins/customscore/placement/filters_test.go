package placement

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/customfilter"
)

// TestJudge: a node is a candidate only when KNS-3's filter, cordons and
// taints all let the pod through; the verdict says which refused.
func TestJudge(t *testing.T) {
	rigorous := st.MakePod().Name("r").Annotation(customfilter.AnnotationQoS, customfilter.ValueRigorous).Obj()
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
		{"disabled", plain, st.MakeNode().Name("n").Label(customfilter.LabelScheduler, customfilter.ValueDisabled).Obj(), true, false},
		{"rigorous pod on a plain node", rigorous, st.MakeNode().Name("n").Obj(), true, false},
		{"rigorous pod on a rigorous node", rigorous, st.MakeNode().Name("n").Label(customfilter.LabelCapability, customfilter.ValueRigorous).Obj(), false, false},
		{"cordoned", plain, st.MakeNode().Name("n").Unschedulable(true).Obj(), false, true},
		{"tainted", plain, st.MakeNode().Name("n").Taints(taint).Obj(), false, true},
		{"tainted, tolerated", tolerant, st.MakeNode().Name("n").Taints(taint).Obj(), false, false},
		{"disabled and tainted", plain, st.MakeNode().Name("n").Label(customfilter.LabelScheduler, customfilter.ValueDisabled).Taints(taint).Obj(), true, true},
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
