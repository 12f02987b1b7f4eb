package kindenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kns3.dev/kns3/kubectl-kns3/pkg/schedulerpod"
)

// install.sh on a control-plane node's directories (here temporary ones):
// it saves kubeadm's manifest once, installs ours and the configuration,
// and --uninstall puts kubeadm's back.
func TestInstallScript(t *testing.T) {
	script, err := filepath.Abs(filepath.Join(deployDir(t), "control-plane", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	etc := t.TempDir()
	manifests := filepath.Join(etc, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, data string) string {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command("sh", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "KNS3_MANIFESTS_DIR="+manifests, "KNS3_ETC_DIR="+etc)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	current := filepath.Join(manifests, "kube-scheduler.yaml")
	write(current, "kubeadm's")
	src := t.TempDir()
	manifest := write(filepath.Join(src, "m.yaml"), "ours")
	config := write(filepath.Join(src, "c.yaml"), "config")
	scenario := write(filepath.Join(src, "s.yaml"), "scenario")

	if out, err := run(manifest, config); err == nil || !strings.Contains(out, "usage") {
		t.Errorf("two arguments: %v %q, want the usage", err, out)
	}
	for i := range 2 { // a second install must not save ours as kubeadm's
		if out, err := run(manifest, config, scenario); err != nil {
			t.Fatalf("install %d: %v\n%s", i, err, out)
		}
	}
	if got := read(current); got != "ours" {
		t.Errorf("manifest = %q, want ours", got)
	}
	if got := read(filepath.Join(etc, "kube-scheduler.yaml.kubeadm")); got != "kubeadm's" {
		t.Errorf("saved manifest = %q, want kubeadm's", got)
	}
	if got := read(filepath.Join(etc, "kns-3", "scenario.yaml")); got != "scenario" {
		t.Errorf("scenario = %q", got)
	}
	if got := read(filepath.Join(etc, "kns-3", "scheduler-config.yaml")); got != "config" {
		t.Errorf("config = %q", got)
	}
	if entries, _ := os.ReadDir(manifests); len(entries) != 1 {
		t.Errorf("manifests directory holds %d files, want 1: the kubelet runs every file in it", len(entries))
	}

	if out, err := run("--uninstall"); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if got := read(current); got != "kubeadm's" {
		t.Errorf("after --uninstall the manifest is %q, want kubeadm's", got)
	}
	if _, err := os.Stat(filepath.Join(etc, "kns-3")); !os.IsNotExist(err) {
		t.Errorf("after --uninstall %s/kns-3 is still there (%v)", etc, err)
	}
	if out, err := run("--uninstall"); err == nil {
		t.Errorf("a second --uninstall succeeded with nothing saved: %q", out)
	}
}

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
	if got := schedulerpod.SimulatorPortOf(&pod); got != 10271 {
		t.Errorf("simulator port = %d, want 10271 (scheduler-config.yaml's simulatorURL)", got)
	}
	config, err := os.ReadFile(filepath.Join(deployDir(t), "control-plane", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
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
