package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/pflag"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/configz"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/features"
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/customscore"
	"kns3.dev/kns3/scheduler/plugins/networkcapacity"
	"kns3.dev/kns3/scheduler/plugins/networkpeers"
	"kns3.dev/kns3/test/pairs"
)

// configPath is the configuration the product ships; controlPlaneConfig
// the one-scheduler install's, and liveControlPlaneConfig that install's
// with live measurements (NetworkCapacity and NetworkPeers in its profile).
const (
	configPath             = "../../deploy/scheduler-config.yaml"
	controlPlaneConfig     = "../../deploy/control-plane/scheduler-config.yaml"
	liveControlPlaneConfig = "../../deploy/live/control-plane/scheduler-config.yaml"
	// liveConfig is the live install's, with NetworkCapacity and
	// NetworkPeers.
	liveConfig = "../../deploy/live/scheduler-config.yaml"
)

func init() {
	// Several schedulers start in one process, one after another.
	logsapi.ReapplyHandling = logsapi.ReapplyHandlingIgnoreUnchanged
}

type schedulerOptions struct {
	fastPath bool
	// scoreArgs are CustomScorePlugin's pluginConfig args; the simulator URL is added.
	scoreArgs map[string]any
	// clientQPS, when set, raises the scheduler's API client limits (qps,
	// burst 2×) above the shipped 50/100, as scheduler_perf does for bursts.
	clientQPS int
	// config is the shipped configuration to start from; empty: configPath.
	config string
	// withCapacity adds NetworkCapacity to the kns-3-scheduler profile, after
	// CustomScorePlugin at preScore and at score with weight 10, as the live
	// install's profile has it.
	withCapacity bool
	// withCapacityFilter also enables NetworkCapacity at preFilter (after
	// CustomScorePlugin) and at filter: the opt-in filter.
	withCapacityFilter bool
	// pairs gives the simulator stub's answers their pairs key, for the
	// nodes each names; nil: none. A NetworkPeers of the configuration
	// tells the stub which pairs matter.
	pairs func(nodes []string) *pairs.Answer
}

// startScheduler runs kns-3-scheduler in the test process: the upstream
// kube-scheduler app with the KNS-3 plugins, started from flags as the binary
// is, with deploy/scheduler-config.yaml plus the test's kubeconfig and the
// CustomScorePlugin args pointing at the simulator stub.
func startScheduler(t testing.TB, cp *controlPlane, simulatorURL string, so schedulerOptions) {
	t.Helper()
	cfgFile := writeSchedulerConfig(t, cp.kubeconfig, simulatorURL, so)

	// A private copy of the feature gates, as upstream's scheduler test server does,
	// so that each test sets InterPodAffinityHostnameFastPath through the real flag.
	featureGate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	effectiveVersion := utilcompatibility.DefaultKubeEffectiveVersionForTest()
	registry := compatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(compatibility.DefaultKubeComponent, effectiveVersion, featureGate); err != nil {
		t.Fatal(err)
	}
	opts := options.NewOptionsWithComponentGlobalsRegistry(registry)
	fs := pflag.NewFlagSet("kns-3-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	args := []string{
		"--config=" + cfgFile,
		"--secure-port=0", // no serving: tests read metrics from the registry
		fmt.Sprintf("--feature-gates=%s=%t", features.InterPodAffinityHostnameFastPath, so.fastPath),
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := registry.Set(); err != nil {
		t.Fatal(err)
	}
	// Plugins read gates from the process-wide default gate: carry the flag's values there.
	overrides := featuregatetesting.FeatureOverrides{}
	for f := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		if featureGate.Enabled(f) != utilfeature.DefaultFeatureGate.Enabled(f) {
			overrides[f] = featureGate.Enabled(f)
		}
	}
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, overrides)
	if got := utilfeature.DefaultFeatureGate.Enabled(features.InterPodAffinityHostnameFastPath); got != so.fastPath {
		t.Fatalf("%s = %t, want %t", features.InterPodAffinityHostnameFastPath, got, so.fastPath)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cc, sched, err := app.Setup(ctx, opts, plugins.Options()...)
	if err != nil {
		cancel()
		t.Fatalf("scheduler set-up: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cc, sched) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Logf("scheduler stopped: %v", err)
		}
		configz.Delete("componentconfig")
	})
}

