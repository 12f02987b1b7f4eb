package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/test/pods"
)

// The scheduler publishes its profile's status into the ConfigMap of its
// namespace, which kubectl kns3 reads through the API server.
func TestStatusPublished(t *testing.T) {
	const ns = "kns-3-system"
	t.Setenv(status.NamespaceEnv, ns)
	c := newCluster(t, "source: lab\nwindow_seconds: 30\nnodes: {node-a: {score: 0.9}, node-b: {score: 0.1}}", schedulerOptions{},
		nodeSpec{"node-a", nil}, nodeSpec{"node-b", nil})
	ctx := context.Background()
	createNamespace(t, c.client, ns)
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: status.ConfigMapName}}
	if _, err := c.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		name := fmt.Sprintf("p%d", i)
		c.createPod(t, st.MakePod().Name(name))
		c.scheduled(t, name)
	}
	var doc status.ProfileStatus
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		in, err := installclient.Find(ctx, c.client)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		d, ok := in.Profile(plugins.ProfileName)
		last = fmt.Sprintf("%+v (%v)", d, in.StatusErr)
		doc = d
		return ok && d.ScoredCycles >= 2, nil
	})
	if err != nil {
		t.Fatalf("no status with the 2 scored cycles: last %s: %v", last, err)
	}
	sim := doc.Simulator.Simulation
	if sim == nil || sim.Source != "lab" || sim.WindowSeconds != 30 || sim.MilliScores["node-a"] != 900 || sim.MilliScores["node-b"] != 100 {
		t.Errorf("published simulation %+v", sim)
	}
	if doc.RefreshMode != "PerCycle" || doc.Breaker != status.BreakerClosed || doc.Simulator.Down() {
		t.Errorf("published %+v", doc)
	}
	if installclient.Stale(doc, time.Now()) {
		t.Errorf("a status published at %s is stale", doc.Published)
	}
}

// In the one-scheduler install, one scheduling loop serves every profile:
// a simulator that answers every request in 4.9 s must not hold up the
// default profile's pods behind the KNS-3 profile's.
func TestSlowSimulatorHoldsUpNoOtherProfile(t *testing.T) {
	c := newCluster(t, "nodes: {node-a: {score: 0.9}, node-b: {score: 0.1}}\nfault: {delay_ms: 4900}",
		schedulerOptions{config: controlPlaneConfig}, nodeSpec{"node-a", nil}, nodeSpec{"node-b", nil})
	for i := range 20 {
		c.createPod(t, st.MakePod().Name(fmt.Sprintf("kns3-%d", i)))
	}
	createdAt := time.Now()
	other := pods.ForProfile(st.MakePod().Name("default"), c.ns, podImage).SchedulerName(v1.DefaultSchedulerName).Obj()
	if _, err := c.client.CoreV1().Pods(c.ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// PerCycle, every KNS-3 cycle ahead of it would wait 4.9 s: about 98 s.
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true,
		conditions.PodScheduled(c.client, c.ns, "default"))
	took := time.Since(createdAt)
	if err != nil {
		t.Fatalf("the default profile's pod was not bound within %s of its creation behind 20 KNS-3 pods: %v", took.Round(time.Second), err)
	}
	t.Logf("the default profile's pod was bound %s after its creation", took.Round(time.Millisecond))
}
