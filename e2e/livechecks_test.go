//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/wait"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/simulator/api"
)

// The healthy check's size: twenty windows in a row, and twenty pairs of
// pods, one pair every two seconds.
const (
	healthyWindows = 20
	healthyPairs   = 20
	pairInterval   = 2 * time.Second
	// maxShareGap is how far KNS-3's share of pods on a worker may be from
	// the default scheduler's.
	maxShareGap = 0.20
	// maxStarvedLoss is the most loss a starved agent's node may be served
	// with: its late answers are not loss.
	maxStarvedLoss = 0.005
)

// twoWindows is "within two windows" of a change: two windows, and the
// time before them an echo takes to count as lost (twice the probes'
// timeout: an answer may come late).
const twoWindows = 2*liveWindow + 2*probeTimeout

// serveMeasurementsAlone serves a scenario without pins: the measurements
// alone.
func (c *cluster) serveMeasurementsAlone(source string) {
	c.t.Helper()
	c.setScenarioDoc("source: "+source+"\nnodes: {}\n", servesSource("live+"+source))
}

// measuredInFull says every worker has all three metrics and the answer
// ranks (it is past its warm-up).
func (c *cluster) measuredInFull(r api.SimulationResponse) bool {
	// While warming up every score is 0: a tie then proves nothing.
	if r.WarmUp != nil {
		return false
	}
	for _, n := range []string{c.disabled, c.rigorous, c.plain} {
		if m, ok := r.Results[n]; !ok || m.BandwidthMbps == nil || m.PacketLoss == nil || m.LatencyMs == nil {
			return false
		}
	}
	return true
}

// gap is how far apart the two schedulable workers score.
func (c *cluster) gap(r api.SimulationResponse) float64 {
	return math.Abs(r.Results[c.rigorous].Score - r.Results[c.plain].Score)
}

// healthyWorkersTie reads twenty windows in a row with every link healthy:
// the rigorous and the plain worker, identical veths on one host, must
// score the same in every answer. Meanwhile twenty KNS-3 pods and twenty
// default pods are created in pairs, held to those two workers, each
// preferring to spread evenly with its own scheduler's pods: KNS-3's
// share of each worker must be within 20 points of the default
// scheduler's. Every two windows the plain worker's probe agent is
// starved of CPU for three seconds (it runs 30 % of each 10 ms): it keeps
// answering, more slowly than echoes come, as a busy node's can. With the
// network score tied, upstream's plugins and the pod's own preference
// decide; a network score that ranked noise would outweigh them (weight
// 10 against PodTopologySpread's 2). -kns3.healthy-runs runs it again and
// again.
func (c *cluster) healthyWorkersTie(ctx context.Context) {
	c.t.Helper()
	for run := 1; run <= *healthyRuns; run++ {
		c.t.Logf("healthy: run %d of %d", run, *healthyRuns)
		c.healthyWorkersTieOnce(ctx)
	}
}

