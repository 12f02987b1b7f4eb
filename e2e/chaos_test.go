//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/wait"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/kindenv"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
)

const (
	// stallBound is what one outage may cost a pod: one scheduling cycle's
	// retry budget with the specification's numbers (3 attempts × 5 s + 2 × 100 ms),
	// plus 3 s for the cluster's own create-to-bind path.
	stallBound = 15200*time.Millisecond + 3*time.Second
	// recoveryBound: once the simulator answers again, new pods follow its
	// ranking within this time (the breaker's prober asks at least every
	// second; the rest is the port-forward and pod creation).
	recoveryBound = 5 * time.Second
)

// TestSimulatorChaos runs the deployed pod's simulator through a hang, a
// recovery, half its requests failing, a crash and restart, and a second
// recovery. Every pod must be bound, no outage may stall a pod longer than
// one cycle's retry budget, and ranking must resume within seconds.
func TestSimulatorChaos(t *testing.T) {
	f := inNamespace(features.New("a sick simulator never stalls scheduling"), "kns3-e2e-chaos").
		Assess("hang, errors, crash: every pod bound, bounded stalls, fast recovery",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				binds := c.watchBinds()
				restarts := c.containerRestarts()
				t.Cleanup(func() {
					c.setScenario("chaos-done", scores(c.plain, 0.9), false)
					c.awaitBreakerClosed()
				})

				// 1. Hang: accepts, never answers.
				c.setScenarioDoc("source: chaos-hang\nnodes:\n"+scores(c.plain, 0.9)+"fault: {hang: true}\n", isHanging)
				c.expectBoundWithin(binds, binds.create(c, "hang", 5), stallBound, "simulator hanging")

				// 2. Healthy again, ranking the rigorous node first.
				c.expectRecovery(binds, "recovered-1", scores(c.disabled, 0.95, c.rigorous, 0.9, c.plain, 0.1), c.rigorous, c.plain)

				// 3. Half the requests fail at random.
				before := c.published()
				c.setScenarioDoc("source: chaos-errors\nnodes:\n"+scores(c.plain, 0.9, c.rigorous, 0.1)+"fault: {error_rate: 0.5}\n",
					servesSource("chaos-errors"))
				c.expectBoundWithin(binds, binds.create(c, "errors", 12), stallBound, "simulator failing half its requests")
				after := c.awaitPublished("the cycles of 12 pods", func(d schedstatus.ProfileStatus) bool {
					return d.ScoredCycles+fallbacks(d) >= before.ScoredCycles+fallbacks(before)+12
				})
				scored := after.ScoredCycles - before.ScoredCycles
				fell := fallbacks(after) - fallbacks(before)
				t.Logf("50%% errors: %d of %d cycles network-aware", scored, scored+fell)

				// 4. The simulator exits; the kubelet restarts its container.
				c.setScenarioText("source: chaos-exit\nnodes:\n" + scores(c.plain, 0.9, c.rigorous, 0.1) + "fault: {exit_code: 3}\n")
				var crashPods []string
				err := wait.For(func(context.Context) (bool, error) {
					crashPods = append(crashPods, binds.create(c, fmt.Sprintf("crash-%d", len(crashPods)), 1)...)
					return c.containerRestarts()[installclient.SimulatorContainer] > restarts[installclient.SimulatorContainer], nil
				}, wait.WithContext(ctx), wait.WithInterval(500*time.Millisecond), wait.WithTimeout(2*time.Minute), wait.WithImmediate())
				if err != nil {
					t.Fatalf("the simulator container was not restarted: %v", err)
				}
				// A few more while it comes back.
				for i := 0; i < 6; i++ {
					crashPods = append(crashPods, binds.create(c, fmt.Sprintf("crash-after-%d", i), 1)...)
					time.Sleep(500 * time.Millisecond)
				}
				c.expectBoundWithin(binds, crashPods, stallBound, "simulator restarting")

				// 5. Healthy again, ranking the plain node first.
				c.expectRecovery(binds, "recovered-2", scores(c.disabled, 0.95, c.rigorous, 0.1, c.plain, 0.9), c.plain, c.rigorous)

				if got := c.containerRestarts()[installclient.SchedulerContainer]; got != restarts[installclient.SchedulerContainer] {
					t.Errorf("the scheduler container restarted %d time(s) during the test, want 0", got-restarts[installclient.SchedulerContainer])
				}
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// bindWatch records when each pod of the test's namespace was first seen bound.
type bindWatch struct {
	mu      sync.Mutex
	created map[string]time.Time
	bound   map[string]time.Time
	node    map[string]string
}

func (c *cluster) watchBinds() *bindWatch {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	// A retry watcher picks the watch up again where it ended: the API
	// server may close a watch at any time, and a bind it carried then
	// would be missed.
	pods := c.client.CoreV1().Pods(c.ns)
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		c.t.Fatalf("listing pods: %v", err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, opts)
		},
	})
	if err != nil {
		c.t.Fatalf("watching pods: %v", err)
	}
	c.t.Cleanup(w.Stop)
	b := &bindWatch{created: map[string]time.Time{}, bound: map[string]time.Time{}, node: map[string]string{}}
	for _, pod := range list.Items {
		if pod.Spec.NodeName != "" {
			b.bound[pod.Name], b.node[pod.Name] = time.Now(), pod.Spec.NodeName
		}
	}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok || ev.Type == watch.Deleted || pod.Spec.NodeName == "" {
				continue
			}
			b.mu.Lock()
			if _, seen := b.bound[pod.Name]; !seen {
				b.bound[pod.Name], b.node[pod.Name] = time.Now(), pod.Spec.NodeName
			}
			b.mu.Unlock()
		}
	}()
	return b
}

