package kindenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/conditions"
)

const (
	// Namespace, Deployment, ScenarioConfigMap and ScenarioKey are the
	// names deploy/ gives KNS-3's objects.
	Namespace         = "kns-3-system"
	Deployment        = "kns-3-scheduler"
	ScenarioConfigMap = "kns-3-simulator-scenario"
	ScenarioKey       = "scenario.yaml"

	// SamplePods is how many pods deploy/sample creates, in SampleNamespace.
	SamplePods      = 9
	SampleNamespace = "kns-3-demo"

	fieldManager = "kns-3"
)

// Render builds the kustomization in dir, as `kubectl kustomize dir` does.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	opts := krusty.MakeDefaultOptions()
	// Test runners hand the directory over as symlinks into the source
	// tree; the kustomization is ours, so files may resolve outside it.
	opts.LoadRestrictions = types.LoadRestrictionsNone
	// Namespaces, RBAC and ConfigMaps before the workloads that use them.
	opts.Reorder = krusty.ReorderOptionLegacy
	k := krusty.MakeKustomizer(opts)
	resources, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kustomize %s: %s: %w", dir, r.CurId(), err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

// Apply server-side applies the kustomization in dir, like
// `kubectl apply --server-side -k dir`.
// An install whose pods mount the probe key gets one first
// (EnsureProbeKey), as a user runs deploy/live/probe-key.sh.
func Apply(ctx context.Context, cfg *rest.Config, dir string) error {
	objs, err := Render(dir)
	if err != nil {
		return err
	}
	if needsProbeKey(objs) {
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		if _, err := EnsureProbeKey(ctx, client); err != nil {
			return err
		}
	}
	return ApplyObjects(ctx, cfg, objs)
}

// ApplyObjects server-side applies objs, in order: what Render gave, or a
// part of it.
func ApplyObjects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	force := true
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == "namespace" {
			ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := ri.Patch(ctx, obj.GetName(), apitypes.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

// WaitForScheduler waits until the Deployment's new pod is ready and
// returns it.
func WaitForScheduler(ctx context.Context, client kubernetes.Interface, timeout time.Duration) (*v1.Pod, error) {
	return waitForScheduler(ctx, client, timeout, nil)
}

// waitForScheduler is WaitForScheduler, telling progress what it waits for
// each time that changes: a slow bring-up says which stage took the time.
func waitForScheduler(ctx context.Context, client kubernetes.Interface, timeout time.Duration, progress func(string)) (*v1.Pod, error) {
	var ready *v1.Pod
	var last string
	pending := func(why string) {
		if why != last && progress != nil {
			progress(why)
		}
		last = why
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
		if err != nil {
			pending(err.Error())
			return false, nil
		}
		if !deploymentDone(d) {
			pending(fmt.Sprintf("deployment: %d/%d ready, %d updated%s", d.Status.ReadyReplicas, *d.Spec.Replicas, d.Status.UpdatedReplicas,
				describeSchedulerPods(ctx, client)))
			return false, nil
		}
		pod, err := SchedulerPod(ctx, client)
		if err != nil {
			pending(err.Error())
			return false, nil
		}
		ready = pod
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the KNS-3 scheduler did not become ready in %s (%s): %w", timeout, last, err)
	}
	return ready, nil
}

// describeSchedulerPods says where each of the Deployment's pods stands:
// not yet scheduled, or which containers are not ready.
func describeSchedulerPods(ctx context.Context, client kubernetes.Interface) string {
	pods, err := client.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: deploymentPods})
	if err != nil {
		return ""
	}
	var parts []string
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
			parts = append(parts, p.Name+" terminating")
		case p.Spec.NodeName == "":
			parts = append(parts, p.Name+" not yet scheduled")
		default:
			var waiting []string
			for _, c := range p.Status.ContainerStatuses {
				if !c.Ready {
					waiting = append(waiting, c.Name)
				}
			}
			if len(waiting) == 0 {
				parts = append(parts, p.Name+" "+string(p.Status.Phase))
			} else {
				parts = append(parts, fmt.Sprintf("%s %s, not ready: %s", p.Name, p.Status.Phase, strings.Join(waiting, ", ")))
			}
		}
	}
	if len(parts) == 0 {
		return "; no pod"
	}
	return "; " + strings.Join(parts, "; ")
}

// deploymentPods selects the Deployment's pods, by the label deploy/ gives
// them.
var deploymentPods = installclient.AppLabel + "=" + installclient.AppName

func deploymentDone(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == *d.Spec.Replicas &&
		d.Status.ReadyReplicas == *d.Spec.Replicas &&
		d.Status.Replicas == *d.Spec.Replicas
}

// SchedulerPod is the KNS-3 pod whose scheduler is ready, the one
// publishing the status first (the leader): the Deployment's in
// Namespace, or the control plane's static pod in kube-system when KNS-3
// replaced kube-scheduler.
func SchedulerPod(ctx context.Context, client kubernetes.Interface) (*v1.Pod, error) {
	in, err := installclient.Find(ctx, client)
	if err != nil {
		return nil, err
	}
	var ready *v1.Pod
	for _, p := range in.Pods {
		if p.SchedulerReady && p.SimulatorReady && (ready == nil || p.Publishing) {
			ready = p.Pod
		}
	}
	if ready == nil {
		return nil, fmt.Errorf("no ready KNS-3 pod among %d in %s", len(in.Pods), in.Namespace)
	}
	return ready, nil
}

// SetScenario replaces the simulator's scenario; the simulator picks it up
// once the kubelet has refreshed the mounted ConfigMap.
func SetScenario(ctx context.Context, client kubernetes.Interface, scenarioYAML string) error {
	cm, err := client.CoreV1().ConfigMaps(Namespace).Get(ctx, ScenarioConfigMap, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Data = map[string]string{ScenarioKey: scenarioYAML}
	_, err = client.CoreV1().ConfigMaps(Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// WaitForNodesReady waits until every node reports Ready: kind returns
// once the control plane is up, and workers still carry the not-ready taint.
func WaitForNodesReady(ctx context.Context, client kubernetes.Interface, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, conditions.NodesReady(client))
	if err != nil {
		notReady, listErr := conditions.NotReadyNodes(ctx, client)
		if listErr != nil {
			notReady = []string{listErr.Error()}
		}
		return fmt.Errorf("nodes not ready after %s: %v: %w", timeout, notReady, err)
	}
	return nil
}
