//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/internal/kindenv"
)

// fastPathGate is what e2e/testdata/fastpath adds to the scheduler's args.
const fastPathGate = "--feature-gates=InterPodAffinityHostnameFastPath=true"

// applyAndWait applies a kustomization and waits for its scheduler pod.
func applyAndWait(ctx context.Context, t *testing.T, dir string) {
	t.Helper()
	if err := kindenv.Apply(ctx, kindCluster.Config, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := kindenv.WaitForScheduler(ctx, kindCluster.Client, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// web is a pod of a self-affine group: labeled app=web, it requires a
// pod labeled app=web on its node.
func web(name string) *st.PodWrapper {
	return st.MakePod().Name(name).Label("app", "web").
		PodAffinityIn("app", v1.LabelHostname, []string{"web"}, st.PodAffinityWithRequiredReq)
}

// db is a pod of an anti-affine group: labeled app=db, it excludes nodes
// with a pod labeled app=db.
func db(name string) *st.PodWrapper {
	return st.MakePod().Name(name).Label("app", "db").
		PodAntiAffinityIn("app", v1.LabelHostname, []string{"db"}, st.PodAntiAffinityWithRequiredReq)
}

// TestHostnameAffinity runs with the InterPodAffinityHostnameFastPath gate
// on (e2e/testdata/fastpath): the shipped installs leave it off.
func TestHostnameAffinity(t *testing.T) {
	f := inNamespace(features.New("InterPodAffinity, hostname topology"), "kns3-e2e-affinity").
		WithSetup("turn the fast path on", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			applyAndWait(ctx, t, filepath.Join(kindCluster.Inputs.Root, "e2e", "testdata", "fastpath"))
			pod, err := kindenv.SchedulerPod(ctx, kindCluster.Client)
			if err != nil {
				t.Fatal(err)
			}
			if args := pod.Spec.Containers[0].Args; !slices.Contains(args, fastPathGate) {
				t.Fatalf("the scheduler runs with %v, without %s", args, fastPathGate)
			}
			return ctx
		}).
		WithTeardown("back to deploy/", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			applyAndWait(ctx, t, filepath.Join(kindCluster.Inputs.Root, "deploy"))
			return ctx
		}).
		Assess("a self-affine group starts on one node and its peers join it",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				// Rank the rigorous node first so the group's node is not
				// merely the one the ranking picks for every pod anyway.
				c.setScenario("affinity-rigorous-first", scores(c.disabled, 0.9, c.rigorous, 0.8, c.plain, 0.1), false)
				bound := map[string]string{}
				c.createPod(web("web-0"))
				first := c.scheduled("web-0")
				bound["web-0"] = first
				// Peers now score the plain node higher: affinity must win.
				c.setScenario("affinity-plain-first", scores(c.disabled, 0.9, c.rigorous, 0.1, c.plain, 0.8), false)
				for i := 1; i < 3; i++ {
					name := fmt.Sprintf("web-%d", i)
					c.expectPlaced(bound, web(name), first, "its group's node")
				}
				c.boundLogged(bound)
				return ctx
			}).
		Assess("anti-affine pods spread one per node; the extra one stays Pending",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.setScenario("anti-affinity", scores(c.disabled, 0.9, c.rigorous, 0.3, c.plain, 0.8), false)
				// Two nodes pass the filter (the third is scheduler=disabled).
				bound := map[string]string{}
				used := map[string]string{}
				for i := 0; i < 2; i++ {
					name := fmt.Sprintf("db-%d", i)
					c.createPod(db(name))
					node := c.scheduled(name)
					if other, dup := used[node]; dup {
						t.Errorf("%s and %s share node %s", other, name, node)
					}
					if node == c.disabled {
						t.Errorf("%s landed on the disabled node", name)
					}
					used[node], bound[name] = name, node
				}
				c.createPod(db("db-2"))
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
