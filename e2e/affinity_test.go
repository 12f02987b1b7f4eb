//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/test/pods"
)

// The deployment runs with InterPodAffinityHostnameFastPath on.
func TestHostnameAffinity(t *testing.T) {
	f := features.New("InterPodAffinity, hostname topology").
		Assess("a self-affine group starts on one node and its peers join it",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := newCluster(t, cfg, "kns3-e2e-self-affinity")
				// Rank the rigorous node first so the group's node is not
				// merely the one the ranking picks for every pod anyway.
				c.setScenario("affinity-rigorous-first", scores(c.disabled, 0.9, c.rigorous, 0.8, c.plain, 0.1), false)
				bound := map[string]string{}
				c.createPod("web-0", pods.Labels("app", "web"), pods.Affinity(pods.OnHost("web")))
				first := c.scheduled("web-0")
				bound["web-0"] = first
				// Peers now score the plain node higher: affinity must win.
				c.setScenario("affinity-plain-first", scores(c.disabled, 0.9, c.rigorous, 0.1, c.plain, 0.8), false)
				for i := 1; i < 3; i++ {
					name := fmt.Sprintf("web-%d", i)
					c.expectPlaced(bound, name, first, "its group's node",
						pods.Labels("app", "web"), pods.Affinity(pods.OnHost("web")))
				}
				c.boundLogged(bound)
				return ctx
			}).
		Assess("anti-affine pods spread one per node; the extra one stays Pending",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := newCluster(t, cfg, "kns3-e2e-anti-affinity")
				c.setScenario("anti-affinity", scores(c.disabled, 0.9, c.rigorous, 0.3, c.plain, 0.8), false)
				// Two nodes pass the filter (the third is scheduler=disabled).
				bound := map[string]string{}
				used := map[string]string{}
				for i := 0; i < 2; i++ {
					name := fmt.Sprintf("db-%d", i)
					c.createPod(name, pods.Labels("app", "db"), pods.AntiAffinity(pods.OnHost("db")))
					node := c.scheduled(name)
					if other, dup := used[node]; dup {
						t.Errorf("%s and %s share node %s", other, name, node)
					}
					if node == c.disabled {
						t.Errorf("%s landed on the disabled node", name)
					}
					used[node], bound[name] = name, node
				}
				c.createPod("db-2", pods.Labels("app", "db"), pods.AntiAffinity(pods.OnHost("db")))
				msg := c.unschedulable("db-2")
				if !strings.Contains(msg, "didn't match pod anti-affinity rules") {
					t.Errorf("db-2's FailedScheduling message %q does not name anti-affinity", msg)
				}
				t.Logf("db-2: %s", msg)
				c.boundLogged(bound)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}
