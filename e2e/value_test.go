//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/test/netbench"
	"kns3.dev/kns3/test/perf/value"
)

var (
	valueDuration = flag.Duration("kns3.value-duration", 5*time.Second, "how long each placement's clients run in the value benchmark (make bench: 30s)")
	valueOut      = flag.String("kns3.value-out", "", "write the value benchmark's results here, as JSON (make bench)")
)

const (
	valueClients = 6
	netbenchPort = 8080
)

// The value benchmark's links: the rigorous worker's has gone bad since
// the sample scenario was written (it still ranks it first), the others
// are good; all are capped, so the network and not the machine's cores
// bounds the workload (6 clients asking 8 Mbit/s each).
var (
	badLink  = netshape.Shape{RateMbit: 5, Loss: 0.05}
	goodLink = netshape.Shape{RateMbit: 100}
)

// valueBenchmark runs the same clients three times on the shaped cluster,
// placed by the default scheduler, by KNS-3 with the sample scenario's
// static numbers, and by KNS-3 with live measurements, and reports their
// small calls' latency, their throughput and where they went. It checks
// only what placement must follow: the static scenario sends every client
// to the node it ranks first, live measurements send none to the bad link.
func (c *cluster) valueBenchmark(ctx context.Context) {
	c.t.Helper()
	// Every node as empty of the suite's pods as the others, so that the
	// default scheduler spreads the clients by the nodes alone.
	c.deleteAll(ctx, "")
	links := map[string]netshape.Shape{c.rigorous: badLink, c.plain: goodLink, c.disabled: goodLink}
	for node, s := range links {
		c.t.Cleanup(func() {
			if err := netshape.Clear(context.Background(), node); err != nil {
				c.t.Error(err)
			}
		})
		if err := netshape.Apply(ctx, node, s); err != nil {
			c.t.Fatal(err)
		}
	}
	server := c.netbenchServer(ctx)
	c.setScenarioDoc("source: value-live\nnodes: {}\n", servesSource("live+value-live"))
	c.awaitLive("the shaped links measured", func(r api.SimulationResponse) bool {
		bad, good := r.Results[c.rigorous].BandwidthMbps, r.Results[c.plain].BandwidthMbps
		return bad != nil && good != nil && *bad < 2*badLink.RateMbit && *good > 0.5*goodLink.RateMbit
	}, 2*liveWindow+10*time.Second)

	report := value.Report{Version: kns3.Version, Date: time.Now().UTC(), DurationSeconds: valueDuration.Seconds(), Clients: valueClients,
		Links: map[string]string{c.rigorous: badLink.String(), c.plain: goodLink.String(), c.disabled: goodLink.String()}}
	for _, run := range []struct {
		name, scheduler, scenario string
	}{
		{"default scheduler", "default-scheduler", ""},
		// The sample scenario's numbers (deploy/base/sample-scenario.yaml)
		// for this cluster's nodes.
		{"KNS-3, static sample scenario", config.ProfileName, fmt.Sprintf(
			"source: value-static\nnodes:\n  %s: {score: 0.95}\n  %s: {latency_ms: 4, bandwidth_mbps: 1000, packet_loss: 0.01}\n  %s: {score: 0.40}\n",
			c.disabled, c.rigorous, c.plain)},
		{"KNS-3, live measurements", config.ProfileName, "source: value-live\nnodes: {}\n"},
	} {
		if run.scenario != "" {
			source := strings.TrimPrefix(strings.SplitN(run.scenario, "\n", 2)[0], "source: ")
			c.setScenarioDoc(run.scenario, servesSource("live+"+source))
		}
		p := c.runClients(ctx, run.name, run.scheduler, server)
		report.Placements = append(report.Placements, p)
		c.t.Logf("%-30s p50 %7.1f ms  p99 %7.1f ms  %5.1f Mbit/s  nodes %v", p.Name, p.P50Ms, p.P99Ms, p.Mbps, p.Nodes)
	}
	def, static, live := report.Placements[0], report.Placements[1], report.Placements[2]
	if static.Nodes[c.rigorous] != valueClients {
		c.t.Errorf("static scenario: clients on %v, want all %d on %s, which it ranks first", static.Nodes, valueClients, c.rigorous)
	}
	if live.Nodes[c.rigorous] != 0 {
		c.t.Errorf("live measurements: clients on %v, want none on %s (%s)", live.Nodes, c.rigorous, badLink)
	}
	c.t.Logf("live against the default scheduler: p99 %.2f×, throughput %.2f× (goals: ≤ 0.55×, ≥ 1.22×)",
		live.P99Ms/def.P99Ms, live.Mbps/def.Mbps)
	if *valueOut != "" {
		data, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(*valueOut, data, 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
}

// netbenchServer runs the workload's server on the control-plane node,
// whose link is not shaped, and returns its URL.
func (c *cluster) netbenchServer(ctx context.Context) string {
	c.t.Helper()
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil || len(nodes.Items) == 0 {
		c.t.Fatalf("no control-plane node: %v", err)
	}
	pod := netbenchPod("netbench-server", "", []string{"server", fmt.Sprintf("--listen=:%d", netbenchPort)})
	pod.Spec.NodeName = nodes.Items[0].Name
	pod.Spec.Tolerations = []v1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	var ip string
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.client.CoreV1().Pods(c.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != v1.PodRunning || p.Status.PodIP == "" {
			return false, nil
		}
		ip = p.Status.PodIP
		return true, nil
	}); err != nil {
		c.t.Fatalf("the netbench server did not run: %v", err)
	}
	return fmt.Sprintf("http://%s:%d", ip, netbenchPort)
}

// runClients runs valueClients clients placed by scheduler and sums up what
// they measured.
func (c *cluster) runClients(ctx context.Context, name, scheduler, server string) value.Placement {
	c.t.Helper()
	label := strings.NewReplacer(" ", "-", ",", "").Replace(strings.ToLower(name))
	var names []string
	for i := range valueClients {
		pod := netbenchPod(fmt.Sprintf("client-%s-%d", label, i), scheduler, []string{"client", "--server=" + server, "--duration=" + valueDuration.String()})
		pod.Labels["placement"] = label
		if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
		names = append(names, pod.Name)
	}
	p := value.Placement{Name: name, Nodes: map[string]int{}}
	for _, n := range names {
		var pod *v1.Pod
		if err := wait.PollUntilContextTimeout(ctx, time.Second, *valueDuration+2*waitTimeout, true, func(ctx context.Context) (bool, error) {
			got, err := c.client.CoreV1().Pods(c.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			pod = got
			return got.Status.Phase == v1.PodSucceeded || got.Status.Phase == v1.PodFailed, nil
		}); err != nil || pod.Status.Phase != v1.PodSucceeded {
			c.t.Fatalf("client %s did not succeed (%v): %v", n, pod.Status.Phase, err)
		}
		raw, err := c.client.CoreV1().Pods(c.ns).GetLogs(n, &v1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		var r netbench.Result
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			_ = json.Unmarshal(sc.Bytes(), &r)
		}
		if r.Node == "" {
			c.t.Fatalf("client %s printed no result: %.200s", n, raw)
		}
		p.Nodes[pod.Spec.NodeName]++
		p.Results = append(p.Results, r)
	}
	c.deleteAll(ctx, "placement="+label)
	p.Summarise()
	return p
}

// deleteAll deletes the namespace's pods that selector selects and waits
// until they are gone.
func (c *cluster) deleteAll(ctx context.Context, selector string) {
	c.t.Helper()
	zero := int64(0)
	if err := c.client.CoreV1().Pods(c.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
		metav1.ListOptions{LabelSelector: selector}); err != nil {
		c.t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(list.Items) == 0, nil
	}); err != nil {
		c.t.Fatalf("pods %q of %s still there: %v", selector, c.ns, err)
	}
}

// netbenchPod is a pod of the workload's image, for scheduler (empty: the
// control-plane node is named instead).
func netbenchPod(name, scheduler string, args []string) *v1.Pod {
	nonRoot := true
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "netbench"}},
		Spec: v1.PodSpec{
			SchedulerName:                 scheduler,
			RestartPolicy:                 v1.RestartPolicyNever,
			TerminationGracePeriodSeconds: new(int64),
			SecurityContext:               &v1.PodSecurityContext{RunAsNonRoot: &nonRoot, RunAsUser: ptrTo[int64](65532)},
			Containers: []v1.Container{{
				Name:            "netbench",
				Image:           "kns-3-netbench:" + kns3.Version,
				ImagePullPolicy: v1.PullNever,
				Command:         []string{"/kns-3-netbench"},
				Args:            args,
				Env: []v1.EnvVar{{Name: "NODE_NAME", ValueFrom: &v1.EnvVarSource{
					FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }
