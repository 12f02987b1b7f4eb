package integration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

const pending = "<pending>"

// affinityStep is one pod of the affinity workload, created after the
// previous one settled, with the node it must end on (or pending).
type affinityStep struct {
	pod  *st.PodWrapper
	want string
	// wantMessage must appear in the FailedScheduling event of a pending pod.
	wantMessage string
}

// The simulator ranks n1 > n2 > n3; n1 and n2 share zone-a, n3 is in zone-b.
const affinityScenario = "nodes: {n1: {score: 0.9}, n2: {score: 0.5}, n3: {score: 0.1}}"

// appPod is a pod labeled app=app.
func appPod(name, app string) *st.PodWrapper { return st.MakePod().Name(name).Label("app", app) }

// Required terms to pods labeled app=X in the topology domain of a key:
// every affinity term must hold (a conjunction), any anti-affinity term
// excludes a node (a disjunction).
const (
	required     = st.PodAffinityWithRequiredReq
	requiredAnti = st.PodAntiAffinityWithRequiredReq
)

func affinityWorkload() []affinityStep {
	web := func(name string) affinityStep {
		return affinityStep{want: "n1",
			pod: appPod(name, "web").PodAffinityIn("app", labelHost, []string{"web"}, required)}
	}
	db := func(name, want string) affinityStep {
		s := affinityStep{want: want,
			pod: appPod(name, "db").PodAntiAffinityIn("app", labelHost, []string{"db"}, requiredAnti)}
		if want == pending {
			s.wantMessage = interpodaffinity.ErrReasonAntiAffinityRulesNotMatch
		}
		return s
	}
	return []affinityStep{
		// Self-affinity: the first pod of the group schedules (on the best node)
		// although no pod matches yet; its peers join its node.
		web("web-0"), web("web-1"), web("web-2"),
		// Anti-affinity: one per node, the extra one stays pending.
		db("db-0", "n1"), db("db-1", "n2"), db("db-2", "n3"), db("db-3", pending),
		// One hostname and one zone term: a single pod must satisfy both, so
		// the web node qualifies...
		{want: "n1", pod: appPod("mixed-web", "cache").
			PodAffinityIn("app", labelHost, []string{"web"}, required).
			PodAffinityIn("app", labelZone, []string{"web"}, required)},
		// ...but no node hosts a pod that is both app=web and app=db: affinity
		// terms are a conjunction over one existing pod, not over the node.
		{want: pending, wantMessage: interpodaffinity.ErrReasonAffinityRulesNotMatch, pod: appPod("mixed-web-db", "cache").
			PodAffinityIn("app", labelHost, []string{"web"}, required).
			PodAffinityIn("app", labelZone, []string{"db"}, required)},
		// Hostname affinity to pods that do not exist, not matching itself: pending.
		{want: pending, wantMessage: interpodaffinity.ErrReasonAffinityRulesNotMatch, pod: appPod("lonely", "lonely").
			PodAffinityIn("app", labelHost, []string{"nobody"}, required)},
	}
}

// Case 5: hostname-scoped required affinity, anti-affinity and self-affinity
// give the expected bindings with InterPodAffinityHostnameFastPath off and
// on, and the same bindings in both.
func TestHostnameAffinityWithAndWithoutFastPath(t *testing.T) {
	outcomes := map[bool]map[string]string{}
	for _, fastPath := range []bool{false, true} {
		t.Run(featureName(fastPath), func(t *testing.T) {
			c := newCluster(t, affinityScenario, schedulerOptions{fastPath: fastPath},
				nodeSpec{"n1", map[string]string{labelZone: "zone-a"}},
				nodeSpec{"n2", map[string]string{labelZone: "zone-a"}},
				nodeSpec{"n3", map[string]string{labelZone: "zone-b"}},
			)
			got := map[string]string{}
			for _, step := range affinityWorkload() {
				name := step.pod.Obj().Name
				c.createPod(t, step.pod)
				if step.want == pending {
					msg := c.unschedulable(t, name)
					got[name] = pending
					if !strings.Contains(msg, step.wantMessage) {
						t.Errorf("%s: FailedScheduling %q does not say %q", name, msg, step.wantMessage)
					}
					continue
				}
				got[name] = c.scheduled(t, name)
			}
			want := map[string]string{}
			for _, step := range affinityWorkload() {
				want[step.pod.Obj().Name] = step.want
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("placements (-want,+got):\n%s", diff)
			}
			outcomes[fastPath] = got
		})
	}
	if len(outcomes) == 2 {
		if diff := cmp.Diff(outcomes[false], outcomes[true]); diff != "" {
			t.Errorf("the fast path changed placements (-off,+on):\n%s", diff)
		}
	}
}
