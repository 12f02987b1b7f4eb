package integration

import (
	"net/http"
	"net/http/httptest"
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
	skipShort(t)
	cp := startControlPlane(t)
	sim := startSimulator(t, scenarioYAML, so.pairs)
	c := startCluster(t, cp, sim.url, so, nodes...)
	c.sim = sim
	return c
}

// newClusterServing is newCluster with a stub in the simulator's place
// that answers every request with body: an answer no scenario file gives,
// such as measured bandwidths with their intervals. The cluster has no sim.
func newClusterServing(t *testing.T, body string, so schedulerOptions, nodes ...nodeSpec) *cluster {
	t.Helper()
	skipShort(t)
	cp := startControlPlane(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return startCluster(t, cp, srv.URL, so, nodes...)
}

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: the integration suite starts etcd, kube-apiserver and the scheduler; run without -short")
	}
}

// startCluster creates nodes and starts the scheduler against the
// simulator at simulatorURL.
func startCluster(t *testing.T, cp *controlPlane, simulatorURL string, so schedulerOptions, nodes ...nodeSpec) *cluster {
	t.Helper()
	for _, n := range nodes {
		createNode(t, cp.client, n.name, n.labels)
	}
	startScheduler(t, cp, simulatorURL, so)
	return &cluster{client: cp.client, ns: createNamespace(t, cp.client, "kns-3-test")}
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
