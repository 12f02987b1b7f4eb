package kindenv

import (
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deployDir is deploy/ seen from this package's directory, where go test
// and Bazel (with //deploy:manifests as data) both run the test.
func deployDir(*testing.T) string {
	return filepath.Join("..", "..", "deploy")
}

func TestRenderDeploy(t *testing.T) {
	objs, err := Render(deployDir(t))
	if err != nil {
		t.Fatal(err)
	}
	find := func(kind, ns, name string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetNamespace() == ns && (o.GetName() == name || name == "") {
				return o
			}
		}
		t.Errorf("no %s %s/%s in deploy/", kind, ns, name)
		return nil
	}
	// The client CA lives in kube-system: the binding must stay there.
	find("RoleBinding", "kube-system", "kns-3-scheduler:extension-apiserver-authentication-reader")
	find("ClusterRoleBinding", "", "kns-3-scheduler:kube-scheduler")
	find("ClusterRoleBinding", "", "kns-3-scheduler:volume-scheduler")
	find("ServiceAccount", Namespace, "kns-3-scheduler")
	// The tests and users edit the scenario in place: no hash suffix.
	find("ConfigMap", Namespace, ScenarioConfigMap)

	d := find("Deployment", Namespace, Deployment)
	if d == nil {
		return
	}
	// kustomize's maps hold plain ints, which the deep-copying helpers reject.
	field, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "template", "spec", "containers")
	containers, _ := field.([]any)
	var names []string
	for _, c := range containers {
		c := c.(map[string]any)
		names = append(names, c["name"].(string))
		if c["name"] == SchedulerContainer {
			var args []string
			rawArgs, _ := c["args"].([]any)
			for _, a := range rawArgs {
				args = append(args, a.(string))
			}
			for _, want := range []string{
				"--config=/etc/kubernetes/scheduler-config.yaml",
				"--feature-gates=InterPodAffinityHostnameFastPath=true",
				"--v=1",
			} {
				if !slices.Contains(args, want) {
					t.Errorf("scheduler args %v lack %s", args, want)
				}
			}
		}
	}
	if !slices.Equal(names, []string{SchedulerContainer, SimulatorContainer}) {
		t.Errorf("containers = %v, want [%s %s] in one pod", names, SchedulerContainer, SimulatorContainer)
	}
	// Objects must come before what uses them.
	order := map[string]int{}
	for i, o := range objs {
		if _, seen := order[o.GetKind()]; !seen {
			order[o.GetKind()] = i
		}
	}
	if order["ConfigMap"] > order["Deployment"] || order["ServiceAccount"] > order["Deployment"] {
		t.Errorf("apply order %v puts the Deployment before its ConfigMaps or ServiceAccount", order)
	}
}

func TestRenderSample(t *testing.T) {
	objs, err := Render(filepath.Join(deployDir(t), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	pods := int64(0)
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		scheduler, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "template", "spec", "schedulerName")
		if scheduler != "kns-3-scheduler" {
			t.Errorf("sample %s uses scheduler %q", o.GetName(), scheduler)
		}
		n, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
		switch n := n.(type) {
		case int:
			pods += int64(n)
		case int64:
			pods += n
		}
	}
	if pods != SamplePods {
		t.Errorf("deploy/sample has %d pods, the demo waits for %d", pods, SamplePods)
	}
}
