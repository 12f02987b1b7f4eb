//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/kindnode/nodeimage"
	"kns3.dev/kns3/test/perf/value"
)

// The workloads' servers listen on these ports.
const (
	netbenchPort = 8080
	redisPort    = 6379
)

// workloadServer runs workload's server and returns the netbench client's
// flag that names it.
func (v *valueRun) workloadServer(ctx context.Context, workload string) string {
	v.t.Helper()
	if workload == value.WorkloadRedis {
		return serverFlag(workload, v.runServer(ctx, redisPod()))
	}
	return v.netbenchServer(ctx)
}

// serverFlag is the netbench client's flag that names workload's server
// at ip.
func serverFlag(workload, ip string) string {
	if workload == value.WorkloadRedis {
		return fmt.Sprintf("--redis=%s:%d", ip, redisPort)
	}
	return fmt.Sprintf("--server=http://%s:%d", ip, netbenchPort)
}

// netbenchServer runs netbench's own server and returns the client's flag
// that names it.
func (c *cluster) netbenchServer(ctx context.Context) string {
	c.t.Helper()
	ip := c.runServer(ctx, netbenchPod("netbench-server", "", []string{"server", fmt.Sprintf("--listen=:%d", netbenchPort)}))
	return serverFlag(value.WorkloadNetbench, ip)
}

// runServer runs a workload's server pod on the control-plane node, whose
// link is not shaped, and returns its IP once it runs.
func (c *cluster) runServer(ctx context.Context, pod *v1.Pod) string {
	c.t.Helper()
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil || len(nodes.Items) == 0 {
		c.t.Fatalf("no control-plane node: %v", err)
	}
	pod.Spec.NodeName = nodes.Items[0].Name
	pod.Spec.Tolerations = []v1.Toleration{controlPlaneToleration}
	return c.startServer(ctx, pod).Status.PodIP
}

// controlPlaneToleration tolerates the control-plane node's taint.
var controlPlaneToleration = v1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}

// startServer creates a workload's server pod, restarted if it stops,
// and returns it once it runs, with its node and IP.
func (c *cluster) startServer(ctx context.Context, pod *v1.Pod) *v1.Pod {
	c.t.Helper()
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	var running *v1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.client.CoreV1().Pods(c.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != v1.PodRunning || p.Status.PodIP == "" {
			return false, nil
		}
		running = p
		return true, nil
	}); err != nil {
		c.t.Fatalf("the workload's server %s did not run: %v (%s)", pod.Name, err, conditions.SchedulingMessage(ctx, c.client, c.ns, pod.Name))
	}
	return running
}

// redisPod is Debian's Redis server, as a cache is run: in memory only,
// listening for the cluster's pods (protected mode would refuse them, as
// no password is set), not as root.
func redisPod() *v1.Pod {
	pod := netbenchPod("redis-server", "", []string{"--port", fmt.Sprint(redisPort), "--save", "", "--appendonly", "no",
		"--protected-mode", "no", "--dir", "/tmp"})
	pod.Labels["app"] = "redis"
	ctr := &pod.Spec.Containers[0]
	ctr.Name, ctr.Image, ctr.Command, ctr.Env = "redis", nodeimage.RedisImage, []string{"/usr/bin/redis-server"}, nil
	return pod
}

// netbenchPod is a pod of the workload's image, for scheduler (empty: the
// control-plane node is named instead).
func netbenchPod(name, scheduler string, args []string) *v1.Pod {
	nonRoot := true
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "netbench"}},
		Spec: v1.PodSpec{
			SchedulerName:                 scheduler,
			RestartPolicy:                 v1.RestartPolicyNever,
			TerminationGracePeriodSeconds: new(int64),
			SecurityContext:               &v1.PodSecurityContext{RunAsNonRoot: &nonRoot, RunAsUser: ptrTo[int64](65532)},
			Containers: []v1.Container{{
				Name:            "netbench",
				Image:           "kns-3-netbench:" + kns3.Version,
				ImagePullPolicy: v1.PullNever,
				Command:         []string{"/kns-3-netbench"},
				Args:            args,
				Env: []v1.EnvVar{{Name: "NODE_NAME", ValueFrom: &v1.EnvVarSource{
					FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }
