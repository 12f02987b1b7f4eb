//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/wait"
	klientcond "sigs.k8s.io/e2e-framework/klient/wait/conditions"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"
	"sigs.k8s.io/e2e-framework/pkg/features"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/scheduler/apis/config"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/test/pods"
)

const (
	waitTimeout = 90 * time.Second
	// simulateTimeout bounds one GET /simulate: a hanging simulator is one
	// of the states tests ask about.
	simulateTimeout = 3 * time.Second
)

// barriers counts awaitNodeLabel's pods, for names unique in a feature's
// namespace, which its assessments share (features run one at a time).
var barriers int

// workloadImage is loaded on every node with the cluster; as a workload
// it just serves on the pod's loopback.
var workloadImage = "kns-3-simulator:" + kns3.Version

// namespaceGone bounds how long a feature's namespace may take to go.
const namespaceGone = 3 * time.Minute

// inNamespace gives a feature its own namespace: a feature-level Setup
// creates it, waits for its default ServiceAccount (which pods need) and
// puts the feature's view of the cluster in the context (clusterFrom);
// the Teardown deletes the namespace and waits until it is gone.
func inNamespace(f *features.FeatureBuilder, name string) *features.FeatureBuilder {
	return f.
		WithSetup("create namespace "+name, func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			ctx, err := envfuncs.CreateNamespace(name)(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
			if err := wait.For(klientcond.New(cfg.Client().Resources()).ResourceMatch(sa, func(k8s.Object) bool { return true }),
				wait.WithContext(ctx), wait.WithInterval(200*time.Millisecond), wait.WithTimeout(time.Minute), wait.WithImmediate()); err != nil {
				t.Fatalf("namespace %s has no default ServiceAccount: %v", name, err)
			}
			c, err := newCluster(ctx, cfg, name)
			if err != nil {
				t.Fatal(err)
			}
			c.feature, c.workersShaped = t, &netshape.Shape{}
			return context.WithValue(ctx, clusterKey{}, c)
		}).
		WithTeardown("delete namespace "+name, func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			ctx, err := envfuncs.DeleteNamespace(name)(ctx, cfg)
			if err != nil {
				t.Error(err)
				return ctx
			}
			// Wait until it is gone: a namespace's pods stop after the
			// feature ends, and on two cores a hundred containers stopping
			// starve the next feature's scheduler, probes and simulator.
			start := time.Now()
			ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if err := wait.For(klientcond.New(cfg.Client().Resources()).ResourceDeleted(ns),
				wait.WithContext(ctx), wait.WithInterval(time.Second), wait.WithTimeout(namespaceGone), wait.WithImmediate()); err != nil {
				t.Errorf("namespace %s not gone %s after its deletion: %v", name, namespaceGone, err)
				return ctx
			}
			t.Logf("namespace %s gone %.1fs after its deletion", name, time.Since(start).Seconds())
			return ctx
		})
}

// cluster is one assessment's view of the kind cluster and its feature's
// namespace.
type cluster struct {
	t *testing.T
	// feature is the feature's test, which outlives its assessments: what
	// several assessments share ends with it. workersShaped is the shape
	// shapeWorkersTo gave the two workers for the rest of the feature (zero:
	// none), shared by the feature's views.
	feature       *testing.T
	workersShaped *netshape.Shape
	env           *envconf.Config
	cfg           *rest.Config
	client        kubernetes.Interface
	ns            string
	// The workers, by role (deploy/kind/cluster.yaml).
	disabled, rigorous, plain string
}

// newCluster is the view of the cluster and the feature's namespace that
// inNamespace's Setup puts in the context, with no test yet.
func newCluster(ctx context.Context, envCfg *envconf.Config, ns string) (*cluster, error) {
	cfg := envCfg.Client().RESTConfig()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &cluster{env: envCfg, cfg: cfg, client: client, ns: ns}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; cp {
			continue
		}
		switch {
		case n.Labels[placement.LabelScheduler] == placement.ValueDisabled:
			c.disabled = n.Name
		case n.Labels[placement.LabelCapability] == placement.ValueRigorous:
			c.rigorous = n.Name
		default:
			c.plain = n.Name
		}
	}
	if c.disabled == "" || c.rigorous == "" || c.plain == "" {
		return nil, fmt.Errorf("cluster lacks a labeled worker: disabled=%q rigorous=%q plain=%q", c.disabled, c.rigorous, c.plain)
	}
	return c, nil
}

