//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/internal/kindenv"
)

// burstPods is how many pods of each scheduler one mixed burst creates,
// each asking burstCPU: together far more than the workers' CPU.
const (
	burstPods = 20
	burstCPU  = "300m"
	// preferencePods is how many pods check each soft preference.
	preferencePods = 3
	// slowBurst KNS-3 pods wait ahead of a default pod while the
	// simulator answers in 4.9 s; the default pod must still bind within
	// slowDefaultBound of its creation.
	slowBurst        = 20
	slowDefaultBound = 2 * time.Second
)

// TestOneScheduler runs the mixed burst with the second-scheduler install,
// replaces the control plane's kube-scheduler with kns-3-scheduler
// (deploy/control-plane) and checks that pods without a schedulerName get
// upstream's scoring, KNS-3 pods follow the simulator, and the same burst
// loses no pod to the kubelet. Then it installs deploy/live/control-plane
// over it and reads a live answer. The Teardown puts kubeadm's
// kube-scheduler and the Deployment back, as the README's way back says,
// and removes the agents.
func TestOneScheduler(t *testing.T) {
	var twoSchedulers int
	f := inNamespace(features.New("one scheduler for the whole cluster"), "kns3-e2e-onescheduler").
		WithSetup("mixed burst with two schedulers, then replace kube-scheduler",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				twoSchedulers = c.mixedBurst("two")
				for _, step := range kindenv.ReplaceSteps() {
					if err := kindCluster.Run(ctx, step); err != nil {
						t.Fatal(err)
					}
				}
				return ctx
			}).
		WithTeardown("restore kubeadm's kube-scheduler and the Deployment, and remove the agents",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				for _, step := range kindenv.RestoreSteps() {
					if err := kindCluster.Run(ctx, step); err != nil {
						t.Fatal(err)
					}
				}
				removeLive(ctx, t)
				return ctx
			}).
		Assess("pods without a schedulerName get upstream's default profile",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				// Preferred pod anti-affinity: away from the node running app=db.
				c.createDefaultPod(st.MakePod().Name("db").Label("app", "db").NodeSelector(map[string]string{v1.LabelHostname: c.plain}))
				c.scheduled("db")
				// Each check picks between two nodes otherwise alike, so it runs
				// for several pods: a scorer that ignored the rule would pass
				// them all only by a 1-in-2^n chance.
				for i := range preferencePods {
					name := fmt.Sprintf("shy-%d", i)
					c.createDefaultPod(st.MakePod().Name(name).PodAntiAffinityIn("app", v1.LabelHostname, []string{"db"}, st.PodAntiAffinityWithPreferredReq).
						NodeAffinityIn(v1.LabelHostname, []string{c.plain, c.rigorous}, st.NodeSelectorTypeMatchExpressions))
					if node := c.scheduled(name); node != c.rigorous {
						t.Errorf("default pod %s, preferring to avoid app=db, went to %s, want %s (db is on %s)", name, node, c.rigorous, c.plain)
					}
				}
				// A PreferNoSchedule taint is avoided.
				c.taint(c.rigorous, v1.Taint{Key: "kns3-e2e/avoid", Effect: v1.TaintEffectPreferNoSchedule})
				for i := range preferencePods {
					name := fmt.Sprintf("untainted-%d", i)
					c.createDefaultPod(st.MakePod().Name(name).
						NodeAffinityIn(v1.LabelHostname, []string{c.plain, c.rigorous}, st.NodeSelectorTypeMatchExpressions))
					if node := c.scheduled(name); node != c.plain {
						t.Errorf("default pod %s went to %s, want %s: %s has a PreferNoSchedule taint", name, node, c.plain, c.rigorous)
					}
				}
				c.taint(c.rigorous, v1.Taint{})
				// Topology spread (ScheduleAnyway): zone-a already has app=spread.
				c.createDefaultPod(st.MakePod().Name("spread-0").Label("app", "spread").NodeSelector(map[string]string{v1.LabelHostname: c.rigorous}))
				c.scheduled("spread-0")
				c.createDefaultPod(st.MakePod().Name("spread-1").Label("app", "spread").
					SpreadConstraint(1, v1.LabelTopologyZone, v1.ScheduleAnyway, st.MakeLabelSelector().In("app", []string{"spread"}).Obj(), nil, nil, nil, nil).
					NodeAffinityIn(v1.LabelHostname, []string{c.plain, c.rigorous}, st.NodeSelectorTypeMatchExpressions))
				if node := c.scheduled("spread-1"); node != c.plain {
					t.Errorf("a default pod spreading over zones went to %s, want %s, the other zone", node, c.plain)
				}
				return ctx
			}).
		Assess("KNS-3 pods follow the simulator, and the same burst loses no pod",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.setScenario("one-scheduler", scores(c.disabled, 0.95, c.rigorous, 0.3, c.plain, 0.7), false)
				// This profile refreshes in the background: until it has fetched
				// the new scenario, it scores by the one before.
				c.awaitHeld("one-scheduler")
				bound := map[string]string{}
				c.expectPlaced(bound, st.MakePod().Name("kns3-0"), c.plain, "ranked first among the nodes the filter allows")
				c.boundLogged(bound)
				if one := c.mixedBurst("one"); one != 0 {
					t.Errorf("with one scheduler the kubelet rejected %d pod(s) for OutOfcpu, want 0", one)
				}
				t.Logf("mixed burst of %d KNS-3 and %d default pods (%s each): OutOfcpu rejections: two schedulers %d, one scheduler 0",
					burstPods, burstPods, burstCPU, twoSchedulers)
				return ctx
			}).
		Assess("a simulator answering in 4.9 s holds up no pod of the cluster",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				// Just under the plugin's 5 s timeout: every request succeeds.
				c.setScenarioDoc("source: slow\nnodes:\n"+scores(c.plain, 0.9, c.rigorous, 0.1)+"fault: {delay_ms: 4900}\n", isHanging)
				t.Cleanup(func() { c.setScenario("fast-again", scores(c.plain, 0.9), false) })
				binds := c.watchBinds()
				kns3Pods := binds.create(c, "slow-kns3", slowBurst)
				other := binds.createFor(c, "slow-default", v1.DefaultSchedulerName)
				c.expectBoundWithin(binds, []string{other}, slowDefaultBound, "a default pod behind "+fmt.Sprint(slowBurst)+" KNS-3 pods, the simulator answering in 4.9 s")
				c.expectBoundWithin(binds, kns3Pods, stallBound, "KNS-3 pods, the simulator answering in 4.9 s")
				doc := c.published()
				if doc.RefreshMode != "Background" {
					t.Errorf("the control plane's KNS-3 profile refreshes %s, want Background", doc.RefreshMode)
				}
				// The second-scheduler install is scaled to 0 but still there:
				// kubectl kns3 shows the control plane's and names the other.
				out, err := kubectlKNS3(cfg, "status")
				const otherInstall = "Warning: also found the second-scheduler install in namespace kns-3-system"
				if err != nil && !strings.Contains(err.Error(), otherInstall) {
					t.Errorf("kubectl kns3 status: %v\n%s", err, out)
				}
				if err == nil {
					t.Errorf("kubectl kns3 status does not name the second-scheduler install it did not show")
				}
				if !strings.Contains(out, "KNS-3 install: control-plane, namespace kube-system.") || !strings.Contains(out, "Background") {
					t.Errorf("kubectl kns3 status does not show the control-plane install in Background mode:\n%s", out)
				}
				t.Logf("kubectl kns3 status:\n%s", out)
				return ctx
			}).
		Assess("with deploy/live/control-plane, the control plane's simulator measures every node through the agents",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				for _, step := range kindenv.ReplaceLiveSteps() {
					if err := kindCluster.Run(ctx, step); err != nil {
						t.Fatal(err)
					}
				}
				// From the host network, by cluster DNS, with no API credentials.
				r := c.awaitLive("every worker measured in full from the control plane", c.measuredInFull, 2*deployLiveWindow+30*time.Second)
				t.Logf("the control plane's simulator, source %q: %s", r.Source, describeResults(r.Results))
				c.awaitHeld(r.Source)
				// The live profile ranks by free bandwidth too: its placement
				// event says what was free on the chosen node's link.
				c.createPod(st.MakePod().Name("live-0"))
				c.scheduled("live-0")
				if ev := c.placementEvent("live-0"); !strings.Contains(ev, "link: ") {
					t.Errorf("the live profile's placement event names no free bandwidth (NetworkCapacity did not rank): %s", ev)
				} else {
					t.Logf("live-0: %s", ev)
				}
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// createDefaultPod creates p for the default profile (no schedulerName).
func (c *cluster) createDefaultPod(p *st.PodWrapper) {
	c.t.Helper()
	c.createPodFor(p, v1.DefaultSchedulerName, "")
}

// taint replaces the node's taints by t (none when t.Key is empty), with a
// merge patch: the kubelet updates the node meanwhile.
func (c *cluster) taint(node string, t v1.Taint) {
	c.t.Helper()
	var taints any // JSON null removes them
	if t.Key != "" {
		taints = []v1.Taint{t}
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"taints": taints}})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		c.t.Fatalf("tainting %s: %v", node, err)
	}
}

// mixedBurst creates burstPods KNS-3 and burstPods default pods at once,
// each asking burstCPU, waits until every pod is running, rejected or
// pending unbound, and returns how many the kubelet rejected for OutOfcpu.
// The pods are deleted before it returns.
func (c *cluster) mixedBurst(label string) int {
	c.t.Helper()
	ctx := context.Background()
	// Created from several goroutines, so the two schedulers see their
	// pods at the same time, as in a real burst.
	var g errgroup.Group
	g.SetLimit(8)
	for i := range burstPods {
		for _, p := range []struct{ name, scheduler string }{
			{fmt.Sprintf("%s-kns3-%d", label, i), ""},
			{fmt.Sprintf("%s-default-%d", label, i), v1.DefaultSchedulerName},
		} {
			g.Go(func() error {
				return c.tryCreatePodFor(st.MakePod().Name(p.name).Label("burst", label), p.scheduler, burstCPU)
			})
		}
	}
	if err := g.Wait(); err != nil {
		c.t.Fatal(err)
	}
	var rejected, running, pending int
	stable := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "burst=" + label})
		if err != nil {
			return false, nil
		}
		r, run, pend, settling := 0, 0, 0, 0
		for _, p := range list.Items {
			switch {
			case p.Status.Phase == v1.PodFailed && p.Status.Reason == "OutOfcpu":
				r++
			case p.Status.Phase == v1.PodRunning:
				run++
			case p.Spec.NodeName == "":
				pend++
			default:
				settling++ // bound, not yet running or rejected
			}
		}
		if settling == 0 && r == rejected && run == running && pend == pending {
			stable++
		} else {
			stable = 0
		}
		rejected, running, pending = r, run, pend
		return stable >= 5, nil
	})
	if err != nil {
		c.t.Fatalf("burst %s did not settle: %d running, %d rejected, %d pending: %v", label, running, rejected, pending, err)
	}
	c.t.Logf("burst with %s scheduler(s): %d running, %d rejected (OutOfcpu), %d pending", label, running, rejected, pending)
	zero := int64(0)
	if err := c.client.CoreV1().Pods(c.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
		metav1.ListOptions{LabelSelector: "burst=" + label}); err != nil {
		c.t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "burst=" + label})
		return err == nil && len(list.Items) == 0, nil
	}); err != nil {
		c.t.Fatalf("burst %s pods not deleted: %v", label, err)
	}
	return rejected
}
