//go:build perf

// Package perf runs upstream's scheduler_perf harness on the default
// profile and on the kns-3-scheduler profile side by side, with the
// simulator stub on loopback scoring every node. `make bench` runs it.
package perf

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	_ "k8s.io/component-base/logs/json/register"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"

	"kns3.dev/kns3/scheduler/plugins/networkpeers"
	"kns3.dev/kns3/simulator/scenario"
	"kns3.dev/kns3/simulator/server"
	"kns3.dev/kns3/test/pairs"
)

var simulator = server.New()

// perfConfig is performance-config.yaml as the benchmark runs it, with the
// kns-3-scheduler profile generated from deploy/scheduler-config.yaml
// (profile.go says what differs).
var perfConfig string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := ensureEtcd(); err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kns3-perf-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if perfConfig, err = writeConfigs(dir); err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", SimulatorAddr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "perf: simulator stub: %v\n", err)
		return 1
	}
	// Every answer carries a network coordinate for every node it scores,
	// as the live simulator's do, for NetworkPeers.
	stub := pairs.Wrap(countingStub(simulator.Handler()), func(nodes []string) *pairs.Answer {
		a := pairs.Spread(nodes)
		return &a
	})
	srv := &http.Server{Handler: stub, ReadHeaderTimeout: 5 * time.Second}
	// The stub's goroutines carry a profiler label, so that a CPU profile
	// of a run (-perf-cpuprofile) tells its share from the scheduler's and
	// the API server's: pprof -tagfocus=kns3=stub.
	go pprof.Do(context.Background(), pprof.Labels("kns3", "stub"), func(context.Context) { _ = srv.Serve(ln) })
	defer srv.Close()
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		return 1
	}
	return m.Run()
}

// writeConfigs writes the kns-3-scheduler profile and the test cases that
// use it into dir, and returns the test cases' path.
func writeConfigs(dir string) (string, error) {
	profile, err := generated(DeployConfigPath, Profile)
	if err != nil {
		return "", err
	}
	noEvent, err := WithPostBind(profile, "")
	if err != nil {
		return "", err
	}
	noSink, err := WithPostBind(profile, NoSinkBindPlugin)
	if err != nil {
		return "", err
	}
	background, err := generated(ControlPlaneConfigPath, BackgroundProfile)
	if err != nil {
		return "", err
	}
	live, err := generated(LiveConfigPath, Profile)
	if err != nil {
		return "", err
	}
	liveNoPeers, err := WithoutPlugin(live, networkpeers.Name)
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{ProfileFile: profile, NoEventProfileFile: noEvent, NoSinkProfileFile: noSink,
		BackgroundProfileFile: background, LiveProfileFile: live, LiveNoPeersProfileFile: liveNoPeers} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	cases, err := os.ReadFile("performance-config.yaml")
	if err != nil {
		return "", err
	}
	if cases, err = PerformanceConfig(cases, dir); err != nil {
		return "", fmt.Errorf("performance-config.yaml: %w", err)
	}
	path := filepath.Join(dir, "performance-config.yaml")
	return path, os.WriteFile(path, cases, 0o644)
}

// generated reads the shipped configuration at path and returns the
// benchmark's, made from it by generate.
func generated(path string, generate func([]byte) ([]byte, error)) ([]byte, error) {
	shipped, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := generate(shipped)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// BenchmarkPerfScheduling runs the test cases with the plugins the
// kns-3-scheduler binary registers, the stub scoring every node, and
// meters the CPU time of each workload's measured pods (meter_test.go).
func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, perfConfig, "kns3", registry(b.Context()),
		perf.WithPreRunFn(rememberWorkload), perf.WithPrepareFn(prepare))
}

// prepare runs once the workload's scheduler runs, before its first op.
func prepare(tCtx ktesting.TContext) error {
	if err := scoreEveryNode(tCtx); err != nil {
		return err
	}
	return meterMeasuredPods(tCtx)
}

// scoreEveryNode keeps the stub's scenario naming every node of the test
// cluster, each with a stable score and bandwidth (which NetworkCapacity,
// in the live install's profile, ranks by), as the workload creates them;
// the stub gives each a coordinate (pairs.Spread) for NetworkPeers. The
// scenario is rebuilt at most every 200 ms, so creating 5000 nodes costs a
// few dozen rebuilds, and none happen while measured pods schedule.
func scoreEveryNode(tCtx ktesting.TContext) error {
	factory := informers.NewSharedInformerFactory(tCtx.Client(), 0)
	nodes := factory.Core().V1().Nodes()
	nodes.Informer()
	factory.Start(tCtx.Done())
	simulator.SetScenario(nil)
	go func() {
		defer factory.Shutdown()
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		served := -1
		for {
			select {
			case <-tCtx.Done():
				return
			case <-ticker.C:
			}
			list, err := nodes.Lister().List(labels.Everything())
			if err != nil || len(list) == served {
				continue
			}
			sc := &scenario.Scenario{Source: "perf", Nodes: make(map[string]scenario.Node, len(list))}
			for _, n := range list {
				score := stableScore(n.Name)
				bandwidth := 100 + 900*score
				sc.Nodes[n.Name] = scenario.Node{Score: &score, BandwidthMbps: &bandwidth}
			}
			simulator.SetScenario(sc)
			served = len(list)
		}
	}()
	return nil
}

// stableScore spreads scores over [0, 1) by the node's name.
func stableScore(name string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return float64(h.Sum32()%1000) / 1000
}

// ensureEtcd puts an etcd binary on PATH for the harness, built from the
// etcd server module this module already requires (the version Kubernetes
// v1.37.2's own tests run), unless one is there.
func ensureEtcd() error {
	if _, err := exec.LookPath("etcd"); err == nil {
		return nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	dir := filepath.Join(cache, "kns-3", "perf-bin")
	cmd := exec.CommandContext(context.Background(), "go", "build", "-o", filepath.Join(dir, "etcd"), "go.etcd.io/etcd/server/v3")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building etcd: %w\n%s", err, out)
	}
	return os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
