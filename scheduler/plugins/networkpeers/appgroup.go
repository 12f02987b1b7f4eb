package networkpeers

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"kns3.dev/kns3/scheduler/plugins/peers"
)

// scheduler-plugins' AppGroup (its networkaware plugins, "Diktyo"): a
// namespaced custom resource that lists an application's workloads and
// what each depends on. A pod names its AppGroup and its workload in two
// labels; its peers are the pods of the workloads its workload depends on.
// Its API module is not a dependency: the plugin reads AppGroups as
// unstructured objects, and only the fields below.
const (
	AppGroupLabel         = peers.AppGroupLabel
	AppGroupWorkloadLabel = peers.AppGroupWorkloadLabel
)

// AppGroupResource is the AppGroups' resource.
var AppGroupResource = schema.GroupVersionResource{Group: "appgroup.diktyo.x-k8s.io", Version: "v1alpha1", Resource: "appgroups"}

// appGroups reads AppGroups through an informer, once discovery has found
// their resource; until then, and forever in a cluster without the CRD,
// a pod's AppGroup labels declare no peers.
type appGroups struct {
	source atomic.Pointer[appGroupSource]
}

type appGroupSource struct {
	lister cache.GenericLister
	synced cache.InformerSynced
}

// discoveryBackoff paces discovery while the API server answers with
// errors other than "not found".
var discoveryBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: time.Minute}

// watch looks the AppGroup resource up and, if the API server serves it,
// starts an informer of AppGroups until ctx ends. It never fails the
// plugin: without the CRD, AppGroups are not read. A CRD installed later
// is found when the scheduler starts again.
func (a *appGroups) watch(ctx context.Context, disc discovery.DiscoveryInterface, client dynamic.Interface) {
	logger := klog.FromContext(ctx)
	gv := AppGroupResource.GroupVersion().String()
	var resources *metav1.APIResourceList
	err := wait.ExponentialBackoffWithContext(ctx, discoveryBackoff, func(context.Context) (bool, error) {
		var err error
		resources, err = disc.ServerResourcesForGroupVersion(gv)
		switch {
		case apierrors.IsNotFound(err):
			return false, err
		case err != nil:
			logger.V(2).Info("Discovering AppGroups failed; trying again", "groupVersion", gv, "err", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil || !servesAppGroups(resources) {
		logger.V(1).Info("AppGroups are not served: pods declare their peers with annotations only", "groupVersion", gv, "err", err)
		return
	}
	// An informer that may not list retries, and logs, forever: ask once.
	if _, err := client.Resource(AppGroupResource).List(ctx, metav1.ListOptions{Limit: 1}); apierrors.IsForbidden(err) {
		logger.Info("AppGroups are served but the scheduler may not list them: their dependencies declare no peers "+
			"(grant get, list and watch on appgroups, as the installs' ClusterRole kns-3-scheduler:appgroups does)", "err", err)
		return
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	informer := factory.ForResource(AppGroupResource)
	factory.Start(ctx.Done())
	a.source.Store(&appGroupSource{lister: informer.Lister(), synced: informer.Informer().HasSynced})
	logger.V(1).Info("Reading AppGroups: their dependencies declare peers", "groupVersion", gv)
}

func servesAppGroups(list *metav1.APIResourceList) bool {
	if list == nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == AppGroupResource.Resource {
			return true
		}
	}
	return false
}

// declaration reads pod's AppGroup: one group per dependency of its
// workload. It is nil, without error, for a pod without the labels, when
// AppGroups are not read (yet), when the AppGroup does not exist or its
// workload has no dependencies; an error when the AppGroup cannot be read
// as the plugin reads it.
func (a *appGroups) declaration(pod *v1.Pod) (*peers.Declaration, error) {
	name, workload := pod.Labels[AppGroupLabel], pod.Labels[AppGroupWorkloadLabel]
	if name == "" || a == nil {
		return nil, nil
	}
	src := a.source.Load()
	if src == nil || !src.synced() {
		return nil, nil
	}
	obj, err := src.lister.ByNamespace(pod.Namespace).Get(name)
	if err != nil {
		return nil, nil // not found: no dependencies to place it near
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("AppGroup %s is a %T", name, obj)
	}
	groups, err := dependenciesOf(u.Object, name, workload)
	if err != nil {
		return nil, fmt.Errorf("AppGroup %s: %w", name, err)
	}
	if len(groups) == 0 {
		return nil, nil
	}
	return &peers.Declaration{Groups: groups}, nil
}

// dependenciesOf reads, from an AppGroup's object, the dependencies of the
// workload whose spec.workloads[].workload.selector is workload: for each,
// its .workload.selector (the value of the workload label of its pods) and
// its .minBandwidth, a quantity read as bits per second, as the peers
// annotation's traffic is ("30Mi": 31.5 Mbit/s), taken as the traffic to
// that dependency's pods; 0 or none declares none. maxNetworkCost is not
// read: it is in the unit of scheduler-plugins' NetworkTopology costs,
// which measured round trips have no scale for.
func dependenciesOf(obj map[string]any, appGroup, workload string) ([]peers.Group, error) {
	workloads, _, err := unstructured.NestedSlice(obj, "spec", "workloads")
	if err != nil {
		return nil, fmt.Errorf("spec.workloads: %w", err)
	}
	var groups []peers.Group
	for i, w := range workloads {
		wm, ok := w.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.workloads[%d] is no object", i)
		}
		if sel, _, _ := unstructured.NestedString(wm, "workload", "selector"); sel != workload {
			continue
		}
		deps, _, err := unstructured.NestedSlice(wm, "dependencies")
		if err != nil {
			return nil, fmt.Errorf("spec.workloads[%d].dependencies: %w", i, err)
		}
		for j, d := range deps {
			g, err := dependencyOf(d, appGroup)
			if err != nil {
				return nil, fmt.Errorf("spec.workloads[%d].dependencies[%d]%w", i, j, err)
			}
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// dependencyOf reads one dependency; its errors start with the field's
// path below it.
func dependencyOf(d any, appGroup string) (peers.Group, error) {
	dm, ok := d.(map[string]any)
	if !ok {
		return peers.Group{}, fmt.Errorf(" is no object")
	}
	sel, _, err := unstructured.NestedString(dm, "workload", "selector")
	if err != nil || sel == "" {
		return peers.Group{}, fmt.Errorf(".workload.selector: want the workload label's value")
	}
	g := peers.Group{Name: sel, Selectors: []labels.Selector{
		labels.SelectorFromSet(labels.Set{AppGroupLabel: appGroup, AppGroupWorkloadLabel: sel}),
	}}
	if mb, ok := dm["minBandwidth"]; ok && mb != nil && fmt.Sprint(mb) != "0" {
		if g.TrafficMbps, err = peers.ParseMbps(fmt.Sprint(mb)); err != nil {
			return peers.Group{}, fmt.Errorf(".minBandwidth: %w", err)
		}
	}
	return g, nil
}
