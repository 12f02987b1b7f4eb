package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/testutil"

	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/customscore"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/test/perf/reliability"
)

// Environment of BenchmarkReliability (make bench runs it through
// hack/bench/run.sh, which sets them for smoke runs).
const (
	envNodes      = "KNS3_RELIABILITY_NODES"      // fake nodes, default 200
	envPods       = "KNS3_RELIABILITY_PODS"       // burst size, default 1000
	envSlowPods   = "KNS3_RELIABILITY_SLOW_PODS"  // burst of PerCycle × latency1s, default 20
	envConditions = "KNS3_RELIABILITY_CONDITIONS" // comma-separated subset, default all
	envModes      = "KNS3_RELIABILITY_MODES"      // comma-separated subset, default both
	envTimeout    = "KNS3_RELIABILITY_TIMEOUT"    // longest wait for one burst to bind, default 10m
	// The scheduler's client qps (burst 2×), default 5000: the shipped 50
	// (burst 100) would make binding, not scheduling, the bottleneck of
	// every burst. 0 keeps the shipped limits.
	envQPS = "KNS3_RELIABILITY_SCHEDULER_QPS"
	envOut = "KNS3_RELIABILITY_OUT" // file the JSON lines are appended to
)

// reliabilityConditions are the simulator's states during the burst: the
// scenario's fault block, set after the scheduler's first simulation.
var reliabilityConditions = []struct{ name, fault string }{
	{"healthy", ""},
	{"hanging", "{hang: true}"},
	{"errors50", "{error_rate: 0.5}"},
	{"latency1s", "{delay_ms: 1000}"},
}

var reliabilityModes = []string{string(config.RefreshPerCycle), string(config.RefreshBackground)}

var fallbackReasons = []string{placement.FallbackSimulatorFailed, placement.FallbackBreakerOpen, placement.FallbackStale, placement.FallbackNoneScored}

// BenchmarkReliability measures how kns-3-scheduler schedules a burst of
// pods while the simulator is healthy, hangs, fails half its requests or
// answers after 1 s, in each refresh mode, with the plugin's default args.
// One control plane and one set of nodes serve every case; each case has
// its own simulator, scheduler and namespace, and reads the plugin's
// process-wide counters as deltas. Each case runs its burst once, whatever
// b.N: run it with -benchtime 1x.
func BenchmarkReliability(b *testing.B) {
	if testing.Short() {
		b.Skip("skipping: the reliability benchmark starts etcd, kube-apiserver and a scheduler per case; run without -short")
	}
	nodes := envInt(b, envNodes, 200)
	podCount := envInt(b, envPods, 1000)
	slowPods := envInt(b, envSlowPods, 20)
	timeout := envDuration(b, envTimeout, 10*time.Minute)
	qps := 5000
	if v := os.Getenv(envQPS); v == "0" {
		qps = 0
	} else {
		qps = envInt(b, envQPS, qps)
	}
	var condNames []string
	for _, c := range reliabilityConditions {
		condNames = append(condNames, c.name)
	}
	conditions := envSet(b, envConditions, condNames)
	modes := envSet(b, envModes, reliabilityModes)

	cp := startControlPlane(b)
	client := fastClient(b, cp.config)
	nodeName := func(i int) string { return fmt.Sprintf("rel-node-%04d", i) }
	createBenchNodes(b, client, nodes, nodeName)
	// Every node named, with distinct scores: the best is the last.
	var sb strings.Builder
	sb.WriteString("source: reliability\nnodes:\n")
	for i := range nodes {
		fmt.Fprintf(&sb, "  %s: {score: %.6f}\n", nodeName(i), float64(i+1)/float64(nodes+1))
	}
	healthy := sb.String()

	for _, mode := range reliabilityModes {
		if modes != nil && !modes[mode] {
			continue
		}
		for _, cond := range reliabilityConditions {
			if conditions != nil && !conditions[cond.name] {
				continue
			}
			rc := reliabilityCase{mode: mode, condition: cond.name, nodes: nodes, pods: podCount, timeout: timeout,
				qps: qps, healthy: healthy, faulty: healthy}
			if cond.fault != "" {
				rc.faulty = healthy + "fault: " + cond.fault + "\n"
			}
			if mode == string(config.RefreshPerCycle) && cond.name == "latency1s" {
				rc.pods = min(podCount, slowPods)
				rc.note = fmt.Sprintf("burst of %d pods: PerCycle waits for the 1 s answer in every cycle, ~1 pod/s by specification", rc.pods)
			}
			b.Run(mode+"/"+cond.name, func(b *testing.B) { rc.run(b, cp, client) })
		}
	}
}