// clusterKey is the context key of a feature's cluster view.
type clusterKey struct{}

// clusterFrom is the feature's cluster view, for test t.
func clusterFrom(ctx context.Context, t *testing.T) *cluster {
	t.Helper()
	c, ok := ctx.Value(clusterKey{}).(*cluster)
	if !ok {
		t.Fatal("the feature has no cluster view (inNamespace)")
	}
	view := *c
	view.t = t
	return &view
}

// createPod creates p, built with st.MakePod(), for the kns-3-scheduler
// profile.
func (c *cluster) createPod(p *st.PodWrapper) {
	c.t.Helper()
	c.createPodFor(p, "", "")
}

// createPodFor creates p for scheduler (empty: the kns-3-scheduler
// profile), its container asking cpu (empty: nothing).
func (c *cluster) createPodFor(p *st.PodWrapper, scheduler, cpu string) {
	c.t.Helper()
	if err := c.tryCreatePodFor(p, scheduler, cpu); err != nil {
		c.t.Fatal(err)
	}
}

// tryCreatePodFor is createPodFor for other goroutines than the test's.
func (c *cluster) tryCreatePodFor(p *st.PodWrapper, scheduler, cpu string) error {
	pod := pods.ForProfile(p, c.ns, workloadImage).ZeroTerminationGracePeriod().Obj()
	if scheduler != "" {
		pod.Spec.SchedulerName = scheduler
	}
	app := &pod.Spec.Containers[0]
	app.ImagePullPolicy = v1.PullNever
	app.Args = []string{"--listen=127.0.0.1:8080"}
	if cpu != "" {
		app.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	}
	nonRoot := true
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: &nonRoot}
	if _, err := c.client.CoreV1().Pods(c.ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	return nil
}

// expectPlaced creates a pod, waits until it is bound and reports an error
// unless it landed on want (why: the rule that sends it there). Its node is
// recorded in bound, for boundLogged.
func (c *cluster) expectPlaced(bound map[string]string, p *st.PodWrapper, want, why string) {
	c.t.Helper()
	name := p.Obj().Name
	c.createPod(p)
	node := c.scheduled(name)
	bound[name] = node
	if node != want {
		c.t.Errorf("%s landed on %s, want %s, %s", name, node, want, why)
	}
}

// scheduled waits until the pod is bound and returns its node.
func (c *cluster) scheduled(name string) string {
	c.t.Helper()
	ctx := context.Background()
	if err := wait.For(conditions.PodScheduled(c.client, c.ns, name), wait.WithContext(ctx),
		wait.WithInterval(200*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate()); err != nil {
		c.t.Fatalf("pod %s/%s was not scheduled: %v (%s)", c.ns, name, err, conditions.SchedulingMessage(ctx, c.client, c.ns, name))
	}
	pod, err := c.client.CoreV1().Pods(c.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return pod.Spec.NodeName
}

// unschedulable waits for a FailedScheduling event and returns its message;
// the pod must stay unbound.
func (c *cluster) unschedulable(name string) string {
	c.t.Helper()
	ctx := context.Background()
	if err := wait.For(conditions.PodFailedScheduling(c.client, c.ns, name), wait.WithContext(ctx),
		wait.WithInterval(500*time.Millisecond), wait.WithTimeout(waitTimeout), wait.WithImmediate()); err != nil {
		c.t.Fatalf("pod %s/%s: no FailedScheduling event: %v", c.ns, name, err)
	}
	msg, err := conditions.LastFailedSchedulingMessage(ctx, c.client, c.ns, name)
	if err != nil {
		c.t.Fatal(err)
	}
	return msg
}

// setNodeLabel sets (value != "") or removes a label of a node.
func (c *cluster) setNodeLabel(node, key, value string) {
	c.t.Helper()
	if err := conditions.SetNodeLabel(context.Background(), c.client, node, key, value); err != nil {
		c.t.Fatal(err)
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
	barriers++
	name := fmt.Sprintf("label-barrier-%d", barriers)
	// One term with both requirements: st's NodeAffinityIn would OR them.
	c.createPod(st.MakePod().Name(name).NodeAffinity(&v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}},
				req,
			},
		}}},
	}))
	c.scheduled(name)
	if err := c.client.CoreV1().Pods(c.ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		c.t.Fatalf("deleting %s: %v", name, err)
	}
}

// simulate is one answer of the simulator in the scheduler's pod.
type simulate struct {
	status int
	// resp is the body of a 200 answer.
	resp *api.SimulationResponse
}

func (s simulate) String() string {
	if s.resp == nil {
		return fmt.Sprintf("status %d", s.status)
	}
	return fmt.Sprintf("status %d, source %q", s.status, s.resp.Source)
}

// getSimulate asks the pod's simulator what the scheduler would get now.
func (c *cluster) getSimulate(ctx context.Context) (simulate, error) {
	status, resp, err := kindenv.Simulate(ctx, c.cfg, c.client, simulateTimeout)
	return simulate{status: status, resp: resp}, err
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

// published is the kns-3-scheduler profile's status as its scheduler last
// published it (at most publishInterval behind), read as kubectl kns3
// reads it.
func (c *cluster) published() schedstatus.ProfileStatus {
	c.t.Helper()
	return c.awaitPublished("a published status", func(schedstatus.ProfileStatus) bool { return true })
}

// awaitPublished waits until the published status of the kns-3-scheduler
// profile satisfies cond, and returns it.
func (c *cluster) awaitPublished(what string, cond func(schedstatus.ProfileStatus) bool) schedstatus.ProfileStatus {
	c.t.Helper()
	var doc schedstatus.ProfileStatus
	var last string
	err := wait.For(func(ctx context.Context) (bool, error) {
		in, err := installclient.Find(ctx, c.client)
		if err != nil {
			if ctx.Err() == nil { // not the wait's own deadline: keep what was last seen
				last = err.Error()
			}
			return false, nil
		}
		d, ok := in.Profile(config.ProfileName)
		if !ok {
			last = "no status of profile " + config.ProfileName + ": " + fmt.Sprint(in.StatusErr)
			return false, nil
		}
		doc, last = d, fmt.Sprintf("last published %s", d.Published.Format(time.RFC3339))
		return cond(d), nil
	}, wait.WithInterval(500*time.Millisecond), wait.WithTimeout(time.Minute), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("waiting for %s: %s: %v", what, last, err)
	}
	return doc
}

// awaitHeld waits until the kns-3-scheduler profile publishes that it holds
// the simulation of source. A profile refreshing in the background scores
// by the simulation it last fetched, which may be older than what the
// simulator serves now.
func (c *cluster) awaitHeld(source string) {
	c.t.Helper()
	c.awaitPublished("the simulation of "+source, func(d schedstatus.ProfileStatus) bool {
		return d.Simulator.Simulation != nil && d.Simulator.Simulation.Source == source
	})
}

// fallbacks is how many cycles the status counts as scored without the
// simulator failing or its breaker open.
func fallbacks(d schedstatus.ProfileStatus) int64 {
	return d.Fallbacks[placement.FallbackSimulatorFailed] + d.Fallbacks[placement.FallbackBreakerOpen]
}

// boundLogged checks the scheduler's log has the PostBind line for each
// pod, on the node the pod is bound to.
func (c *cluster) boundLogged(pods map[string]string) {
	c.t.Helper()
	var missing []string
	err := wait.For(func(ctx context.Context) (bool, error) {
		pod, err := kindenv.SchedulerPod(ctx, c.client)
		if err != nil {
			return false, nil
		}
		raw, err := c.client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &v1.PodLogOptions{
			Container: installclient.SchedulerContainer}).DoRaw(ctx)
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
	}, wait.WithInterval(time.Second), wait.WithTimeout(30*time.Second), wait.WithImmediate())
	if err != nil {
		c.t.Errorf("the scheduler's log lacks %d PostBind line(s), e.g. %s", len(missing), strings.Join(missing, "; "))
	}
}
