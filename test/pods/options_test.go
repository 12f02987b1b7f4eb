package pods

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

const required = st.PodAffinityWithRequiredReq

// appTerm is the term the suites mean: pods labeled app=app, in the
// topology domain of key.
func appTerm(app, key string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		TopologyKey:   key,
	}
}

// sameTerms reports whether got selects the same pods in the same topology
// domains as want, term by term.
func sameTerms(t *testing.T, what string, got, want []v1.PodAffinityTerm) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d terms, want %d", what, len(got), len(want))
	}
	samples := []labels.Set{{}, {"app": "web"}, {"app": "db"}, {"app": "web", "tier": "x"}, {"tier": "web"}}
	for i := range want {
		g, w := got[i], want[i]
		if g.TopologyKey != w.TopologyKey || len(g.Namespaces) != 0 || g.NamespaceSelector != nil {
			t.Errorf("%s term %d: topology %q namespaces %v selector %v, want topology %q in the pod's namespace",
				what, i, g.TopologyKey, g.Namespaces, g.NamespaceSelector, w.TopologyKey)
		}
		gs, err := metav1.LabelSelectorAsSelector(g.LabelSelector)
		if err != nil {
			t.Fatal(err)
		}
		ws, _ := metav1.LabelSelectorAsSelector(w.LabelSelector)
		for _, s := range samples {
			if gs.Matches(s) != ws.Matches(s) {
				t.Errorf("%s term %d: selector %s matches %v: %t, want %t (%s)", what, i, gs, s, gs.Matches(s), ws.Matches(s), ws)
			}
		}
	}
}

func TestRigorousAndForProfile(t *testing.T) {
	p := ForProfile(Rigorous(st.MakePod().Name("r")), "ns", "img").Obj()
	if got := p.Annotations[placement.AnnotationQoS]; got != placement.ValueRigorous {
		t.Errorf("QoS annotation = %q, want %q", got, placement.ValueRigorous)
	}
	if p.Namespace != "ns" || p.Spec.SchedulerName != plugins.ProfileName {
		t.Errorf("namespace %q scheduler %q, want ns and %s", p.Namespace, p.Spec.SchedulerName, plugins.ProfileName)
	}
	if len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Name != "app" || p.Spec.Containers[0].Image != "img" {
		t.Errorf("containers = %+v, want one named app running img", p.Spec.Containers)
	}
}