func (c *cluster) healthyWorkersTieOnce(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-healthy")
	c.awaitLive("every node measured in full", c.measuredInFull, 6*liveWindow+30*time.Second)

	var wg sync.WaitGroup
	placed := map[string]map[string]int{}
	var pairsErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		placed, pairsErr = c.createPairs(ctx)
	}()

	// Meanwhile the plain worker's agent is starved of CPU now and then:
	// late answers are not loss.
	stallCtx, stopStalls := context.WithCancel(ctx)
	defer stopStalls()
	type stallResult struct {
		n   int
		err error
	}
	stalled := make(chan stallResult, 1)
	go func() {
		n, err := starveAgents(stallCtx, c.plain, 2*liveWindow)
		stalled <- stallResult{n, err}
	}()

	start := time.Now()
	var stamps []time.Time
	worst, answers := 0.0, 0
	// starvedLoss is the highest loss served for the starved agent's node.
	starvedLoss := 0.0
	var worstAnswer api.SimulationResponse
	var pollErr error
	for len(stamps) == 0 || stamps[len(stamps)-1].Sub(stamps[0]) < healthyWindows*liveWindow {
		if time.Since(start) > healthyWindows*liveWindow+time.Minute {
			c.t.Fatalf("only %d answers over %d timestamps in %s: %v", answers, len(stamps), time.Since(start).Round(time.Second), pollErr)
		}
		s, err := c.getSimulate(ctx)
		if err != nil || s.resp == nil {
			pollErr = fmt.Errorf("%v %v", err, s)
			time.Sleep(time.Second)
			continue
		}
		r := *s.resp
		if r.WarmUp != nil {
			// A tie among scores that are all 0 proves nothing.
			c.t.Errorf("an answer warming up in the middle of the healthy check: %+v", *r.WarmUp)
			time.Sleep(time.Second)
			continue
		}
		answers++
		if len(stamps) == 0 || !r.Timestamp.Equal(stamps[len(stamps)-1]) {
			stamps = append(stamps, r.Timestamp)
		}
		if g := c.gap(r); g > worst || answers == 1 {
			worst, worstAnswer = g, r
		}
		if l := r.Results[c.plain].PacketLoss; l != nil {
			starvedLoss = max(starvedLoss, *l)
		}
		time.Sleep(time.Second)
	}
	stopStalls()
	st := <-stalled
	if st.err != nil {
		c.t.Error(st.err)
	}
	if st.n == 0 {
		c.t.Errorf("%s's probe agent was never starved", c.plain)
	}
	span := stamps[len(stamps)-1].Sub(stamps[0])
	c.t.Logf("healthy: %d answers over %s (%.0f windows), %s's agent starved %d times for %s: the workers' scores at most %.4f apart; widest: %s",
		answers, span, span.Seconds()/liveWindow.Seconds(), c.plain, st.n, starveFor, worst, describeResults(worstAnswer.Results))
	if worst > tiedWithin {
		c.t.Errorf("identical healthy workers scored %.4f apart in one answer, want within %g: %s", worst, tiedWithin, describeResults(worstAnswer.Results))
	}
	// A starved agent's late answers are not loss.
	c.t.Logf("healthy: the starved agent's node was served with at most %.2f %% loss", 100*starvedLoss)
	if starvedLoss > maxStarvedLoss {
		c.t.Errorf("%s, whose agent was starved but answered every echo, was served with %.2f %% loss, want at most %.1f %%", c.plain, 100*starvedLoss, 100*maxStarvedLoss)
	}

	wg.Wait()
	if pairsErr != nil {
		c.t.Fatal(pairsErr)
	}
	kns3, def := placed["kns3"], placed["default"]
	c.t.Logf("pairs: KNS-3 placed %v, the default scheduler %v", kns3, def)
	for _, node := range []string{c.rigorous, c.plain} {
		a, b := float64(kns3[node])/healthyPairs, float64(def[node])/healthyPairs
		if math.Abs(a-b) > maxShareGap {
			c.t.Errorf("%s took %.0f%% of KNS-3's pods and %.0f%% of the default scheduler's: want within %.0f points",
				node, 100*a, 100*b, 100*maxShareGap)
		}
	}
	c.deleteAll(ctx, "pair")
}

// createPairs creates healthyPairs pairs of pods, one for KNS-3 and one for
// the default scheduler, each pair pairInterval after the last, all asking
// the same CPU, held to the rigorous and plain workers and preferring to
// spread evenly over them with their own scheduler's pods (each scheduler
// sees the other's pods only once bound, so a preference over all forty
// would set them against each other), and returns how many of each
// scheduler's pods each worker took.
func (c *cluster) createPairs(ctx context.Context) (map[string]map[string]int, error) {
	both := []string{c.rigorous, c.plain}
	var names []string
	for i := range healthyPairs {
		for _, sched := range []string{"kns3", "default"} {
			name := fmt.Sprintf("pair-%s-%d", sched, i)
			scheduler := ""
			if sched == "default" {
				scheduler = v1.DefaultSchedulerName
			}
			p := st.MakePod().Name(name).Label("pair", sched).NodeAffinityIn(v1.LabelHostname, both, st.NodeSelectorTypeMatchExpressions).
				SpreadConstraint(1, v1.LabelHostname, v1.ScheduleAnyway, &metav1.LabelSelector{MatchLabels: map[string]string{"pair": sched}}, nil, nil, nil, nil)
			if err := c.tryCreatePodFor(p, scheduler, "50m"); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
		time.Sleep(pairInterval)
	}
	placed := map[string]map[string]int{"kns3": {}, "default": {}}
	for _, name := range names {
		if err := wait.For(conditions.PodScheduled(c.client, c.ns, name), wait.WithContext(ctx),
			wait.WithInterval(500*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate()); err != nil {
			return nil, fmt.Errorf("pod %s not scheduled: %w", name, err)
		}
		pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		placed[pod.Labels["pair"]][pod.Spec.NodeName]++
	}
	return placed, nil
}

// awaitRanking waits, within limit of since, for an answer in which below
// scores under above by more than tiedWithin (or, with tie, within it of
// above), logs how long it took and returns the answer.
func (c *cluster) awaitRanking(what string, since time.Time, below, above string, tie bool) api.SimulationResponse {
	c.t.Helper()
	r := c.awaitLive(what, func(r api.SimulationResponse) bool {
		if !c.measuredInFull(r) {
			return false
		}
		d := r.Results[above].Score - r.Results[below].Score
		if tie {
			return math.Abs(d) <= tiedWithin
		}
		return d > tiedWithin
	}, twoWindows+10*time.Second)
	took := time.Since(since)
	c.t.Logf("%s %.1fs after the change, in the window to %s: %s", what, took.Seconds(), r.Timestamp.Format(time.TimeOnly), describeResults(r.Results))
	// The answer's window says when the simulator saw it, whatever the
	// polling added.
	if seen := r.Timestamp.Sub(since); seen > twoWindows {
		c.t.Errorf("%s in the window to %s, %.1fs after the change: want within two windows (%s)", what, r.Timestamp.Format(time.TimeOnly), seen.Seconds(), twoWindows)
	}
	return r
}

// shapedWorkerRanksBelow places a pod on the plain worker, shapes its link
// for real to 20 Mbit/s with 5 % loss, and checks: within two windows the
// worker ranks below the rigorous one; the first window wholly after the
// shaping measures 20 Mbit/s ± 30 % and 5 % ± 3 points; new pods avoid the
// worker; the first pod is listed as drifted and stays. Healed, the two
// tie again within two windows and the pod leaves the drift list.
func (c *cluster) shapedWorkerRanksBelow(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-shaped")
	c.awaitLive("every node measured in full", c.measuredInFull, 4*liveWindow+30*time.Second)
	bound := map[string]string{}
	c.expectPlaced(bound, st.MakePod().Name("before").NodeAffinityIn(v1.LabelHostname, []string{c.plain}, st.NodeSelectorTypeMatchExpressions),
		c.plain, "its affinity holds it there")

	c.t.Cleanup(func() {
		if err := netshape.Clear(context.Background(), c.plain); err != nil {
			c.t.Error(err)
		}
	})
	if err := netshape.Apply(ctx, c.plain, liveShape); err != nil {
		c.t.Fatal(err)
	}
	shaped := time.Now()
	c.awaitRanking(c.plain+" ranked below "+c.rigorous, shaped, c.plain, c.rigorous, false)
	r := c.awaitWindowAfter(shaped)
	m := r.Results[c.plain]
	c.t.Logf("shaped %s to %s: in the first window wholly after, %.1f Mbit/s, %.1f%% loss, %.3f ms, score %.3f; measured %s",
		c.plain, liveShape, deref(m.BandwidthMbps), 100*deref(m.PacketLoss), deref(m.LatencyMs), m.Score, describeMeasured(m.Measured))
	if m.BandwidthMbps == nil || math.Abs(*m.BandwidthMbps-liveShape.RateMbit) > 0.3*liveShape.RateMbit {
		c.t.Errorf("%s: bandwidth %v Mbit/s, want %g ± 30%%", c.plain, deref(m.BandwidthMbps), liveShape.RateMbit)
	}
	if m.Measured == nil || m.Measured.BandwidthMbps == nil || m.Measured.BandwidthMbps.AtLeast {
		c.t.Errorf("%s: bandwidth %s, want a measurement, not a lower bound", c.plain, describeMeasured(m.Measured))
	}
	if m.PacketLoss == nil || math.Abs(*m.PacketLoss-liveShape.Loss) > 0.03 {
		c.t.Errorf("%s: loss %v, want %g ± 0.03", c.plain, deref(m.PacketLoss), liveShape.Loss)
	}
	for i := range 3 {
		c.expectPlaced(bound, st.MakePod().Name(fmt.Sprintf("shaped-%d", i)), c.rigorous, c.plain+" is shaped")
	}
	// The pod placed before the shaping is now on the worse node: listed
	// as drifted, advisory, and left where it is.
	d := c.awaitPublished("the pod before the shaping listed as drifted", func(d schedstatus.ProfileStatus) bool {
		return slices.ContainsFunc(d.Drift, func(p schedstatus.DriftedPod) bool { return p.Name == "before" })
	})
	listed := time.Since(shaped)
	c.t.Logf("drift listed %.1fs after shaping: %+v", listed.Seconds(), d.Drift)
	// Drift runs on the publisher's ticks and lists a pod whose node has
	// scored below the best for longer than a window: the shaping shows in
	// an answer within two windows; the scheduler has that answer within
	// one and a half publish intervals (it asks every interval, unless
	// asked within half of one); a tick first sees it within another
	// interval; more than a window later (two 5 s ticks) a tick lists and
	// publishes it. 5 s to spare.
	if limit := twoWindows + 3*publishInterval/2 + 3*publishInterval + 5*time.Second; listed > limit {
		c.t.Errorf("drift listed %.1fs after shaping, want within two windows, the scheduler's next ask, and three publications (%s)", listed.Seconds(), limit)
	}
	if out, err := kubectlKNS3(c.env, "status"); err != nil || !strings.Contains(out, c.ns+"/before") {
		c.t.Errorf("kubectl kns3 status does not list the drifted pod: %v\n%s", err, out)
	}
	if node := c.scheduled("before"); node != c.plain {
		c.t.Errorf("the drifted pod moved to %s: KNS-3 must never evict", node)
	}

	if err := netshape.Clear(ctx, c.plain); err != nil {
		c.t.Fatal(err)
	}
	healed := time.Now()
	c.awaitRanking(c.plain+" tied with "+c.rigorous+" again", healed, c.plain, c.rigorous, true)
	if r := c.awaitWindowAfter(healed); c.gap(r) > tiedWithin {
		c.t.Errorf("healed, the first window wholly after scores the workers %.4f apart: %s", c.gap(r), describeResults(r.Results))
	}
	c.awaitPublished("the pod before the shaping no longer drifted once healed", func(d schedstatus.ProfileStatus) bool {
		return !slices.ContainsFunc(d.Drift, func(p schedstatus.DriftedPod) bool { return p.Name == "before" })
	})
	c.deleteAll(ctx, "")
}

// lossAloneRanksBelow drops 0.3 % of what the plain worker receives,
// nothing else: too small a loss to matter, it ties in every window; then
// 2 %: within two windows it ranks below the rigorous worker, and healed
// it ties again within two.
func (c *cluster) lossAloneRanksBelow(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-loss")
	c.awaitRanking("healthy workers tied", time.Now(), c.plain, c.rigorous, true)
	c.t.Cleanup(func() {
		if err := netshape.Clear(context.Background(), c.plain); err != nil {
			c.t.Error(err)
		}
	})
	// A loss too small to matter ties, in every window that holds it.
	slight := netshape.Shape{Loss: 0.003}
	if err := netshape.Apply(ctx, c.plain, slight); err != nil {
		c.t.Fatal(err)
	}
	c.awaitWindowAfter(time.Now())
	for range slightWindows {
		r := c.awaitLive("the next window with "+slight.String()+" on "+c.plain, func(api.SimulationResponse) bool { return true }, 2*liveWindow)
		if g := c.gap(r); g > tiedWithin {
			c.t.Errorf("%s with %s scored %.4f from %s: a loss that small must tie: %s", c.plain, slight, g, c.rigorous, describeResults(r.Results))
		}
		time.Sleep(liveWindow)
	}
	lossy := netshape.Shape{Loss: 0.02}
	if err := netshape.Apply(ctx, c.plain, lossy); err != nil {
		c.t.Fatal(err)
	}
	r := c.awaitRanking(c.plain+" with "+lossy.String()+" ranked below "+c.rigorous, time.Now(), c.plain, c.rigorous, false)
	c.t.Logf("%s: %s", c.plain, describeMeasured(r.Results[c.plain].Measured))
	if err := netshape.Clear(ctx, c.plain); err != nil {
		c.t.Fatal(err)
	}
	c.awaitRanking(c.plain+" tied with "+c.rigorous+" again", time.Now(), c.plain, c.rigorous, true)
}

// slightWindows is how many windows a loss too small to matter must tie
// in.
const slightWindows = 3

// busyWindows is how many windows the busy-worker check reads before and
// during the burn.
const busyWindows = 3

// busyWorkerIsNotSlow reads the plain worker's latency and score over a
// few windows, then runs a pod burning every CPU it can get on it (no
// request, no limit), and reads them again: neither may change by 10 %
// (latency: or by less than its served resolution, 0.05 ms).
func (c *cluster) busyWorkerIsNotSlow(ctx context.Context) {
	c.t.Helper()
	c.serveMeasurementsAlone("live-busy")
	before := c.readWindows(ctx, c.plain, busyWindows)
	burner := c.workloadPod("burner", []string{"burn"}, c.plain, false)
	if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, burner, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	c.awaitRunning(ctx, burner.Name)
	time.Sleep(liveWindow + probeTimeout)
	during := c.readWindows(ctx, c.plain, busyWindows)
	if err := c.client.CoreV1().Pods(c.ns).Delete(ctx, burner.Name, metav1.DeleteOptions{}); err != nil {
		c.t.Error(err)
	}
	c.t.Logf("%s before the burner: latency %.3f ms, score %.3f; burning: latency %.3f ms, score %.3f",
		c.plain, before.latency, before.score, during.latency, during.score)
	if d := math.Abs(during.score - before.score); d > 0.1*before.score {
		c.t.Errorf("%s's score went from %.3f to %.3f under a CPU burner: want within 10 %%", c.plain, before.score, during.score)
	}
	if d := math.Abs(during.latency - before.latency); d > 0.1*before.latency && d > 0.05 {
		c.t.Errorf("%s's latency went from %.3f ms to %.3f ms under a CPU burner: want within 10 %% or 0.05 ms", c.plain, before.latency, during.latency)
	}
}

// reading is a node's median latency and score over some windows.
type reading struct{ latency, score float64 }

// readWindows reads node's latency and score in n windows in a row and
// returns their medians.
func (c *cluster) readWindows(ctx context.Context, node string, n int) reading {
	c.t.Helper()
	var lat, score []float64
	var last time.Time
	for len(lat) < n {
		r := c.awaitLive("a window after "+last.Format(time.TimeOnly)+" measuring "+node+" in full", func(r api.SimulationResponse) bool {
			return c.measuredInFull(r) && !r.Timestamp.Before(last.Add(liveWindow))
		}, 2*liveWindow+10*time.Second)
		last = r.Timestamp
		lat = append(lat, *r.Results[node].LatencyMs)
		score = append(score, r.Results[node].Score)
	}
	return reading{median(lat), median(score)}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// forgedEchoIsNotAnswered forges one echo request from a pod with
// CAP_NET_RAW, its source the rigorous worker's agent, to the plain
// worker's agent, and counts on the plain worker what passes between the
// two agents' ports: at most the one forged datagram, and no answer, where
// agents answering each other's answers would exchange thousands a second.
// It forges once from the pod network, whose nodes check source addresses
// (rp_filter), and once from a host-network pod, whose packets they do
// not.
func (c *cluster) forgedEchoIsNotAnswered(ctx context.Context) {
	c.t.Helper()
	a, b := c.agentIP(ctx, c.plain), c.agentIP(ctx, c.rigorous)
	counter, err := netshape.NewCounter(ctx, c.plain, a, agentPort)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() {
		if err := counter.Delete(context.Background()); err != nil {
			c.t.Error(err)
		}
	}()
	for _, hostNetwork := range []bool{false, true} {
		name := "forger-pod-network"
		if hostNetwork {
			name = "forger-host-network"
		}
		before, err := counter.Read(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		forger := c.workloadPod(name, []string{"forge", "--from", netip.AddrPortFrom(b, agentPort).String(), "--to", netip.AddrPortFrom(a, agentPort).String()}, c.disabled, true)
		forger.Spec.HostNetwork = hostNetwork
		if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, forger, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
		c.awaitRunning(ctx, name)
		c.awaitLog(ctx, name, "forged one echo request")
		time.Sleep(3 * time.Second)
		after, err := counter.Read(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		toA, fromA := after.ToAddr-before.ToAddr, after.FromAddr-before.FromAddr
		how := "delivered, and not answered"
		if toA == 0 {
			how = "dropped before the agent: the node checks source addresses"
		}
		c.t.Logf("%s: one echo forged from %s:10271 to %s:10271: %d reached the agent, %d left it (%s)", name, b, a, toA, fromA, how)
		if toA > 1 || fromA > 0 {
			c.t.Errorf("%s: one forged echo: %d datagrams between the agents' ports to %s, %d from it; want at most 1 and none", name, toA, a, fromA)
		}
		// From the host network nothing checks the source: the echo must
		// have reached the agent, or its silence proves nothing.
		if hostNetwork && toA != 1 {
			c.t.Errorf("%s: the forged echo reached the agent %d times, want once: the agent's refusal was not put to the test", name, toA)
		}
		if err := c.client.CoreV1().Pods(c.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			c.t.Error(err)
		}
	}
}

// agentPort is deploy/live's probe port.
const agentPort = 10271

// agentIP is the pod IP of the probe agent on node.
func (c *cluster) agentIP(ctx context.Context, node string) netip.Addr {
	c.t.Helper()
	pods, err := c.client.CoreV1().Pods(kindenv.AgentNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=" + agentDaemonSet, FieldSelector: "spec.nodeName=" + node})
	if err != nil || len(pods.Items) != 1 {
		c.t.Fatalf("the agent on %s: %v (%d pods)", node, err, len(pods.Items))
	}
	ip, err := netip.ParseAddr(pods.Items[0].Status.PodIP)
	if err != nil {
		c.t.Fatalf("the agent on %s: pod IP %q: %v", node, pods.Items[0].Status.PodIP, err)
	}
	return ip
}

// workloadPod is a pod running the workload image's netbench with args on
// node, with no resources asked; raw adds CAP_NET_RAW, as root.
func (c *cluster) workloadPod(name string, args []string, node string, raw bool) *v1.Pod {
	nonRoot, root := true, int64(0)
	sc := &v1.SecurityContext{RunAsNonRoot: &nonRoot}
	if raw {
		nonRoot = false
		sc = &v1.SecurityContext{RunAsUser: &root, RunAsNonRoot: &nonRoot, Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_RAW"}}}
	}
	zero := int64(0)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns},
		Spec: v1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: &zero,
			Tolerations:                   []v1.Toleration{{Operator: v1.TolerationOpExists}},
			Containers: []v1.Container{{
				Name: "netbench", Image: "kns-3-netbench:" + kns3.Version, ImagePullPolicy: v1.PullNever,
				Command: []string{"/kns-3-netbench"}, Args: args, SecurityContext: sc,
			}},
		},
	}
}

// awaitRunning waits until the pod runs.
func (c *cluster) awaitRunning(ctx context.Context, name string) {
	c.t.Helper()
	err := wait.For(func(ctx context.Context) (bool, error) {
		p, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning, nil
	}, wait.WithContext(ctx), wait.WithInterval(500*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("pod %s not running: %v", name, err)
	}
}

// awaitLog waits until the pod's log holds want.
func (c *cluster) awaitLog(ctx context.Context, name, want string) {
	c.t.Helper()
	err := wait.For(func(ctx context.Context) (bool, error) {
		raw, err := c.client.CoreV1().Pods(c.ns).GetLogs(name, &v1.PodLogOptions{}).DoRaw(ctx)
		return err == nil && strings.Contains(string(raw), want), nil
	}, wait.WithContext(ctx), wait.WithInterval(500*time.Millisecond), wait.WithTimeout(30*time.Second), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("pod %s never logged %q: %v", name, want, err)
	}
}

func describeMeasured(m *api.Measurements) string {
	if m == nil {
		return "not measured"
	}
	var parts []string
	for _, e := range []struct {
		name string
		e    *api.Estimate
	}{{"latency", m.LatencyMs}, {"bandwidth", m.BandwidthMbps}, {"loss", m.PacketLoss}, {"link use", m.LinkUseMbps}} {
		switch {
		case e.e == nil:
			parts = append(parts, e.name+" unknown")
		case e.e.AtLeast:
			parts = append(parts, fmt.Sprintf("%s ≥ %g (%d samples)", e.name, e.e.Value, e.e.Samples))
		default:
			parts = append(parts, fmt.Sprintf("%s %.4g [%.4g, %.4g] (%d samples, %.0fs old)", e.name, e.e.Value, e.e.Low, deref(e.e.High), e.e.Samples, e.e.AgeSeconds))
		}
	}
	return strings.Join(parts, "; ")
}
