package networkpeers

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// shop is an AppGroup as scheduler-plugins' examples write them: the
// frontend depends on the cart (30Mi of bandwidth) and on the catalog (no
// bandwidth); the cart depends on nothing.
func shop() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "appgroup.diktyo.x-k8s.io/v1alpha1",
		"kind":       "AppGroup",
		"metadata":   map[string]any{"name": "shop", "namespace": "default"},
		"spec": map[string]any{
			"numMembers": int64(3),
			"workloads": []any{
				map[string]any{
					"workload": map[string]any{"kind": "Deployment", "name": "frontend", "selector": "frontend", "apiVersion": "apps/v1", "namespace": "default"},
					"dependencies": []any{
						map[string]any{"workload": map[string]any{"kind": "Deployment", "name": "cart", "selector": "cart"}, "minBandwidth": "30Mi", "maxNetworkCost": int64(15)},
						map[string]any{"workload": map[string]any{"kind": "Deployment", "name": "catalog", "selector": "catalog"}},
					},
				},
				map[string]any{"workload": map[string]any{"kind": "Deployment", "name": "cart", "selector": "cart"}},
			},
		},
	}}
}

func TestDependenciesOf(t *testing.T) {
	workloads := func(deps ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"workloads": []any{
			map[string]any{"workload": map[string]any{"selector": "frontend"}, "dependencies": deps},
		}}}
	}
	dep := func(selector string, minBandwidth any) map[string]any {
		d := map[string]any{"workload": map[string]any{"selector": selector}}
		if minBandwidth != nil {
			d["minBandwidth"] = minBandwidth
		}
		return d
	}
	tests := []struct {
		name     string
		obj      map[string]any
		workload string
		want     map[string]float64 // dependency selector: Mbit/s
		wantErr  string
	}{
		{name: "the example", obj: shop().Object, workload: "frontend", want: map[string]float64{"cart": 31.457280, "catalog": 0}},
		{name: "a workload without dependencies", obj: shop().Object, workload: "cart", want: map[string]float64{}},
		{name: "a workload the AppGroup does not list", obj: shop().Object, workload: "search", want: map[string]float64{}},
		{name: "a number of bits per second", obj: workloads(dep("cart", int64(20_000_000))), workload: "frontend", want: map[string]float64{"cart": 20}},
		{name: "zero declares none", obj: workloads(dep("cart", "0")), workload: "frontend", want: map[string]float64{"cart": 0}},
		{name: "a bandwidth that is no quantity", obj: workloads(dep("cart", "fast")), workload: "frontend",
			wantErr: "spec.workloads[0].dependencies[0].minBandwidth: \"fast\" is no quantity"},
		{name: "a dependency without a selector", obj: workloads(dep("", "1M")), workload: "frontend",
			wantErr: "spec.workloads[0].dependencies[0].workload.selector"},
		{name: "a dependency that is no object", obj: workloads("cart"), workload: "frontend", wantErr: "spec.workloads[0].dependencies[0] is no object"},
		{name: "workloads that are no list", obj: map[string]any{"spec": map[string]any{"workloads": "x"}}, workload: "frontend", wantErr: "spec.workloads"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			groups, err := dependenciesOf(tc.obj, "shop", tc.workload)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, g := range groups {
				got[g.Name] = g.TrafficMbps
				want := labels.Set{AppGroupLabel: "shop", AppGroupWorkloadLabel: g.Name}
				if !g.Matches(want) || g.Matches(labels.Set{AppGroupLabel: "other", AppGroupWorkloadLabel: g.Name}) {
					t.Errorf("dependency %s: its pods are labeled %v, and only those of the AppGroup", g.Name, want)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("dependencies %v, want %v", got, tc.want)
			}
			for name, mbps := range tc.want {
				if math.Abs(got[name]-mbps) > 1e-6 {
					t.Errorf("dependency %s: %g Mbit/s, want %g", name, got[name], mbps)
				}
			}
		})
	}
}

// servedResources is the discovery of an API server that serves AppGroups.
var servedResources = []*metav1.APIResourceList{{
	GroupVersion: AppGroupResource.GroupVersion().String(),
	APIResources: []metav1.APIResource{{Name: "appgroups", Kind: "AppGroup", Namespaced: true}},
}}

func dynamicClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{AppGroupResource: "AppGroupList"}, objs...)
}

func TestAppGroupsWatch(t *testing.T) {
	defer func(b wait.Backoff) { discoveryBackoff = b }(discoveryBackoff)
	discoveryBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	frontend := st.MakePod().Name("f1").Namespace("default").Label(AppGroupLabel, "shop").Label(AppGroupWorkloadLabel, "frontend").Obj()

	t.Run("no CRD", func(t *testing.T) {
		disc := fake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
		var a appGroups
		a.watch(t.Context(), disc, dynamicClient())
		if a.source.Load() != nil {
			t.Fatal("an informer of AppGroups started without their resource")
		}
		if d, err := a.declaration(frontend); d != nil || err != nil {
			t.Errorf("declaration %+v, %v: want none", d, err)
		}
	})

	t.Run("served, not allowed", func(t *testing.T) {
		disc := fake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
		disc.Resources = servedResources
		client := dynamicClient(shop())
		client.PrependReactor("list", "appgroups", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(AppGroupResource.GroupResource(), "", errors.New("no rule"))
		})
		var a appGroups
		a.watch(t.Context(), disc, client)
		if a.source.Load() != nil {
			t.Fatal("an informer of AppGroups started where it may not list them")
		}
	})

	t.Run("served after an error", func(t *testing.T) {
		disc := fake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
		disc.Resources = servedResources
		var calls atomic.Int32
		disc.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
			if calls.Add(1) == 1 {
				return true, nil, errors.New("the API server is starting")
			}
			return false, nil, nil
		})
		var a appGroups
		a.watch(t.Context(), disc, dynamicClient(shop()))
		src := a.source.Load()
		if src == nil {
			t.Fatal("no informer of AppGroups once discovery found them")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if !cache.WaitForCacheSync(ctx.Done(), src.synced) {
			t.Fatal("the AppGroups' informer did not sync")
		}
		d, err := a.declaration(frontend)
		if err != nil || d == nil || len(d.Groups) != 2 {
			t.Fatalf("declaration %+v, %v: want the frontend's two dependencies", d, err)
		}
		cart := st.MakePod().Name("c1").Namespace("default").Label(AppGroupLabel, "shop").Label(AppGroupWorkloadLabel, "cart").Obj()
		if !d.Matches(cart) {
			t.Error("the frontend's declaration does not match a cart pod")
		}
		if d.Matches(frontend) {
			t.Error("the frontend's declaration matches the frontend itself")
		}
		other := frontend.DeepCopy()
		other.Labels[AppGroupLabel] = "elsewhere"
		if d, err := a.declaration(other); d != nil || err != nil {
			t.Errorf("a pod of an AppGroup that does not exist: %+v, %v, want none", d, err)
		}
	})
}
