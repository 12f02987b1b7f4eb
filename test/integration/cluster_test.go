package integration

import (
	"testing"

	"k8s.io/client-go/kubernetes"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// cluster is one test's world: API server, simulator stub, kns-3-scheduler,
// labeled nodes and a namespace for the pods.
type cluster struct {
	client kubernetes.Interface
	sim    *simulatorStub
	ns     string
}

type nodeSpec struct {
	name   string
	labels map[string]string
}

func newCluster(t *testing.T, scenarioYAML string, so schedulerOptions, nodes ...nodeSpec) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: the integration suite starts etcd, kube-apiserver and the scheduler; run without -short")
	}
	cp := startControlPlane(t)
	sim := startSimulator(t, scenarioYAML, so.pairs)
	for _, n := range nodes {
		createNode(t, cp.client, n.name, n.labels)
	}
	startScheduler(t, cp, sim.url, so)
	return &cluster{client: cp.client, sim: sim, ns: createNamespace(t, cp.client, "kns-3-test")}
}

// createPod creates p, built with st.MakePod(), in the test's namespace.
func (c *cluster) createPod(t *testing.T, p *st.PodWrapper) {
	t.Helper()
	createPod(t, c.client, c.ns, p)
}

func (c *cluster) scheduled(t *testing.T, name string) string {
	t.Helper()
	return waitScheduled(t, c.client, c.ns, name)
}

func (c *cluster) unschedulable(t *testing.T, name string) string {
	t.Helper()
	return waitUnschedulable(t, c.client, c.ns, name)
}