type reliabilityCase struct {
	mode, condition string
	nodes, pods     int
	timeout         time.Duration
	qps             int    // scheduler's client qps; 0: as shipped
	healthy, faulty string // scenarios before and during the burst
	note            string
}

func (rc *reliabilityCase) run(b *testing.B, cp *controlPlane, client kubernetes.Interface) {
	ns := strings.ToLower("rel-" + rc.mode + "-" + rc.condition)
	if _, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	// Registered first, so it runs last: the next case starts from empty nodes.
	// No kubelet runs, so bound pods are removed without a grace period.
	b.Cleanup(func() {
		zero := int64(0)
		if err := client.CoreV1().Pods(ns).DeleteCollection(context.Background(),
			metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			b.Errorf("deleting the pods of %s: %v", ns, err)
		}
	})
	sim := startMemSimulator(b, rc.healthy)
	startScheduler(b, cp, sim.url, schedulerOptions{clientQPS: rc.qps, scoreArgs: map[string]any{"refreshMode": rc.mode}})
	tracker := trackBinds(b, client, ns, "burst-")

	// Warm up with the simulator healthy: the scheduler has synced and (in
	// Background mode) holds its first simulation once a probe pod's cycle
	// was ranked from a simulation.
	if err := rc.warmUp(client, ns); err != nil {
		b.Fatal(err)
	}
	sim.set(rc.faulty) // in force from the next request on

	scored0 := counterValue(b, customscore.ScoredCyclesTotal.WithLabelValues(plugins.ProfileName))
	fallbacks0 := map[string]float64{}
	for _, r := range fallbackReasons {
		fallbacks0[r] = counterValue(b, customscore.FallbacksTotal.WithLabelValues(plugins.ProfileName, r))
	}

	b.ResetTimer()
	start := time.Now()
	created := make([]time.Time, rc.pods)
	err := parallel(rc.pods, 16, func(i int) error {
		_, err := client.CoreV1().Pods(ns).Create(context.Background(), benchPod(fmt.Sprintf("burst-%05d", i)), metav1.CreateOptions{})
		created[i] = time.Now()
		return err
	})
	if err != nil {
		b.Fatalf("creating the burst: %v", err)
	}
	createS := time.Since(start).Seconds()
	binds, ok := tracker.wait(rc.pods, rc.timeout)
	b.StopTimer()
	if !ok {
		b.Fatalf("%s/%s: %d of %d pods bound after %s (created %d)", rc.mode, rc.condition, len(binds), rc.pods, rc.timeout, rc.pods)
	}

	bound := len(binds)
	res := reliability.Line{Mode: rc.mode, Condition: rc.condition, Nodes: rc.nodes, QPS: rc.qps, Pods: rc.pods, Bound: &bound,
		Fallbacks: map[string]float64{}, Note: rc.note}
	var last time.Time
	latencies := make([]float64, 0, rc.pods)
	for i := range rc.pods {
		bound := binds[fmt.Sprintf("burst-%05d", i)]
		if bound.After(last) {
			last = bound
		}
		latencies = append(latencies, max(bound.Sub(created[i]).Seconds(), 0))
	}
	res.Seconds, res.CreateS = last.Sub(start).Seconds(), createS
	res.PodsPerS = float64(rc.pods) / res.Seconds
	res.P50S, res.P99S = percentile(latencies, 0.50), percentile(latencies, 0.99)
	res.Scored = counterValue(b, customscore.ScoredCyclesTotal.WithLabelValues(plugins.ProfileName)) - scored0
	cycles, total := res.Scored, 0.0
	for _, r := range fallbackReasons {
		d := counterValue(b, customscore.FallbacksTotal.WithLabelValues(plugins.ProfileName, r)) - fallbacks0[r]
		res.Fallbacks[r] = d
		total += d
	}
	cycles += total
	if cycles > 0 {
		res.AwareShare = res.Scored / cycles
	}

	if rc.faulty != rc.healthy {
		recovery, err := rc.recovery(client, ns, sim)
		if err != nil {
			b.Fatal(err)
		}
		res.RecoveryS = &recovery
		b.ReportMetric(recovery, "recovery-s")
	}
	b.ReportMetric(res.PodsPerS, "pods/s")
	b.ReportMetric(res.P50S, "p50-s")
	b.ReportMetric(res.P99S, "p99-s")
	b.ReportMetric(100*res.AwareShare, "aware-%")
	b.ReportMetric(total, "fallbacks")
	b.Logf("%s/%s: %d pods on %d nodes in %.2fs (%.1f pods/s; created in %.2fs), create→bind p50 %.3fs p99 %.3fs, network-aware %.1f%% of %.0f cycles, fallbacks %v %s",
		rc.mode, rc.condition, rc.pods, rc.nodes, res.Seconds, res.PodsPerS, res.CreateS, res.P50S, res.P99S, 100*res.AwareShare, cycles, res.Fallbacks, rc.note)
	if path := os.Getenv(envOut); path != "" {
		if err := appendJSONLine(path, res); err != nil {
			b.Fatal(err)
		}
	}
}