func writeSchedulerConfig(t testing.TB, kubeconfig, simulatorURL string, so schedulerOptions) string {
	t.Helper()
	path := so.config
	if path == "" {
		path = configPath
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	conn := map[string]any{"kubeconfig": kubeconfig}
	if so.clientQPS > 0 {
		conn["qps"], conn["burst"] = so.clientQPS, 2*so.clientQPS
	}
	cfg["clientConnection"] = conn
	// A scheduler that loses (or gives up) its lease exits the process, as
	// upstream's does: tests stop theirs by cancelling it.
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	var profile map[string]any
	for _, p := range cfg["profiles"].([]any) {
		if p := p.(map[string]any); p["schedulerName"] == plugins.ProfileName {
			profile = p
		}
	}
	if profile == nil {
		t.Fatalf("%s: no profile %s", path, plugins.ProfileName)
	}
	if so.withCapacity {
		addCapacity(t, profile, so.withCapacityFilter)
	}
	// The shipped args, then the test's, then the stub's address; the
	// other plugins' args as shipped.
	args := map[string]any{}
	others := []any{}
	if pcs, ok := profile["pluginConfig"].([]any); ok {
		for _, pc := range pcs {
			pc := pc.(map[string]any)
			if args, ok := pc["args"].(map[string]any); ok && pc["name"] == networkpeers.Name {
				args["simulatorURL"] = simulatorURL
			}
			if pc["name"] != customscore.Name {
				others = append(others, pc)
				continue
			}
			if shipped, ok := pc["args"].(map[string]any); ok {
				args = shipped
			}
		}
	}
	for k, v := range so.scoreArgs {
		args[k] = v
	}
	args["simulatorURL"] = simulatorURL
	profile["pluginConfig"] = append(others, map[string]any{"name": customscore.Name, "args": args})
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(written, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return written
}

// addCapacity enables NetworkCapacity in profile as withCapacity and
// withCapacityFilter say.
func addCapacity(t testing.TB, profile map[string]any, filter bool) {
	t.Helper()
	ps, _ := profile["plugins"].(map[string]any)
	points := map[string]map[string]any{
		"preScore": {"name": networkcapacity.Name},
		"score":    {"name": networkcapacity.Name, "weight": 10},
	}
	if filter {
		points["preFilter"] = map[string]any{"name": networkcapacity.Name}
		points["filter"] = map[string]any{"name": networkcapacity.Name}
		// The filter reads the simulation CustomScorePlugin's PreFilter
		// holds: a profile without it there (the specification's) gets it.
		set, _ := ps["preFilter"].(map[string]any)
		if set == nil {
			set = map[string]any{}
			ps["preFilter"] = set
		}
		enabled, _ := set["enabled"].([]any)
		if !slices.ContainsFunc(enabled, func(e any) bool { m, _ := e.(map[string]any); return m["name"] == customscore.Name }) {
			set["enabled"] = append(enabled, map[string]any{"name": customscore.Name})
		}
	}
	for point, entry := range points {
		set, _ := ps[point].(map[string]any)
		enabled, _ := set["enabled"].([]any)
		if set == nil || len(enabled) == 0 {
			t.Fatalf("profile %s enables nothing at %s to add %s after", plugins.ProfileName, point, networkcapacity.Name)
		}
		set["enabled"] = append(enabled, entry)
	}
}

// featureName keeps the gate's name in test names readable.
func featureName(on bool) string {
	if on {
		return string(features.InterPodAffinityHostnameFastPath) + "=true"
	}
	return string(features.InterPodAffinityHostnameFastPath) + "=false"
}
