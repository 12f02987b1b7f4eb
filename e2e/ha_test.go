//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/kindenv"
)

const (
	// haBurst is how many pods the failover burst creates, haKillAfter how
	// many are bound when the leader is killed. Every bound pod's
	// containers start on a worker: on two cores, 150 of them starved a
	// node's container runtime for minutes, so the burst is no bigger than
	// the failover needs.
	haBurst     = 80
	haKillAfter = 15
	// haRate is the burst's pods per second: it lasts 16 s, about the
	// lease duration, so the failover happens while it goes on.
	haRate = 5
	// leaseDuration is kube-scheduler's default, which deploy/ha keeps: a
	// standby takes over at most this long after the leader's last renewal.
	leaseDuration = 15 * time.Second
	haLease       = "kns-3-scheduler"
)

// TestHAFailover runs deploy/ha (two replicas electing a leader on
// KNS-3's own lease), kills the leader's scheduler during a burst of pods,
// and checks that every pod is bound once, none is lost or rejected by
// the kubelet, and scheduling resumes within the lease duration plus 5 s.
// The Teardown puts deploy/ back.
func TestHAFailover(t *testing.T) {
	f := inNamespace(features.New("HA second scheduler: the leader dies during a burst"), "kns3-e2e-ha").
		WithSetup("apply deploy/ha", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			if err := kindenv.Apply(ctx, kindCluster.Config, filepath.Join(kindCluster.Inputs.Root, "deploy", "ha")); err != nil {
				t.Fatal(err)
			}
			if _, err := kindenv.WaitForScheduler(ctx, kindCluster.Client, 3*time.Minute); err != nil {
				t.Fatal(err)
			}
			return ctx
		}).
		WithTeardown("back to deploy/", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			restoreSingleReplica(ctx, t)
			return ctx
		}).
		Assess("every pod bound once, none lost, scheduling resumes within the lease duration plus 5 s",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				leader, holder := c.haLeader(ctx)
				t.Logf("leader %s (lease holder %s)", leader.Name, holder)
				binds := c.watchBinds()
				names := make([]string, haBurst)
				var g errgroup.Group
				// Paced, faster than one scheduler binds when it is up, so
				// that pods keep arriving across the failover.
				g.Go(func() error {
					tick := time.NewTicker(time.Second / haRate)
					defer tick.Stop()
					for i := range names {
						names[i] = fmt.Sprintf("ha-%03d", i)
						if err := c.tryCreatePodFor(st.MakePod().Name(names[i]).Label("burst", "ha"), "", "10m"); err != nil {
							return err
						}
						binds.mu.Lock()
						binds.created[names[i]] = time.Now()
						binds.mu.Unlock()
						<-tick.C
					}
					return nil
				})
				killed := make(chan time.Time, 1)
				var askedAt time.Time
				g.Go(func() error {
					// Kill the leader once the burst is under way.
					if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
						return binds.count() >= haKillAfter, nil
					}); err != nil {
						return fmt.Errorf("fewer than %d pods bound before the kill: %w", haKillAfter, err)
					}
					askedAt = time.Now()
					at, err := killScheduler(ctx, leader)
					killed <- at
					return err
				})
				if err := g.Wait(); err != nil {
					t.Fatal(err)
				}
				killedAt := <-killed
				boundAtKill := binds.countBefore(killedAt)
				t.Logf("leader's scheduler killed with %d of %d pods bound (it exited %.1fs after the stop was asked for)",
					boundAtKill, haBurst, killedAt.Sub(askedAt).Seconds())
				if boundAtKill > haBurst-20 {
					t.Fatalf("%d of %d pods were bound at the kill: the burst was over", boundAtKill, haBurst)
				}
				c.expectBoundWithin(binds, names, 3*time.Minute, "HA burst")

				// Scheduling resumed: the longest pause between two bindings
				// after the kill, and the first binding of another leader.
				times := binds.times(names)
				gap, resumed := time.Duration(0), time.Time{}
				for i := 1; i < len(times); i++ {
					if times[i].Before(killedAt) {
						continue
					}
					prev := times[i-1]
					if prev.Before(killedAt) {
						prev = killedAt
					}
					if d := times[i].Sub(prev); d > gap {
						gap, resumed = d, times[i]
					}
				}
				t.Logf("longest pause in binding after the kill: %.1fs, ended %.1fs after the kill", gap.Seconds(), resumed.Sub(killedAt).Seconds())
				if limit := leaseDuration + 5*time.Second; resumed.Sub(killedAt) > limit {
					t.Errorf("scheduling resumed %.1fs after the leader died, want within %s", resumed.Sub(killedAt).Seconds(), limit)
				}
				if _, newHolder := c.haLeader(ctx); newHolder == holder {
					t.Errorf("the lease is still held by %s, whose scheduler was killed", holder)
				}
				c.expectBoundOnce(ctx, names)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// haLeader returns the Deployment pod holding the lease, and the lease's
// holder identity ("<pod>_<uuid>").
func (c *cluster) haLeader(ctx context.Context) (*v1.Pod, string) {
	c.t.Helper()
	var leader *v1.Pod
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease, err := c.client.CoordinationV1().Leases(kindenv.Namespace).Get(ctx, haLease, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return false, nil
		}
		holder = *lease.Spec.HolderIdentity
		in, err := installclient.Find(ctx, c.client)
		if err != nil {
			return false, nil
		}
		for _, p := range in.Pods {
			if strings.HasPrefix(holder, p.Pod.Name+"_") && p.SchedulerReady {
				leader = p.Pod
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		c.t.Fatalf("no Deployment pod holds lease %s/%s (holder %q): %v", kindenv.Namespace, haLease, holder, err)
	}
	return leader, holder
}

// killScheduler kills the pod's scheduler container at once (SIGKILL, no
// lease release), as a crashed node or process would, and returns when it
// exited, as its runtime recorded it. The time the stop was asked for is
// not that: on a busy node crictl's call can take seconds, and the leader
// goes on binding and renewing its lease until the signal lands.
func killScheduler(ctx context.Context, pod *v1.Pod) (time.Time, error) {
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == installclient.SchedulerContainer {
			_, id, _ = strings.Cut(s.ContainerID, "://")
		}
	}
	if id == "" {
		return time.Time{}, fmt.Errorf("pod %s has no scheduler container ID", pod.Name)
	}
	crictl := func(args ...string) ([]byte, error) {
		// crictl's own deadline for a call is its connection timeout (2 s
		// by default), which a busy node's runtime can exceed.
		cmd := exec.CommandContext(ctx, "docker", append([]string{"exec", pod.Spec.NodeName, "crictl", "--timeout", "60s"}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("crictl %s on %s: %w\n%s", strings.Join(args, " "), pod.Spec.NodeName, err, stderr.String())
		}
		return out, nil
	}
	// "stop --timeout 0" sends SIGKILL at once.
	if _, err := crictl("stop", "--timeout", "0", id); err != nil {
		return time.Time{}, fmt.Errorf("killing the scheduler of %s: %w", pod.Name, err)
	}
	out, err := crictl("inspect", "-o", "json", id)
	if err != nil {
		return time.Time{}, err
	}
	var inspected struct {
		Status struct {
			State      string    `json:"state"`
			FinishedAt time.Time `json:"finishedAt"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &inspected); err != nil {
		return time.Time{}, fmt.Errorf("reading crictl inspect of %s: %w", id, err)
	}
	if inspected.Status.State != "CONTAINER_EXITED" || inspected.Status.FinishedAt.IsZero() {
		return time.Time{}, fmt.Errorf("the scheduler container of %s is %s after the stop, finished at %v", pod.Name, inspected.Status.State, inspected.Status.FinishedAt)
	}
	return inspected.Status.FinishedAt, nil
}

// expectBoundOnce checks that no pod was rejected by the kubelet and each
// was bound once: at most one Scheduled event, and no FailedScheduling
// event but a refused second attempt. A new leader may still hold pods
// its predecessor bound in its last moments (its caches were filled while
// it stood by) and try them again. Two refusals are then upstream's
// behaviour, and the pod stays where it is: the API server's ("is already
// assigned to node", the binding reached it), or the scheduler's own
// cache's ("is in the cache, so can't be assumed": the informer put the
// bound pod in the cache before it took the pending copy off the queue).
func (c *cluster) expectBoundOnce(ctx context.Context, names []string) {
	c.t.Helper()
	list, err := c.client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "burst=ha"})
	if err != nil {
		c.t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Status.Phase == v1.PodFailed {
			c.t.Errorf("pod %s failed: %s %s", p.Name, p.Status.Reason, p.Status.Message)
		}
	}
	events, err := c.client.CoreV1().Events(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	scheduled := map[string]int{}
	refused, notAssumed := 0, 0
	for _, e := range events.Items {
		if !slices.Contains(names, e.InvolvedObject.Name) {
			continue
		}
		switch {
		case e.Reason == "Scheduled":
			scheduled[e.InvolvedObject.Name]++
		case e.Reason == installclient.ReasonFailedScheduling && strings.Contains(e.Message, "is already assigned to node"):
			refused++
		case e.Reason == installclient.ReasonFailedScheduling && strings.Contains(e.Message, "is in the cache, so can't be assumed"):
			notAssumed++
		case e.Reason == installclient.ReasonFailedScheduling:
			c.t.Errorf("pod %s: FailedScheduling: %s", e.InvolvedObject.Name, e.Message)
		}
	}
	c.t.Logf("second bindings the API server refused: %d; second attempts the new leader's cache refused: %d", refused, notAssumed)
	missing := 0
	for _, n := range names {
		switch scheduled[n] {
		case 0:
			missing++ // bound by the leader as it died, before its event
		case 1:
		default:
			c.t.Errorf("pod %s has %d Scheduled events: scheduled more than once", n, scheduled[n])
		}
	}
	c.t.Logf("%d pods bound, %d without a Scheduled event (bound as the leader died)", len(names), missing)
}

// restoreSingleReplica applies deploy/ again and removes what only
// deploy/ha has, if it is there, so that later tests run the
// specification's install.
func restoreSingleReplica(ctx context.Context, t *testing.T) {
	if err := kindenv.Apply(ctx, kindCluster.Config, filepath.Join(kindCluster.Inputs.Root, "deploy")); err != nil {
		t.Fatal(err)
	}
	client := kindCluster.Client
	ns := kindenv.Namespace
	for _, err := range []error{
		client.RbacV1().RoleBindings(ns).Delete(ctx, "kns-3-scheduler:leader-election", metav1.DeleteOptions{}),
		client.RbacV1().Roles(ns).Delete(ctx, "kns-3-scheduler:leader-election", metav1.DeleteOptions{}),
		client.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, "kns-3-scheduler", metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	if _, err := kindenv.WaitForScheduler(ctx, client, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// count is how many pods have been seen bound.
func (b *bindWatch) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.bound)
}

// countBefore is how many pods were seen bound before t.
func (b *bindWatch) countBefore(t time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, at := range b.bound {
		if at.Before(t) {
			n++
		}
	}
	return n
}

// times are the names' binding times, sorted.
func (b *bindWatch) times(names []string) []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []time.Time
	for _, n := range names {
		if at, ok := b.bound[n]; ok {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}