// recovery heals the simulator and creates pods one after another until one
// is bound by a cycle ranked from a simulation; it returns the seconds from
// the simulator answering again to that binding.
func (rc *reliabilityCase) recovery(client kubernetes.Interface, ns string, sim *memSimulator) (float64, error) {
	before, err := scoredCycles()
	if err != nil {
		return 0, err
	}
	sim.set(rc.healthy)
	healed := time.Now()
	for i := 0; time.Since(healed) < time.Minute; i++ {
		name := fmt.Sprintf("recover-%d", i)
		if _, err := client.CoreV1().Pods(ns).Create(context.Background(), benchPod(name), metav1.CreateOptions{}); err != nil {
			return 0, err
		}
		err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil && pod.Spec.NodeName != "", err
		})
		if err != nil {
			return 0, fmt.Errorf("%s/%s: recovery pod %s: %w", rc.mode, rc.condition, name, err)
		}
		if after, err := scoredCycles(); err != nil || after > before {
			return time.Since(healed).Seconds(), err
		}
	}
	return 0, fmt.Errorf("%s/%s: no pod was ranked from a simulation within a minute of the simulator healing", rc.mode, rc.condition)
}

// warmUp creates probe pods until one is bound by a cycle ranked from a
// simulation.
func (rc *reliabilityCase) warmUp(client kubernetes.Interface, ns string) error {
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		before, err := scoredCycles()
		if err != nil {
			return err
		}
		name := fmt.Sprintf("probe-%d", i)
		if _, err := client.CoreV1().Pods(ns).Create(context.Background(), benchPod(name), metav1.CreateOptions{}); err != nil {
			return err
		}
		for time.Now().Before(deadline) {
			pod, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pod.Spec.NodeName != "" {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if after, err := scoredCycles(); err != nil || after > before {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s/%s: no probe pod was ranked from a simulation within 60s", rc.mode, rc.condition)
}

func scoredCycles() (float64, error) {
	return testutil.GetCounterMetricValue(customscore.ScoredCyclesTotal.WithLabelValues(plugins.ProfileName))
}

func benchPod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			SchedulerName: plugins.ProfileName,
			Containers:    []v1.Container{{Name: "app", Image: "kns-3/pause"}},
		},
	}
}

// percentile is the nearest-rank percentile of v (0 < p ≤ 1).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func appendJSONLine(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		tb.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}

func envDuration(tb testing.TB, name string, def time.Duration) time.Duration {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		tb.Fatalf("%s=%q: want a positive duration", name, s)
	}
	return v
}

// envSet parses a comma-separated subset of known; nil means all of them.
func envSet(tb testing.TB, name string, known []string) map[string]bool {
	tb.Helper()
	s := os.Getenv(name)
	if strings.TrimSpace(s) == "" {
		return nil
	}
	set := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(known, f) {
			tb.Fatalf("%s=%q: %q is not one of %v", name, s, f, known)
		}
		set[f] = true
	}
	return set
}
