//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/customfilter"
	"kns3.dev/kns3/test/pods"
	"kns3.dev/kns3/tools/kindenv"
)

const (
	waitTimeout = 90 * time.Second
	// workloadImage is loaded on every node with the cluster; as a workload
	// it just serves on the pod's loopback.
	workloadImage = "kns-3-simulator:v0.1.0"
)

// cluster is one test's view of the kind cluster.
type cluster struct {
	t      *testing.T
	cfg    *rest.Config
	client kubernetes.Interface
	ns     string
	// barriers counts awaitNodeLabel's pods, for unique names.
	barriers int
	// The workers, by role (deploy/kind/cluster.yaml).
	disabled, rigorous, plain string
}

func newCluster(t *testing.T, envCfg *envconf.Config, namespace string) *cluster {
	t.Helper()
	cfg := envCfg.Client().RESTConfig()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, cfg: cfg, client: client, ns: namespace}
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; cp {
			continue
		}
		switch {
		case n.Labels[customfilter.LabelScheduler] == customfilter.ValueDisabled:
			c.disabled = n.Name
		case n.Labels[customfilter.LabelCapability] == customfilter.ValueRigorous:
			c.rigorous = n.Name
		default:
			c.plain = n.Name
		}
	}
	if c.disabled == "" || c.rigorous == "" || c.plain == "" {
		t.Fatalf("cluster lacks a labeled worker: disabled=%q rigorous=%q plain=%q", c.disabled, c.rigorous, c.plain)
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), namespace, metav1.DeleteOptions{})
	})
	return c
}

// createPod creates a pod for the kns-3-scheduler profile.
func (c *cluster) createPod(name string, opts ...pods.Option) {
	c.t.Helper()
	nonRoot := true
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns},
		Spec: v1.PodSpec{
			SchedulerName: plugins.ProfileName,
			Containers: []v1.Container{{
				Name: "app", Image: workloadImage, ImagePullPolicy: v1.PullNever,
				Args: []string{"--listen=127.0.0.1:8080"},
			}},
			SecurityContext:               &v1.PodSecurityContext{RunAsNonRoot: &nonRoot},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	pods.Apply(pod, opts...)
	if _, err := c.client.CoreV1().Pods(c.ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		c.t.Fatalf("creating pod %s: %v", name, err)
	}
}

// expectPlaced creates a pod, waits until it is bound and reports an error
// unless it landed on want (why: the rule that sends it there). Its node is
// recorded in bound, for boundLogged.
func (c *cluster) expectPlaced(bound map[string]string, name, want, why string, opts ...pods.Option) {
	c.t.Helper()
	c.createPod(name, opts...)
	node := c.scheduled(name)
	bound[name] = node
	if node != want {
		c.t.Errorf("%s landed on %s, want %s, %s", name, node, want, why)
	}
}

// scheduled waits until the pod is bound and returns its node.
func (c *cluster) scheduled(name string) string {
	c.t.Helper()
	var node string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = pod.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		c.t.Fatalf("pod %s/%s was not scheduled: %v (%s)", c.ns, name, err, c.schedulingMessage(name))
	}
	return node
}

// unschedulable waits for a FailedScheduling event and returns its message;
// the pod must stay unbound.
func (c *cluster) unschedulable(name string) string {
	c.t.Helper()
	var message string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.Spec.NodeName != "" {
			return false, fmt.Errorf("pod was bound to %s", pod.Spec.NodeName)
		}
		events, err := c.client.CoreV1().Events(c.ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + name + ",reason=FailedScheduling",
		})
		if err != nil {
			return false, err
		}
		if len(events.Items) > 0 {
			message = events.Items[len(events.Items)-1].Message
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		c.t.Fatalf("pod %s/%s: no FailedScheduling event: %v", c.ns, name, err)
	}
	return message
}

func (c *cluster) schedulingMessage(name string) string {
	pod, err := c.client.CoreV1().Pods(c.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == v1.PodScheduled {
			return strings.TrimSpace(cond.Reason + ": " + cond.Message)
		}
	}
	return "no PodScheduled condition"
}

// setNodeLabel sets (value != "") or removes a label of a node.
func (c *cluster) setNodeLabel(node, key, value string) {
	c.t.Helper()
	var patch string
	if value == "" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, key)
	} else {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	}
	if _, err := c.client.CoreV1().Nodes().Patch(context.Background(), node, "application/merge-patch+json",
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		c.t.Fatalf("labeling node %s: %v", node, err)
	}
}

// awaitNodeLabel returns once the scheduler has seen a node's label set
// (value != "") or removed. Node and pod events reach the scheduler on
// separate watches, so a pod created right after a label change may be
// scheduled against the old labels; a barrier pod that only the changed
// node can take proves the scheduler's snapshot holds the change.
func (c *cluster) awaitNodeLabel(node, key, value string) {
	c.t.Helper()
	req := v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpDoesNotExist}
	if value != "" {
		req = v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}
	}
	c.barriers++
	name := fmt.Sprintf("label-barrier-%d", c.barriers)
	c.createPod(name, func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}},
					req,
				},
			}}},
		}}
	})
	c.scheduled(name)
	if err := c.client.CoreV1().Pods(c.ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		c.t.Fatalf("deleting %s: %v", name, err)
	}
}

// simulate is one answer of the simulator in the scheduler's pod.
type simulate struct {
	status int
	source string
}

// getSimulate asks the pod's simulator, through a port-forward to its
// loopback address, what the scheduler would get now.
func (c *cluster) getSimulate(ctx context.Context) (simulate, error) {
	pod, err := kindenv.SchedulerPod(ctx, c.client)
	if err != nil {
		return simulate{}, err
	}
	port, stop, err := kindenv.Forward(c.cfg, c.client, kindenv.Namespace, pod.Name, 80)
	if err != nil {
		return simulate{}, err
	}
	defer close(stop)
	// Bounded: a hanging simulator is one of the states tests ask about.
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/simulate", port))
	if err != nil {
		return simulate{}, err
	}
	defer resp.Body.Close()
	var body struct {
		Source string `json:"source"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	return simulate{status: resp.StatusCode, source: body.Source}, nil
}

// setScenario replaces the simulator's scenario and waits until the
// simulator serves it (with fault, until it answers 500). The scenario must
// name a unique source.
func (c *cluster) setScenario(source, nodesYAML string, fault bool) {
	c.t.Helper()
	doc := "source: " + source + "\nnodes:\n" + nodesYAML
	served := servesSource(source)
	if fault {
		doc += "fault:\n  status: 500\n"
		served = func(s simulate, err error) bool { return err == nil && s.status == http.StatusInternalServerError }
	}
	c.setScenarioDoc(doc, served)
}

// schedulerMetrics scrapes the scheduler's /metrics over its secure port,
// authenticated with the kubeconfig's client certificate as an operator's
// Prometheus would be with its own.
func (c *cluster) schedulerMetrics() map[string]float64 {
	c.t.Helper()
	ctx := context.Background()
	pod, err := kindenv.SchedulerPod(ctx, c.client)
	if err != nil {
		c.t.Fatal(err)
	}
	port, stop, err := kindenv.Forward(c.cfg, c.client, kindenv.Namespace, pod.Name, 10259)
	if err != nil {
		c.t.Fatal(err)
	}
	defer close(stop)
	cert, err := tls.X509KeyPair(c.cfg.CertData, c.cfg.KeyData)
	if err != nil {
		c.t.Fatalf("kubeconfig client certificate: %v", err)
	}
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert},
		// The scheduler serves a self-signed certificate; the port-forward
		// already ties the connection to its pod.
		InsecureSkipVerify: true, //nolint:gosec
	}}}
	resp, err := httpClient.Get(fmt.Sprintf("https://127.0.0.1:%d/metrics", port))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		c.t.Fatalf("GET /metrics: %s: %s", resp.Status, body)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads the kns3_ series of a Prometheus text exposition.
func parseMetrics(r io.Reader) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kns3_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		var v float64
		if _, err := fmt.Sscan(line[i+1:], &v); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// boundLogged checks the scheduler's log has the PostBind line for each
// pod, on the node the pod is bound to.
func (c *cluster) boundLogged(pods map[string]string) {
	c.t.Helper()
	var missing []string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := kindenv.SchedulerPod(ctx, c.client)
		if err != nil {
			return false, nil
		}
		raw, err := c.client.CoreV1().Pods(kindenv.Namespace).GetLogs(pod.Name, &v1.PodLogOptions{
			Container: kindenv.SchedulerContainer}).DoRaw(ctx)
		if err != nil {
			return false, nil
		}
		log := string(raw)
		missing = missing[:0]
		for name, node := range pods {
			want := fmt.Sprintf("%q pod=%q node=%q", custombind.Message, c.ns+"/"+name, node)
			if !strings.Contains(log, want) {
				missing = append(missing, want)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		c.t.Errorf("the scheduler's log lacks %d PostBind line(s), e.g. %s", len(missing), strings.Join(missing, "; "))
	}
}
