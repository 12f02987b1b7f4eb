//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/e2e-framework/klient/wait"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/simulator/api"
)

const (
	// liveWindow is the suite's live install's --window (e2e/testdata/live).
	liveWindow = 5 * time.Second
	// agentDaemonSet is deploy/live's probe agents.
	agentDaemonSet = "kns-3-agent"
	// tiedWithin is how far apart two nodes' scores may be and still count
	// as tied: none. livescore gives nodes it cannot tell apart one score,
	// and MinMax would turn any difference, however small, into 100
	// points.
	tiedWithin = 0.0
)

// liveShape is what the plain worker's link is shaped to.
var liveShape = netshape.Shape{RateMbit: 20, Loss: 0.05}

// TestLiveNetwork runs deploy/live (a probe agent on every node, the
// simulator measuring through them; a 5 s window here), and checks that a
// live score moves only when the network does: identical healthy workers
// score the same in every window and share pods as the default scheduler
// would (then, with every node measured, deploy/monitoring's alerts and
// dashboard are evaluated on a real scrape); a shaped link, or 2 % loss alone, ranks its worker below the
// others within two windows, and healed it ties again within two; a busy
// worker is not a slow network; the path between two workers, shaped
// alone, shows in their pair's numbers; a forged echo sets off no
// answers; a burst spreads over two links that fill, and kubectl kns3
// explain agrees with where its pods went. It checks; the value benchmark
// (TestValue, next) measures, on the same install.
func TestLiveNetwork(t *testing.T) {
	f := inNamespace(features.New("live network picture"), "kns3-e2e-live").
		WithSetup("apply deploy/live, with the suite's window", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			useLive(ctx, t)
			return ctx
		}).
		Assess("identical healthy workers score the same in every window, and take pods as the default scheduler gives them",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).healthyWorkersTie(ctx)
				return ctx
			}).
		Assess("a scraper bound by deploy/monitoring's RBAC scrapes the scheduler, and every alert and dashboard query evaluates on what it served",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).alertsEvaluateOnAScrape(ctx)
				return ctx
			}).
		Assess("after a restart, the pods created while the measurements warm up spread as the default scheduler spreads them",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).warmUpSpreadsAsDefault(ctx)
				return ctx
			}).
		Assess("a shaped worker ranks below within two windows, is avoided and listed as drifted, and ties again once healed",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).shapedWorkerRanksBelow(ctx)
				return ctx
			}).
		Assess("0.3 % loss ties; 2 % loss alone ranks a worker below within two windows",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).lossAloneRanksBelow(ctx)
				return ctx
			}).
		Assess("a worker busy with a CPU burner is not a slow network",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).busyWorkerIsNotSlow(ctx)
				return ctx
			}).
		Assess("every node has a coordinate; the path between two workers, shaped alone, shows in their pair's numbers and in no other pair's",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).pairsMeasuredAndShaped(ctx)
				return ctx
			}).
		Assess("clients declared as a server's peers go where its path to them is good, a burst's client too, and tie again once healed",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).peersGoNearTheirServer(ctx)
				return ctx
			}).
		Assess("an echo forged with one agent's address sets off no answers",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).forgedEchoIsNotAnswered(ctx)
				return ctx
			}).
		Assess("ten pods declaring 20 Mbit/s in one burst spread over two 100 Mbit/s links",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).burstSpreadsOverLinks(ctx)
				return ctx
			}).
		Assess("kubectl kns3 explain ranks each burst pod's node first by the live profile's points, or says why it may not be",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).burstExplained(ctx)
				return ctx
			}).
		Assess("a stream on a worker's link sends new pods to the idle one within two windows",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				clusterFrom(ctx, t).streamMovesNewPods(ctx)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// TestValue is the value benchmark: the same clients placed by the default
// scheduler, by KNS-3 with static numbers, and live without and with
// NetworkCapacity, measured side by side (docs/value.md). make bench runs
// it in full (hack/bench/run.sh); the kind suite runs it briefly, with
// its flags' defaults (valueflags_test.go). It runs on the live install
// TestLiveNetwork leaves, declared right before it so that the suite
// installs deploy/live once, or installs it when run alone.
func TestValue(t *testing.T) {
	f := inNamespace(features.New("value benchmark"), "kns3-e2e-value").
		WithSetup("deploy/live, with the suite's window", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			useLive(ctx, t)
			return ctx
		}).
		Assess("the same clients placed by the default scheduler, by KNS-3 with static numbers, and live without and with capacity",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				(&valueRun{cluster: clusterFrom(ctx, t)}).run(ctx)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// liveTests run on the suite's deploy/live install (useLive); every other
// test runs on deploy/.
var liveTests = map[string]bool{"TestLiveNetwork": true, "TestValue": true, "TestValuePeers": true}

// liveInstalled says the cluster runs the suite's deploy/live install
// (e2e/testdata/live): applied by the first of liveTests that runs, kept
// for the next, and left when a test of deploy/ begins (leaveLive). The
// tests of a package run one at a time, in the order they are declared.
var liveInstalled bool

// useLive applies e2e/testdata/live, unless it runs already, and waits
// for its scheduler.
func useLive(ctx context.Context, t *testing.T) {
	t.Helper()
	if liveInstalled {
		t.Log("deploy/live runs already, with the suite's window: kept")
		return
	}
	if err := kindenv.Apply(ctx, kindCluster.Config, filepath.Join(kindCluster.Inputs.Root, "e2e", "testdata", "live")); err != nil {
		t.Fatal(err)
	}
	liveInstalled = true
	if _, err := kindenv.WaitForScheduler(ctx, kindCluster.Client, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// leaveLive, before each test, goes back from the suite's deploy/live
// install to deploy/ unless the test runs on it. It runs in the next
// test, after the last live test's logs were exported if it failed
// (going back replaces the scheduler pod, and its logs with it); a
// failure to go back fails that next test.
func leaveLive(ctx context.Context, _ *envconf.Config, t *testing.T) (context.Context, error) {
	if liveInstalled && !liveTests[t.Name()] {
		removeLive(ctx, t)
		liveInstalled = false
	}
	return ctx, nil
}

// removeLive goes back from deploy/live (or deploy/live/control-plane's
// agents) to deploy/: the agents' objects are deleted, and deploy/
// applied again, which puts back the namespace's Pod Security level.
func removeLive(ctx context.Context, t *testing.T) {
	client := kindCluster.Client
	for _, err := range []error{
		client.AppsV1().DaemonSets(kindenv.AgentNamespace).Delete(ctx, agentDaemonSet, metav1.DeleteOptions{}),
		client.CoreV1().Services(kindenv.AgentNamespace).Delete(ctx, agentDaemonSet, metav1.DeleteOptions{}),
		client.NetworkingV1().NetworkPolicies(kindenv.AgentNamespace).Delete(ctx, agentDaemonSet, metav1.DeleteOptions{}),
	} {
		// Not found: the test that applies them stopped before it did.
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	restoreSingleReplica(ctx, t)
}

// publishInterval is how often, at most, the scheduler publishes its status.
const publishInterval = 5 * time.Second

// probeTimeout is the simulator's echo timeout: a window's numbers cover
// the echoes sent up to this much before it.
const probeTimeout = time.Second

// awaitWindowAfter waits, at most two windows, for an answer whose window
// lies wholly after t: numbers that describe only what came after it.
func (c *cluster) awaitWindowAfter(t time.Time) api.SimulationResponse {
	c.t.Helper()
	return c.awaitLive("a window after "+t.Format(time.TimeOnly), func(r api.SimulationResponse) bool {
		return windowAfter(r, t)
	}, twoWindows+10*time.Second)
}

// windowAfter: the answer's whole window lies after t, its loss window
// too, which ends twice the probes' timeout before the answer (an echo is
// lost only once unanswered that long).
func windowAfter(r api.SimulationResponse, t time.Time) bool {
	return !r.Timestamp.Add(-time.Duration(r.WindowSeconds)*time.Second - 2*probeTimeout).Before(t)
}

// awaitLive polls the simulator until cond holds of its answer, within
// limit, and returns that answer.
func (c *cluster) awaitLive(what string, cond func(api.SimulationResponse) bool, limit time.Duration) api.SimulationResponse {
	c.t.Helper()
	// The last answer and the last error are kept apart: a port-forward
	// that times out once must not hide what the simulator last said.
	var last simulate
	var lastErr error
	var seen scoreRanges
	err := wait.For(func(ctx context.Context) (bool, error) {
		s, err := c.getSimulate(ctx)
		if err == nil && s.resp == nil {
			err = fmt.Errorf("HTTP %d", s.status)
		}
		if err != nil {
			lastErr = err
			return false, nil
		}
		last = s
		seen.add(*s.resp)
		return cond(*s.resp), nil
	}, wait.WithInterval(time.Second), wait.WithTimeout(limit), wait.WithImmediate())
	if err != nil {
		detail := "none"
		if last.resp != nil {
			detail = describeResults(last.resp.Results)
		}
		c.t.Fatalf("%s: not within %s; last answer: %s; last error: %v; while waiting: %s", what, limit, detail, lastErr, seen)
	}
	return *last.resp
}

// scoreRanges is the lowest and highest score each node had in the
// answers of one wait, and how many timestamps they span: a failed wait
// says whether a node was never measured (it is not named) or never
// measured well enough.
type scoreRanges struct {
	answers, stamps int
	lastStamp       time.Time
	low, high       map[string]float64
}

func (s *scoreRanges) add(r api.SimulationResponse) {
	if s.low == nil {
		s.low, s.high = map[string]float64{}, map[string]float64{}
	}
	s.answers++
	if !r.Timestamp.Equal(s.lastStamp) {
		s.stamps, s.lastStamp = s.stamps+1, r.Timestamp
	}
	for name, n := range r.Results {
		if low, ok := s.low[name]; !ok || n.Score < low {
			s.low[name] = n.Score
		}
		s.high[name] = max(s.high[name], n.Score)
	}
}

func (s scoreRanges) String() string {
	names := slices.Sorted(maps.Keys(s.low))
	out := fmt.Sprintf("%d answers over %d timestamps", s.answers, s.stamps)
	for _, name := range names {
		out += fmt.Sprintf("; %s scored %.3f to %.3f", name, s.low[name], s.high[name])
	}
	return out
}

func describeResults(results map[string]api.NodeResult) string {
	s := ""
	for name, r := range results {
		s += fmt.Sprintf("%s: score %.3f, %v Mbit/s, loss %v, %v ms; ", name, r.Score, deref(r.BandwidthMbps), deref(r.PacketLoss), deref(r.LatencyMs))
	}
	return s
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
