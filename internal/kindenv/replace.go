package kindenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// InstallMode is how KNS-3 runs on a cluster.
type InstallMode string

const (
	// SecondScheduler deploys deploy/: kns-3-scheduler as a Deployment
	// beside the cluster's own kube-scheduler, for clusters whose control
	// plane cannot be touched.
	SecondScheduler InstallMode = "second-scheduler"
	// ReplaceScheduler installs deploy/control-plane: kns-3-scheduler as
	// the control plane's only scheduler, with upstream's default profile
	// and the KNS-3 profile in one process.
	ReplaceScheduler InstallMode = "replace"
)

// ParseInstallMode reads a mode's name, as flags give it.
func ParseInstallMode(s string) (InstallMode, error) {
	switch m := InstallMode(s); m {
	case SecondScheduler, ReplaceScheduler:
		return m, nil
	}
	return "", fmt.Errorf("install mode %q: want %q or %q", s, SecondScheduler, ReplaceScheduler)
}

// controlPlaneDir holds the replacement, relative to the repository root;
// liveControlPlaneDir the replacement with live measurements, and
// liveAgentsDir the agents it measures through.
var (
	controlPlaneDir     = filepath.Join("deploy", "control-plane")
	liveControlPlaneDir = filepath.Join("deploy", "live", "control-plane")
	liveAgentsDir       = filepath.Join(liveControlPlaneDir, "agents")
)

// controlPlaneStage is where install.sh and its inputs are copied on a
// node. Not under /tmp: the node mounts a tmpfs there, which docker cp does
// not write into.
const controlPlaneStage = "/var/lib/kns-3-control-plane"

// replaceScheduler applies deploy/control-plane/status (the status
// ConfigMap and the scheduler's right to patch it), then runs
// deploy/control-plane/install.sh on every control-plane node, with the
// rendered static pod, the two-profile configuration and the sample
// scenario: what an operator does on a kubeadm control plane.
func replaceScheduler(ctx context.Context, c *Cluster) error {
	if err := Apply(ctx, c.Config, filepath.Join(c.Inputs.Root, controlPlaneDir, "status")); err != nil {
		return err
	}
	return installStaticPod(ctx, c, controlPlaneDir)
}

// installStaticPod runs deploy/control-plane/install.sh on every
// control-plane node with the static pod dir renders, dir's
// scheduler-config.yaml and the sample scenario, and returns once the new
// scheduler is ready (install.sh waits for it).
func installStaticPod(ctx context.Context, c *Cluster, relDir string) error {
	dir := filepath.Join(c.Inputs.Root, relDir)
	objs, err := Render(dir)
	if err != nil {
		return err
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		return fmt.Errorf("%s renders %d objects, want the one static Pod", dir, len(objs))
	}
	manifest, err := yaml.Marshal(objs[0].Object)
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp("", "kns-3-control-plane-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	files := map[string]string{
		"install.sh":            filepath.Join(c.Inputs.Root, controlPlaneDir, "install.sh"),
		"scheduler-config.yaml": filepath.Join(dir, "scheduler-config.yaml"),
		"scenario.yaml":         filepath.Join(c.Inputs.Root, "deploy", "base", "sample-scenario.yaml"),
	}
	for name, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(stage, "kube-scheduler.yaml"), manifest, 0o644); err != nil {
		return err
	}
	// A live simulator signs its probes with the key its agents hold.
	var keyArg []string
	if bytes.Contains(manifest, []byte("--probe-key-file=")) {
		key, err := EnsureProbeKey(ctx, c.Client)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, "probe-key"), key, 0o600); err != nil {
			return err
		}
		keyArg = []string{controlPlaneStage + "/probe-key"}
	}
	nodes, err := controlPlaneNodes(ctx, c.Name)
	if err != nil {
		return err
	}
	remote := controlPlaneStage
	for _, node := range nodes {
		if err := docker(ctx, "exec", node, "rm", "-rf", remote); err != nil {
			return err
		}
		if err := docker(ctx, "cp", stage, node+":"+remote); err != nil {
			return err
		}
		args := append([]string{"exec", node, "sh", remote + "/install.sh",
			remote + "/kube-scheduler.yaml", remote + "/scheduler-config.yaml", remote + "/scenario.yaml"}, keyArg...)
		if err := docker(ctx, args...); err != nil {
			return err
		}
		c.logf("%s: kube-scheduler replaced (%s)", node, relDir)
	}
	return nil
}

// controlPlaneNodes are the names of the cluster's control-plane node
// containers.
func controlPlaneNodes(ctx context.Context, cluster string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "docker", "ps", "--format", "{{.Names}}",
		"--filter", "label=io.x-k8s.kind.cluster="+cluster,
		"--filter", "label=io.x-k8s.kind.role=control-plane").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the control-plane nodes of cluster %s: %w", cluster, err)
	}
	nodes := strings.Fields(string(out))
	if len(nodes) == 0 {
		return nil, fmt.Errorf("cluster %s has no control-plane node container", cluster)
	}
	return nodes, nil
}

func docker(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// waitReplacedScheduler waits until the kubelet runs the replacement: the
// mirror pod of the static pod, with the KNS-3 image, ready.
func waitReplacedScheduler(ctx context.Context, c *Cluster) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, schedulerTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := SchedulerPod(ctx, c.Client)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if pod.Namespace != "kube-system" || !runsImage(pod, "kns-3-scheduler") {
			last = fmt.Sprintf("%s/%s is not the control plane's", pod.Namespace, pod.Name)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the control plane's kns-3-scheduler did not become ready in %s (%s): %w", schedulerTimeout, last, err)
	}
	return nil
}

func runsImage(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if strings.HasPrefix(filepath.Base(c.Image), name+":") {
			return true
		}
	}
	return false
}

// ReplaceSteps turn a cluster brought up with SecondScheduler into one
// whose control plane runs kns-3-scheduler: the Deployment is scaled to
// zero first, so that one process serves the kns-3-scheduler profile.
func ReplaceSteps() []Step {
	return []Step{
		{"scale the KNS-3 Deployment to 0", func(ctx context.Context, c *Cluster) error { return scaleDeployment(ctx, c, 0) }},
		{"replace the control plane's kube-scheduler", replaceScheduler},
		{"wait for the scheduler pod", waitReplacedScheduler},
	}
}

// ReplaceLiveSteps follow ReplaceSteps: they give the control plane's
// scheduler live measurements, as an operator does with
// deploy/live/control-plane: the probe agents applied, then install.sh run
// again with the live static pod and its configuration. RestoreSteps undo
// the install; the agents stay until deleted.
func ReplaceLiveSteps() []Step {
	return []Step{
		{"apply the probe agents (" + liveAgentsDir + ")", func(ctx context.Context, c *Cluster) error {
			return Apply(ctx, c.Config, filepath.Join(c.Inputs.Root, liveAgentsDir))
		}},
		{"install the live control plane's scheduler (" + liveControlPlaneDir + ")", func(ctx context.Context, c *Cluster) error {
			return installStaticPod(ctx, c, liveControlPlaneDir)
		}},
	}
}

// RestoreSteps undo ReplaceSteps: kubeadm's kube-scheduler back
// (install.sh --uninstall), the Deployment back to one replica.
func RestoreSteps() []Step {
	return []Step{
		{"restore kubeadm's kube-scheduler", restoreScheduler},
		{"scale the KNS-3 Deployment to 1", func(ctx context.Context, c *Cluster) error { return scaleDeployment(ctx, c, 1) }},
		{"wait for the scheduler pod", waitScheduler},
	}
}

func restoreScheduler(ctx context.Context, c *Cluster) error {
	nodes, err := controlPlaneNodes(ctx, c.Name)
	if err != nil {
		return err
	}
	for _, node := range nodes {
		if err := docker(ctx, "exec", node, "sh", controlPlaneStage+"/install.sh", "--uninstall"); err != nil {
			return err
		}
	}
	// kubeadm's pod is back once no static pod runs the KNS-3 image.
	return wait.PollUntilContextTimeout(ctx, time.Second, schedulerTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-scheduler"})
		if err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if runsImage(p, "kns-3-scheduler") || !podReady(p) {
				return false, nil
			}
		}
		return true, nil
	})
}

func scaleDeployment(ctx context.Context, c *Cluster, replicas int32) error {
	scale, err := c.Client.AppsV1().Deployments(Namespace).GetScale(ctx, Deployment, metav1.GetOptions{})
	if err != nil {
		return err
	}
	scale.Spec.Replicas = replicas
	if _, err := c.Client.AppsV1().Deployments(Namespace).UpdateScale(ctx, Deployment, scale, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if replicas > 0 {
		return nil
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, schedulerTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: deploymentPods})
		return err == nil && len(pods.Items) == 0, nil
	})
}

// SetControlPlaneScenario writes the simulator's scenario on every
// control-plane node, where the control-plane install reads it.
func SetControlPlaneScenario(ctx context.Context, cluster, scenarioYAML string) error {
	nodes, err := controlPlaneNodes(ctx, cluster)
	if err != nil {
		return err
	}
	for _, node := range nodes {
		cmd := exec.CommandContext(ctx, "docker", "exec", "-i", node, "sh", "-c",
			"cat > /etc/kubernetes/kns-3/scenario.yaml.tmp && mv /etc/kubernetes/kns-3/scenario.yaml.tmp /etc/kubernetes/kns-3/scenario.yaml")
		cmd.Stdin = strings.NewReader(scenarioYAML)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("writing the scenario on %s: %w\n%s", node, err, out)
		}
	}
	return nil
}

// podReady reports whether the pod runs, is not being deleted and is Ready.
func podReady(p *v1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
