//go:build perf

// Package memory measures the kns-3-scheduler binary's memory at 5000
// nodes, side by side: upstream's default profile against the
// specification's kns-3-scheduler profile, in the same process image and
// against the same cluster (a real kube-apiserver on an embedded etcd, in
// the test process), with the simulator stub on loopback scoring every
// node. The peak resident set of each run sizes the Deployment's memory
// limit.
//
//	go test -tags perf -run '^$' -bench SchedulerMemory -benchtime 1x ./test/perf/memory
package memory

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/simulator/scenario"
	"kns3.dev/kns3/simulator/server"
)

// boundPods are already placed (the cache holds them, as a running
// cluster's): KNS3_MEMORY_BOUND_PODS, 20000 by default, so that a second run
// gives the cost of a pod.
var boundPods = envInt("KNS3_MEMORY_BOUND_PODS", 20000)

const (
	// nodes is the cluster's size; pendingPods are scheduled by the
	// measured run.
	nodes       = 5000
	pendingPods = 1000
	// repoRoot is seen from this package's directory.
	repoRoot = "../../.."
)

func BenchmarkSchedulerMemory(b *testing.B) {
	cp := startControlPlane(b)
	sim := startSimulator(b)
	bin := buildScheduler(b)
	populate(b, cp.client)
	for _, tc := range []struct {
		name, profile string
		config        func(tb testing.TB, kubeconfig, simulatorURL string) string
	}{
		{"default", v1.DefaultSchedulerName, defaultConfig},
		{"kns-3-scheduler", config.ProfileName, kns3Config},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := range b.N {
				ns := fmt.Sprintf("measure-%s-%d", tc.name, i)
				peak, took := measure(b, cp, bin, tc.config(b, cp.kubeconfig, sim), ns, tc.profile)
				b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-RSS")
				b.ReportMetric(pendingPods/took.Seconds(), "pods/s")
			}
		})
	}
}

// measure runs the scheduler binary until it has bound every pending pod of
// a fresh namespace, and returns its peak resident set (VmHWM) and how long
// the pods took from the first creation to the last binding.
func measure(b *testing.B, cp *controlPlane, bin, cfg, ns, profile string) (int64, time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config="+cfg, "--secure-port=0", "--v=0")
	logs, err := os.Create(filepath.Join(b.TempDir(), "scheduler.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	// Started: its caches hold the cluster once it lists the nodes.
	time.Sleep(5 * time.Second)
	createNamespace(b, cp.client, ns)
	start := time.Now()
	createPods(b, cp.client, ns, pendingPods, profile, "")
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := cp.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
		return err == nil && len(pods.Items) == 0, nil
	})
	took := time.Since(start)
	if err != nil {
		b.Fatalf("the %s profile did not bind %d pods (log %s): %v", profile, pendingPods, logs.Name(), err)
	}
	peak, err := vmHWM(cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d nodes, %d bound pods, %d scheduled in %s: peak RSS %d MiB", profile, nodes, boundPods, pendingPods, took.Round(time.Second), peak>>20)
	return peak, took
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// vmHWM is the process's peak resident set, in bytes.
func vmHWM(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

type controlPlane struct {
	client     kubernetes.Interface
	kubeconfig string
}

func startControlPlane(b *testing.B) *controlPlane {
	etcd := testserver.RunEtcd(b, nil)
	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = etcd.Endpoints()
	srv := apiservertesting.StartTestServerOrDie(b, nil,
		[]string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition", "--max-requests-inflight=2000"}, storage)
	b.Cleanup(srv.TearDownFn)
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.QPS, cfg.Burst = 2000, 4000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return &controlPlane{client: client, kubeconfig: writeKubeconfig(b, srv.ClientConfig)}
}

func writeKubeconfig(b *testing.B, cfg *rest.Config) string {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	path := filepath.Join(b.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// startSimulator serves a scenario scoring every node, as the production
// simulator would, and returns its URL.
func startSimulator(b *testing.B) string {
	var doc strings.Builder
	doc.WriteString("source: memory\nnodes:\n")
	for i := range nodes {
		fmt.Fprintf(&doc, "  %s: {score: %.3f}\n", nodeName(i), float64(i%1000)/1000)
	}
	sc, err := scenario.Parse("memory.yaml", []byte(doc.String()))
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New()
	srv.SetScenario(sc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: time.Second}
	go func() { _ = hs.Serve(ln) }()
	b.Cleanup(func() { srv.Close(); _ = hs.Close() })
	return "http://" + ln.Addr().String()
}

// buildScheduler builds the kns-3-scheduler binary as `make build` does.
func buildScheduler(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "kns-3-scheduler")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./scheduler/cmd/kns-3-scheduler")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func nodeName(i int) string {
	return fmt.Sprintf("node-%04d.zone-%c.cluster.internal", i, 'a'+rune(i%3))
}

// populate creates the nodes and the pods already bound to them.
func populate(b *testing.B, client kubernetes.Interface) {
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(32)
	for i := range nodes {
		g.Go(func() error {
			n := &v1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), Labels: map[string]string{
					v1.LabelHostname: nodeName(i), v1.LabelTopologyZone: fmt.Sprintf("zone-%c", 'a'+rune(i%3)),
				}},
				Status: v1.NodeStatus{
					Capacity:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("32"), v1.ResourceMemory: resource.MustParse("128Gi"), v1.ResourcePods: resource.MustParse("110")},
					Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
				},
			}
			n.Status.Allocatable = n.Status.Capacity
			_, err := client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	createNamespace(b, client, "bound")
	createPods(b, client, "bound", boundPods, v1.DefaultSchedulerName, "bound")
	b.Logf("%d nodes and %d bound pods created in %s", nodes, boundPods, time.Since(start).Round(time.Second))
}

func createNamespace(b *testing.B, client kubernetes.Interface, name string) {
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// createPods creates n pods for profile; bound ones are given a node
// round-robin, as a scheduler would have.
func createPods(b *testing.B, client kubernetes.Interface, ns string, n int, profile, bound string) {
	var g errgroup.Group
	g.SetLimit(32)
	var mu sync.Mutex
	var first error
	for i := range n {
		g.Go(func() error {
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d", i), Namespace: ns, Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%50)}},
				Spec: v1.PodSpec{
					SchedulerName: profile,
					Containers: []v1.Container{{Name: "app", Image: "kns-3/pause", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi"),
					}}}},
				},
			}
			if bound != "" {
				p.Spec.NodeName = nodeName(i % nodes)
			}
			_, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
			if err != nil {
				mu.Lock()
				first = errors.Join(first, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

// defaultConfig is upstream's default profile alone, as the control-plane
// install's default-scheduler profile runs it.
func defaultConfig(b testing.TB, kubeconfig, _ string) string {
	return writeConfig(b, map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
		"leaderElection":   map[string]any{"leaderElect": false},
		"clientConnection": map[string]any{"kubeconfig": kubeconfig, "qps": 500, "burst": 1000},
		"profiles":         []any{map[string]any{"schedulerName": v1.DefaultSchedulerName}},
	})
}

// kns3Config is deploy/scheduler-config.yaml, the Deployment's, against
// the test's cluster and simulator.
func kns3Config(b testing.TB, kubeconfig, simulatorURL string) string {
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "scheduler-config.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		b.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig, "qps": 500, "burst": 1000}
	profile := cfg["profiles"].([]any)[0].(map[string]any)
	profile["pluginConfig"] = []any{map[string]any{"name": "CustomScorePlugin", "args": map[string]any{"simulatorURL": simulatorURL}}}
	return writeConfig(b, cfg)
}

func writeConfig(b testing.TB, cfg map[string]any) string {
	out, err := yaml.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}
