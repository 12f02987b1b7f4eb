package kindenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The control-plane install renders one static pod that reaches its
// simulator on the port its --listen flag says.
func TestControlPlaneManifest(t *testing.T) {
	objs, err := Render(filepath.Join(deployDir(t), "control-plane"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" || objs[0].GetNamespace() != "kube-system" {
		t.Fatalf("rendered %d objects (first %s %s/%s), want one kube-system Pod", len(objs), objs[0].GetKind(), objs[0].GetNamespace(), objs[0].GetName())
	}
	var pod v1.Pod
	if err := runtimeFromUnstructured(objs[0].Object, &pod); err != nil {
		t.Fatal(err)
	}
	if !pod.Spec.HostNetwork {
		t.Error("the static pod must share the node's network, as kubeadm's kube-scheduler does")
	}
	if got := SimulatorPortOf(&pod); got != 10271 {
		t.Errorf("simulator port = %d, want 10271 (scheduler-config.yaml's simulatorURL)", got)
	}
	config, err := os.ReadFile(filepath.Join(deployDir(t), "control-plane", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// One process schedules the whole cluster: no cycle may wait for the
	// simulator, and the default profile stays upstream's.
	if !strings.Contains(string(config), "refreshMode: Background") {
		t.Error("scheduler-config.yaml does not refresh in the background: every PerCycle PreScore holds the default-scheduler pods too")
	}
	for _, c := range pod.Spec.Containers {
		for _, a := range append(c.Command, c.Args...) {
			if strings.HasPrefix(a, "--feature-gates") {
				t.Errorf("%s: %s: the default-scheduler profile must run upstream's defaults", c.Name, a)
			}
		}
	}
	if !strings.Contains(string(config), "simulatorURL: http://127.0.0.1:10271") {
		t.Error("scheduler-config.yaml does not send CustomScorePlugin to the simulator's port 10271")
	}
}

func TestParseInstallMode(t *testing.T) {
	for in, want := range map[string]InstallMode{"replace": ReplaceScheduler, "second-scheduler": SecondScheduler} {
		if got, err := ParseInstallMode(in); err != nil || got != want {
			t.Errorf("ParseInstallMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseInstallMode("both"); err == nil || !strings.Contains(err.Error(), `"replace"`) {
		t.Errorf("ParseInstallMode(both) = %v, want an error naming the modes", err)
	}
}

func runtimeFromUnstructured(obj map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
}
