//go:build e2e

package e2e

import (
	"context"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"kns3.dev/kns3/internal/kindenv"
)

// clearShapedWorkers moves kube-system's Deployments (CoreDNS) off the
// two shaped workers, and puts them back when the test ends. The default
// scheduler ranks a node by what its pods request, so where kubeadm
// happened to put CoreDNS's two pods decided its placement of the clients:
// both on the slower worker, and it sent every client of the lowest level
// to the faster one in all five trials; split, it spread them. Cleared,
// the two workers differ in their links alone.
func (v *valueRun) clearShapedWorkers(ctx context.Context) {
	v.t.Helper()
	deployments, err := v.client.AppsV1().Deployments(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	if err != nil {
		v.t.Fatal(err)
	}
	shaped := []string{v.rigorous, v.plain}
	for _, d := range deployments.Items {
		before := d.Spec.Template.Spec.Affinity
		v.t.Cleanup(func() { v.setDeploymentAffinity(context.Background(), d.Name, before, nil) })
		affinity := before.DeepCopy()
		if affinity == nil {
			affinity = &v1.Affinity{}
		}
		affinity.NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
				Key: v1.LabelHostname, Operator: v1.NodeSelectorOpNotIn, Values: shaped}}}}}}
		v.setDeploymentAffinity(ctx, d.Name, affinity, shaped)
	}
}

// setDeploymentAffinity sets kube-system's Deployment name's pods'
// affinity and waits until it has rolled out, with none of its pods on a
// node of avoid.
func (v *valueRun) setDeploymentAffinity(ctx context.Context, name string, affinity *v1.Affinity, avoid []string) {
	v.t.Helper()
	deployments := v.client.AppsV1().Deployments(metav1.NamespaceSystem)
	err := wait.PollUntilContextTimeout(ctx, time.Second, waitTimeout, true, func(ctx context.Context) (bool, error) {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		d.Spec.Template.Spec.Affinity = affinity
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		v.t.Fatalf("setting the affinity of kube-system/%s: %v", name, err)
	}
	var where []string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*waitTimeout, true, func(ctx context.Context) (bool, error) {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil || !rolledOut(d) {
			return false, nil
		}
		selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return false, err
		}
		pods, err := v.client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return false, nil
		}
		where = where[:0]
		for _, p := range pods.Items {
			// A pod on its way out still counts against its node's
			// requests until it is gone.
			if slices.Contains(avoid, p.Spec.NodeName) {
				return false, nil
			}
			where = append(where, p.Spec.NodeName)
		}
		return true, nil
	})
	if err != nil {
		v.t.Fatalf("kube-system/%s did not roll out off %v: %v", name, avoid, err)
	}
	if len(avoid) > 0 {
		v.t.Logf("kube-system/%s moved off the shaped workers, to %v", name, where)
	}
}

// rolledOut says whether d's newest template runs in all its replicas.
func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}

// runSchedulerConfig has the scheduler run configuration, from a ConfigMap
// of name, and waits for it to. Going back to deploy/ (removeLive)
// restores the install's own.
func (c *cluster) runSchedulerConfig(ctx context.Context, name, configuration string) {
	c.t.Helper()
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kindenv.Namespace},
		Data: map[string]string{"scheduler-config.yaml": configuration}}
	cms := c.client.CoreV1().ConfigMaps(kindenv.Namespace)
	_ = cms.Delete(ctx, name, metav1.DeleteOptions{})
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = cms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	deployments := c.client.AppsV1().Deployments(kindenv.Namespace)
	d, err := deployments.Get(ctx, kindenv.Deployment, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	for i, vol := range d.Spec.Template.Spec.Volumes {
		if vol.Name == "config" && vol.ConfigMap != nil {
			d.Spec.Template.Spec.Volumes[i].ConfigMap.Name = name
		}
	}
	if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	if _, err := kindenv.WaitForScheduler(ctx, c.client, 3*time.Minute); err != nil {
		c.t.Fatal(err)
	}
}
