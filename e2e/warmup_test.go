//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/simulator/api"
)

// warmUpPods is how many pods each scheduler places during the warm-up.
const warmUpPods = 10

// warmUpSpreadsAsDefault restarts the scheduler pod while one node's
// agent is cut off (its probes dropped on the node, the agent itself up
// and listed), so that the new simulator cannot measure nine nodes in
// ten in full and stays warming up; then ten KNS-3 pods and ten default
// pods, held to the rigorous and plain workers and each preferring to
// spread with its own scheduler's pods, are created at once. KNS-3 must
// not rank from its partial picture: each of its pods' placement events
// says it fell back for the warm-up, and no worker takes more than the
// default scheduler's share of the default pods plus one. Once the agent
// answers again, the answer ranks within two windows.
func (c *cluster) warmUpSpreadsAsDefault(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-warm-up")
	c.awaitLive("every node measured in full", c.measuredInFull, 4*liveWindow+30*time.Second)
	silence, err := netshape.NewSilence(ctx, c.disabled, c.agentIP(ctx, c.disabled), agentPort, agentPort+1)
	if err != nil {
		c.t.Fatal(err)
	}
	lifted := false
	lift := func() {
		if !lifted {
			lifted = true
			if err := silence.Delete(context.Background()); err != nil {
				c.t.Error(err)
			}
		}
	}
	defer lift()

	old, err := kindenv.SchedulerPod(ctx, c.client)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.client.CoreV1().Pods(old.Namespace).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		c.t.Fatal(err)
	}
	if err := wait.For(func(ctx context.Context) (bool, error) {
		p, err := kindenv.SchedulerPod(ctx, c.client)
		return err == nil && p.UID != old.UID, nil
	}, wait.WithContext(ctx), wait.WithInterval(time.Second), wait.WithTimeout(3*time.Minute)); err != nil {
		c.t.Fatalf("no new scheduler pod ready after deleting %s: %v", old.Name, err)
	}
	r := c.awaitLive("the new simulator warming up", func(r api.SimulationResponse) bool { return r.WarmUp != nil }, 30*time.Second)
	c.t.Logf("warm-up: %d of %d nodes measured in full, %.0f %% needed", r.WarmUp.MeasuredInFull, r.WarmUp.Nodes, 100*r.WarmUp.Quorum)

	both := []string{c.rigorous, c.plain}
	var names []string
	for i := range warmUpPods {
		for _, sched := range []string{"kns3", "default"} {
			name := fmt.Sprintf("warm-%s-%d", sched, i)
			scheduler := ""
			if sched == "default" {
				scheduler = v1.DefaultSchedulerName
			}
			p := st.MakePod().Name(name).Label("warm", sched).NodeAffinityIn(v1.LabelHostname, both, st.NodeSelectorTypeMatchExpressions).
				SpreadConstraint(1, v1.LabelHostname, v1.ScheduleAnyway, &metav1.LabelSelector{MatchLabels: map[string]string{"warm": sched}}, nil, nil, nil, nil)
			c.createPodFor(p, scheduler, "50m")
			names = append(names, name)
		}
	}
	placed := map[string]map[string]int{"kns3": {}, "default": {}}
	for _, name := range names {
		if err := wait.For(conditions.PodScheduled(c.client, c.ns, name), wait.WithContext(ctx),
			wait.WithInterval(500*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate()); err != nil {
			c.t.Fatalf("pod %s not scheduled: %v", name, err)
		}
		pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			c.t.Fatal(err)
		}
		placed[pod.Labels["warm"]][pod.Spec.NodeName]++
		if pod.Labels["warm"] == "kns3" {
			if msg := c.placementEvent(name); !strings.Contains(msg, placement.FallbackWarmingUp) {
				c.t.Errorf("pod %s, placed during the warm-up: placement event %q does not say it fell back for it", name, msg)
			}
		}
	}
	kns3, def := placed["kns3"], placed["default"]
	c.t.Logf("warm-up: KNS-3 placed %v, the default scheduler %v", kns3, def)
	for _, node := range both {
		if kns3[node] > def[node]+1 {
			c.t.Errorf("during the warm-up %s took %d of KNS-3's %d pods and %d of the default scheduler's: want at most one more",
				node, kns3[node], warmUpPods, def[node])
		}
	}

	lift()
	since := time.Now()
	r = c.awaitLive("ranking again once every agent answers", func(r api.SimulationResponse) bool {
		return r.WarmUp == nil && c.measuredInFull(r)
	}, twoWindows+10*time.Second)
	c.t.Logf("warm-up over %.1fs after the agent answered again, in the window to %s", time.Since(since).Seconds(), r.Timestamp.Format(time.TimeOnly))
	c.deleteAll(ctx, "warm")
}