// create creates n pods at once, each changed by opts, recording their
// creation times, and returns their names.
func (b *bindWatch) create(c *cluster, prefix string, n int, opts ...func(*st.PodWrapper)) []string {
	c.t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		p := st.MakePod().Name(names[i])
		for _, o := range opts {
			o(p)
		}
		c.createPod(p)
		b.mu.Lock()
		b.created[names[i]] = time.Now()
		b.mu.Unlock()
	}
	return names
}

// createFor creates one pod for scheduler, recording its creation time,
// and returns its name.
func (b *bindWatch) createFor(c *cluster, name, scheduler string) string {
	c.t.Helper()
	c.createPodFor(st.MakePod().Name(name), scheduler, "")
	b.mu.Lock()
	b.created[name] = time.Now()
	b.mu.Unlock()
	return name
}

// expectBoundWithin waits for every pod to be bound and fails if any took
// longer than bound from its creation.
func (c *cluster) expectBoundWithin(b *bindWatch, names []string, bound time.Duration, during string) {
	c.t.Helper()
	var worst time.Duration
	var worstPod string
	err := wait.For(func(context.Context) (bool, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		worst, worstPod = 0, ""
		for _, name := range names {
			at, ok := b.bound[name]
			if !ok {
				return false, nil
			}
			if d := at.Sub(b.created[name]); d > worst {
				worst, worstPod = d, name
			}
		}
		return true, nil
	}, wait.WithInterval(100*time.Millisecond), wait.WithTimeout(3*time.Minute), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("%s: not every one of %d pods was bound: %v; %s", during, len(names), err, c.unbound(b, names))
	}
	c.t.Logf("%s: %d pods bound, longest create→bind %.1fs (%s)", during, len(names), worst.Seconds(), worstPod)
	if worst > bound {
		c.t.Errorf("%s: pod %s waited %.1fs from creation to binding, over the %.1fs one outage may cost",
			during, worstPod, worst.Seconds(), bound.Seconds())
	}
}

// unbound says, for the pods of names the watch has not seen bound, what
// the API server has of them now: where a pod is, or why it waits.
func (c *cluster) unbound(b *bindWatch, names []string) string {
	b.mu.Lock()
	var missing []string
	for _, name := range names {
		if _, ok := b.bound[name]; !ok {
			missing = append(missing, name)
		}
	}
	b.mu.Unlock()
	var out strings.Builder
	fmt.Fprintf(&out, "%d not seen bound:", len(missing))
	for _, name := range missing {
		pod, err := c.client.CoreV1().Pods(c.ns).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case err != nil:
			fmt.Fprintf(&out, " %s (%v);", name, err)
		case pod.Spec.NodeName != "":
			fmt.Fprintf(&out, " %s bound to %s, unseen by the watch;", name, pod.Spec.NodeName)
		default:
			why := "no PodScheduled condition"
			for _, cond := range pod.Status.Conditions {
				if cond.Type == v1.PodScheduled {
					why = fmt.Sprintf("PodScheduled %s %s: %s", cond.Status, cond.Reason, cond.Message)
				}
			}
			fmt.Fprintf(&out, " %s pending, scheduler %q, %s;", name, pod.Spec.SchedulerName, why)
		}
	}
	return out.String()
}

