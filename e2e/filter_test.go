//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/test/pods"
)

// scores is a scenario's nodes section giving each node a fixed score.
func scores(kv ...any) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "  %s:\n    score: %v\n", kv[i], kv[i+1])
	}
	return b.String()
}

func TestFilterExclusions(t *testing.T) {
	f := inNamespace(features.New("CustomFilterPlugin"), "kns3-e2e-filter").
		Assess("nothing lands on the scheduler=disabled node, though the simulator ranks it first",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.setScenario("filter-disabled-first", scores(c.disabled, 1.0, c.rigorous, 0.6, c.plain, 0.5), false)
				bound := map[string]string{}
				for i := 0; i < 6; i++ {
					c.createPod(st.MakePod().Name(fmt.Sprintf("pod-%d", i)))
				}
				for i := 0; i < 6; i++ {
					name := fmt.Sprintf("pod-%d", i)
					node := c.scheduled(name)
					if node == c.disabled {
						t.Errorf("%s landed on the %s=%s node %s", name, placement.LabelScheduler, placement.ValueDisabled, node)
					}
					bound[name] = node
				}
				c.boundLogged(bound)
				return ctx
			}).
		Assess("rigorous pods land only on the capability=rigorous node, and wait without it",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				// The plain node is ranked first: only the filter keeps
				// rigorous pods off it.
				c.setScenario("filter-plain-first", scores(c.disabled, 0.9, c.rigorous, 0.2, c.plain, 0.8), false)
				bound := map[string]string{}
				for i := 0; i < 3; i++ {
					name := fmt.Sprintf("rigorous-%d", i)
					c.expectPlaced(bound, pods.Rigorous(st.MakePod().Name(name)), c.rigorous, "the rigorous node")
				}
				c.boundLogged(bound)

				c.setNodeLabel(c.rigorous, placement.LabelCapability, "")
				t.Cleanup(func() { c.setNodeLabel(c.rigorous, placement.LabelCapability, placement.ValueRigorous) })
				c.awaitNodeLabel(c.rigorous, placement.LabelCapability, "")
				c.createPod(pods.Rigorous(st.MakePod().Name("rigorous-waits")))
				msg := c.unschedulable("rigorous-waits")
				if !strings.Contains(msg, placement.ErrReasonNotRigorous) {
					t.Errorf("FailedScheduling message %q does not say %q", msg, placement.ErrReasonNotRigorous)
				}
				t.Logf("rigorous-waits: %s", msg)
				// Labeling the node again lets the waiting pod in.
				c.setNodeLabel(c.rigorous, placement.LabelCapability, placement.ValueRigorous)
				if node := c.scheduled("rigorous-waits"); node != c.rigorous {
					t.Errorf("rigorous-waits landed on %s after relabeling, want %s", node, c.rigorous)
				}
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}