// expectRecovery serves a healthy scenario that ranks want first and
// other (also eligible) last, and creates a pod every 500 ms until one
// lands on want; that must happen within recoveryBound of the simulator
// serving the scenario. The pods prefer other through node affinity, which
// decides while every node scores the same (no simulation), and which the
// network score outweighs once there is one: a pod on want proves the
// ranking is back.
func (c *cluster) expectRecovery(b *bindWatch, source, nodesYAML, want, other string) {
	c.t.Helper()
	c.setScenarioDoc("source: "+source+"\nnodes:\n"+nodesYAML, servesSource(source))
	served := time.Now()
	var names []string
	for i := 0; ; i++ {
		names = append(names, b.create(c, fmt.Sprintf("%s-%d", source, i), 1, preferNode(other))...)
		time.Sleep(500 * time.Millisecond)
		b.mu.Lock()
		var first time.Time
		for _, n := range names {
			if at, ok := b.bound[n]; ok && b.node[n] == want && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
		b.mu.Unlock()
		if !first.IsZero() {
			took := first.Sub(served)
			c.t.Logf("%s: ranking resumed %.1fs after the simulator answered (%d pod(s))", source, took.Seconds(), len(names))
			if took > recoveryBound {
				c.t.Errorf("%s: pods followed the simulator's ranking %.1fs after it answered again, want ≤ %s", source, took.Seconds(), recoveryBound)
			}
			break
		}
		if time.Since(served) > time.Minute {
			c.t.Fatalf("%s: no pod followed the simulator's ranking to %s within a minute", source, want)
		}
	}
	c.expectBoundWithin(b, names, stallBound, source)
}

// preferNode gives a pod a preferred node affinity for node: worth at most
// 200 points (NodeAffinity's weight 2 × 100), against up to 1,000 from the
// network score (weight 10 × 100). st builds required node affinity only.
func preferNode(node string) func(*st.PodWrapper) {
	return func(p *st.PodWrapper) {
		p.NodeAffinity(&v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight: 100,
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}},
				}},
			}},
		})
	}
}

// containerRestarts reads the scheduler pod's restart counts by container.
func (c *cluster) containerRestarts() map[string]int32 {
	c.t.Helper()
	pod, err := kindenv.SchedulerPod(context.Background(), c.client)
	if err != nil {
		// During the simulator's restart the pod is not ready: read it by label.
		pods, lerr := c.client.CoreV1().Pods(kindenv.Namespace).List(context.Background(), metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/name=" + kindenv.Deployment})
		if lerr != nil || len(pods.Items) != 1 {
			c.t.Fatalf("finding the scheduler pod: %v %v", err, lerr)
		}
		pod = &pods.Items[0]
	}
	out := map[string]int32{}
	for _, s := range pod.Status.ContainerStatuses {
		out[s.Name] = s.RestartCount
	}
	return out
}

// setScenarioText replaces the scenario without waiting for it to be served.
func (c *cluster) setScenarioText(doc string) {
	c.t.Helper()
	ctx := context.Background()
	// The control-plane install reads the scenario from a file on the node.
	if pod, err := kindenv.SchedulerPod(ctx, c.client); err == nil && pod.Namespace != kindenv.Namespace {
		if err := kindenv.SetControlPlaneScenario(ctx, clusterName, doc); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	if err := kindenv.SetScenario(ctx, c.client, doc); err != nil {
		c.t.Fatalf("updating the scenario ConfigMap: %v", err)
	}
}

// setScenarioDoc replaces the scenario and waits until the simulator's
// answers satisfy served.
func (c *cluster) setScenarioDoc(doc string, served func(simulate, error) bool) {
	c.t.Helper()
	c.setScenarioText(doc)
	var lastErr error
	var last simulate
	err := wait.For(func(ctx context.Context) (bool, error) {
		last, lastErr = c.getSimulate(ctx)
		return served(last, lastErr), nil
	}, wait.WithInterval(time.Second), wait.WithTimeout(2*time.Minute), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("the simulator did not take the new scenario: last answer %v, %v: %v", last, lastErr, err)
	}
}

func servesSource(source string) func(simulate, error) bool {
	return func(s simulate, err error) bool {
		return err == nil && s.status == http.StatusOK && s.resp != nil && s.resp.Source == source
	}
}

// isHanging: the request was accepted and timed out unanswered.
func isHanging(_ simulate, err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}
