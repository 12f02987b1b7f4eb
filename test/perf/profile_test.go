package perf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"sigs.k8s.io/yaml"

	kns3config "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/customscore"
	"kns3.dev/kns3/scheduler/plugins/networkpeers"
)

// These tests run without the perf tag (go test ./..., Bazel): they keep
// the benchmark's profile and plugins those of the product.

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func unmarshal(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// withoutStub undoes Profile's one change to a configuration: the stub's
// simulatorURL, and the pluginConfig entry or list that held only it.
// NetworkPeers' simulatorURL, set to the stub's, is taken out (withoutPeersURL
// takes the shipped one out).
func withoutStub(t *testing.T, cfg map[string]any) {
	t.Helper()
	for _, p := range cfg["profiles"].([]any) {
		profile := p.(map[string]any)
		if profile["schedulerName"] != plugins.ProfileName {
			continue
		}
		var kept []any
		for _, pc := range profile["pluginConfig"].([]any) {
			entry := pc.(map[string]any)
			if entry["name"] == networkpeers.Name {
				args := entry["args"].(map[string]any)
				if args["simulatorURL"] != "http://"+SimulatorAddr {
					t.Errorf("%s simulatorURL = %v, want the stub's http://%s", networkpeers.Name, args["simulatorURL"], SimulatorAddr)
				}
				delete(args, "simulatorURL")
			}
			if entry["name"] == customscore.Name {
				args := entry["args"].(map[string]any)
				if args["simulatorURL"] != "http://"+SimulatorAddr {
					t.Errorf("%s simulatorURL = %v, want the stub's http://%s", customscore.Name, args["simulatorURL"], SimulatorAddr)
				}
				delete(args, "simulatorURL")
				if len(args) == 0 {
					continue
				}
			}
			kept = append(kept, entry)
		}
		if kept == nil {
			delete(profile, "pluginConfig")
		} else {
			profile["pluginConfig"] = kept
		}
	}
}

// withoutPeersURL takes NetworkPeers' simulatorURL out of a shipped
// configuration: the benchmark points it at the stub.
func withoutPeersURL(cfg map[string]any) map[string]any {
	for _, p := range cfg["profiles"].([]any) {
		pcs, _ := p.(map[string]any)["pluginConfig"].([]any)
		for _, pc := range pcs {
			if entry := pc.(map[string]any); entry["name"] == networkpeers.Name {
				delete(entry["args"].(map[string]any), "simulatorURL")
			}
		}
	}
	return cfg
}

// The benchmark's profiles are the shipped ones, the specification's and
// the live install's, but for the stub's address.
func TestProfileIsTheShippedOne(t *testing.T) {
	for _, path := range []string{DeployConfigPath, LiveConfigPath} {
		shipped := read(t, path)
		generated, err := Profile(shipped)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got := unmarshal(t, generated)
		withoutStub(t, got)
		if diff := cmp.Diff(withoutPeersURL(unmarshal(t, shipped)), got); diff != "" {
			t.Errorf("the benchmark's profile differs from %s in more than the stub's address (-shipped,+benchmark):\n%s", path, diff)
		}
	}
}

// The benchmark's Background profile is the one-scheduler install's but
// for the stub's address, and the client connection and leader election
// the harness replaces; it decodes and validates, in Background mode.
func TestBackgroundProfileIsTheInstalls(t *testing.T) {
	installed := read(t, ControlPlaneConfigPath)
	generated, err := BackgroundProfile(installed)
	if err != nil {
		t.Fatal(err)
	}
	got, want := unmarshal(t, generated), unmarshal(t, installed)
	withoutStub(t, got)
	delete(want, "clientConnection")
	delete(want, "leaderElection")
	for _, p := range want["profiles"].([]any) {
		pcs, _ := p.(map[string]any)["pluginConfig"].([]any)
		for _, pc := range pcs {
			if entry := pc.(map[string]any); entry["name"] == customscore.Name {
				delete(entry["args"].(map[string]any), "simulatorURL") // the install's, replaced
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the benchmark's Background profile differs from %s in more than the stub's address (-installed,+benchmark):\n%s", ControlPlaneConfigPath, diff)
	}
	profile := decodeProfile(t, generated)
	for _, pc := range profile.PluginConfig {
		if args, ok := pc.Args.(*kns3config.CustomScorePluginArgs); ok && args.RefreshMode != kns3config.RefreshBackground {
			t.Errorf("%s refreshMode %s, want Background", customscore.Name, args.RefreshMode)
		}
	}
}

func TestProfile(t *testing.T) {
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	for _, tt := range []struct {
		name, in, want, wantErr string
	}{
		{name: "no pluginConfig",
			in: head + "profiles:\n- schedulerName: kns-3-scheduler\n",
			want: head + "profiles:\n- schedulerName: kns-3-scheduler\n  pluginConfig:\n  - name: CustomScorePlugin\n" +
				"    args: {simulatorURL: 'http://127.0.0.1:18477'}\n"},
		{name: "shipped args are kept, the URL replaced",
			in: head + "profiles:\n- schedulerName: kns-3-scheduler\n  pluginConfig:\n  - name: CustomFilterPlugin\n    args: {x: 1}\n" +
				"  - name: CustomScorePlugin\n    args: {simulatorURL: 'http://127.0.0.1:80', retries: 2}\n",
			want: head + "profiles:\n- schedulerName: kns-3-scheduler\n  pluginConfig:\n  - name: CustomFilterPlugin\n    args: {x: 1}\n" +
				"  - name: CustomScorePlugin\n    args: {simulatorURL: 'http://127.0.0.1:18477', retries: 2}\n"},
		{name: "an entry without args",
			in:   head + "profiles:\n- schedulerName: kns-3-scheduler\n  pluginConfig:\n  - name: CustomScorePlugin\n",
			want: head + "profiles:\n- schedulerName: kns-3-scheduler\n  pluginConfig:\n  - name: CustomScorePlugin\n    args: {simulatorURL: 'http://127.0.0.1:18477'}\n"},
		{name: "other profiles are left alone",
			in: head + "profiles:\n- schedulerName: default-scheduler\n- schedulerName: kns-3-scheduler\n",
			want: head + "profiles:\n- schedulerName: default-scheduler\n- schedulerName: kns-3-scheduler\n  pluginConfig:\n  - name: CustomScorePlugin\n" +
				"    args: {simulatorURL: 'http://127.0.0.1:18477'}\n"},
		{name: "no kns-3-scheduler profile",
			in: head + "profiles:\n- schedulerName: default-scheduler\n", wantErr: "no kns-3-scheduler profile"},
		{name: "not a configuration", in: "- a\n", wantErr: "shipped scheduler configuration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Profile([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Profile error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(unmarshal(t, []byte(tt.want)), unmarshal(t, got)); diff != "" {
				t.Errorf("Profile (-want,+got):\n%s", diff)
			}
		})
	}
}

// loadProfile decodes, defaults and validates the benchmark's profile as
// scheduler_perf does.
func loadProfile(t *testing.T) *schedconfig.KubeSchedulerProfile {
	t.Helper()
	return loadProfileFrom(t, DeployConfigPath)
}

// loadProfileFrom is loadProfile for the shipped configuration at path.
func loadProfileFrom(t *testing.T, path string) *schedconfig.KubeSchedulerProfile {
	t.Helper()
	generated, err := Profile(read(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return decodeProfile(t, generated)
}

func decodeProfile(t *testing.T, generated []byte) *schedconfig.KubeSchedulerProfile {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(generated, nil, nil)
	if err != nil {
		t.Fatalf("decoding the benchmark's profile: %v", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("the benchmark's profile decodes to %T", obj)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("the benchmark's profile is invalid: %v", err)
	}
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == plugins.ProfileName {
			return &cfg.Profiles[i]
		}
	}
	t.Fatalf("the benchmark's configuration has no %s profile", plugins.ProfileName)
	return nil
}

func TestProfileLoads(t *testing.T) {
	profile := loadProfile(t)
	for _, pc := range profile.PluginConfig {
		if pc.Name != customscore.Name {
			continue
		}
		args, ok := pc.Args.(*kns3config.CustomScorePluginArgs)
		if !ok {
			t.Fatalf("%s args decode to %T", customscore.Name, pc.Args)
		}
		if want := "http://" + SimulatorAddr; args.SimulatorURL != want {
			t.Errorf("%s simulatorURL = %q, want %q", customscore.Name, args.SimulatorURL, want)
		}
		return
	}
	t.Errorf("the benchmark's profile configures no %s", customscore.Name)
}

func names(r frameworkruntime.Registry) []string {
	var n []string
	for name := range r {
		n = append(n, name)
	}
	sort.Strings(n)
	return n
}

// The benchmark registers plugins.Registry; the binary registers
// plugins.Options. They must be the same plugins, and the benchmark's
// profiles, the specification's and the live install's, must together
// enable every one of them and nothing else from outside the tree.
func TestPluginsAreTheBinarys(t *testing.T) {
	registry := plugins.Registry()
	fromOptions := frameworkruntime.Registry{}
	for _, opt := range plugins.Options() {
		if err := opt(fromOptions); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(names(registry), names(fromOptions)); diff != "" {
		t.Errorf("plugins.Options registers other plugins than plugins.Registry (-Registry,+Options):\n%s", diff)
	}

	enabled := map[string]bool{}
	inTree := intree.NewInTreeRegistry()
	for _, path := range []string{DeployConfigPath, LiveConfigPath} {
		sets := reflect.ValueOf(loadProfileFrom(t, path).Plugins).Elem()
		for i := 0; i < sets.NumField(); i++ {
			set, ok := sets.Field(i).Interface().(schedconfig.PluginSet)
			if !ok {
				continue
			}
			for _, p := range set.Enabled {
				if _, ok := inTree[p.Name]; !ok && registry[p.Name] == nil {
					t.Errorf("%s enables %s, which neither kube-scheduler nor plugins.Registry has", path, p.Name)
				}
				enabled[p.Name] = true
			}
		}
	}
	for _, name := range names(registry) {
		if !enabled[name] {
			t.Errorf("neither %s nor %s enables %s: the benchmark would not measure it", DeployConfigPath, LiveConfigPath, name)
		}
	}
}

type testCase struct {
	Name                   string `json:"name"`
	SchedulerConfigPath    string `json:"schedulerConfigPath"`
	DefaultPodTemplatePath string `json:"defaultPodTemplatePath"`
	WorkloadTemplate       []struct {
		Opcode          string `json:"opcode"`
		PodTemplatePath string `json:"podTemplatePath"`
		Namespace       string `json:"namespace"`
		CollectMetrics  bool   `json:"collectMetrics"`
	} `json:"workloadTemplate"`
}

func testCases(t *testing.T, data []byte) []testCase {
	t.Helper()
	var cases []testCase
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestWithPostBind: the profiles without the event and with its events
// dropped differ from the benchmark's profile in CustomBindPlugin at
// PostBind only.
func TestWithPostBind(t *testing.T) {
	generated, err := Profile(read(t, DeployConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, replacement := range []string{"", NoSinkBindPlugin} {
		variant, err := WithPostBind(generated, replacement)
		if err != nil {
			t.Fatal(err)
		}
		want := decodeProfile(t, generated)
		got := decodeProfile(t, variant)
		var postBind []schedconfig.Plugin
		replaced := false
		for _, p := range want.Plugins.PostBind.Enabled {
			if p.Name == custombind.Name {
				replaced = true
				if replacement == "" {
					continue
				}
				p = schedconfig.Plugin{Name: replacement}
			}
			postBind = append(postBind, p)
		}
		if !replaced {
			t.Fatalf("the benchmark's profile has no %s at PostBind: %+v", custombind.Name, want.Plugins.PostBind)
		}
		want.Plugins.PostBind.Enabled = postBind
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("WithPostBind(%q) changed more than PostBind (-want,+got):\n%s", replacement, diff)
		}
		if _, err := WithPostBind(variant, replacement); err == nil {
			t.Errorf("WithPostBind(%q) accepted a profile without CustomBindPlugin", replacement)
		}
	}
}

// TestWithoutPlugin: the live profile without NetworkPeers differs from
// the benchmark's live profile in NetworkPeers only.
func TestWithoutPlugin(t *testing.T) {
	generated, err := Profile(read(t, LiveConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	variant, err := WithoutPlugin(generated, networkpeers.Name)
	if err != nil {
		t.Fatal(err)
	}
	want, got := decodeProfile(t, generated), decodeProfile(t, variant)
	drop := func(set *schedconfig.PluginSet) {
		set.Enabled = slices.DeleteFunc(set.Enabled, func(p schedconfig.Plugin) bool { return p.Name == networkpeers.Name })
	}
	before := len(want.Plugins.PreScore.Enabled) + len(want.Plugins.Score.Enabled) + len(want.PluginConfig)
	drop(&want.Plugins.PreScore)
	drop(&want.Plugins.Score)
	want.PluginConfig = slices.DeleteFunc(want.PluginConfig, func(pc schedconfig.PluginConfig) bool { return pc.Name == networkpeers.Name })
	if after := len(want.Plugins.PreScore.Enabled) + len(want.Plugins.Score.Enabled) + len(want.PluginConfig); after != before-3 {
		t.Errorf("the live profile enables and configures %s in %d places, want preScore, score and pluginConfig", networkpeers.Name, before-after)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithoutPlugin changed more than %s (-want,+got):\n%s", networkpeers.Name, diff)
	}
	if _, err := WithoutPlugin(variant, networkpeers.Name); err == nil {
		t.Error("WithoutPlugin accepted a profile without the plugin")
	}
}

func TestPerformanceConfig(t *testing.T) {
	for _, f := range []string{ProfileFile, NoEventProfileFile, NoSinkProfileFile, BackgroundProfileFile, LiveProfileFile, LiveNoPeersProfileFile} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists (%v): the benchmark generates it from %s; a copy would drift", f, err, DeployConfigPath)
		}
	}
	original := read(t, "performance-config.yaml")
	const dir = "/tmp/perf run"
	rewritten, err := PerformanceConfig(original, dir)
	if err != nil {
		t.Fatal(err)
	}
	before, after := testCases(t, original), testCases(t, rewritten)
	if len(before) != len(after) {
		t.Fatalf("PerformanceConfig changed the number of test cases: %d, then %d", len(before), len(after))
	}
	uses, usesLive := 0, false
	for i, tc := range before {
		usesLive = usesLive || tc.SchedulerConfigPath == LiveProfileFile
		want := tc
		generated := tc.SchedulerConfigPath == ProfileFile || tc.SchedulerConfigPath == NoEventProfileFile || tc.SchedulerConfigPath == NoSinkProfileFile ||
			tc.SchedulerConfigPath == BackgroundProfileFile || tc.SchedulerConfigPath == LiveProfileFile || tc.SchedulerConfigPath == LiveNoPeersProfileFile
		if generated {
			want.SchedulerConfigPath = filepath.Join(dir, tc.SchedulerConfigPath)
			uses++
		}
		if diff := cmp.Diff(want, after[i]); diff != "" {
			t.Errorf("test case %s (-want,+got):\n%s", tc.Name, diff)
		}
		if !generated {
			continue
		}
		// The pods of a case on the kns-3-scheduler profile must ask for it.
		templates := []string{tc.DefaultPodTemplatePath}
		for _, op := range tc.WorkloadTemplate {
			templates = append(templates, op.PodTemplatePath)
		}
		for _, tmpl := range templates {
			if tmpl == "" {
				continue
			}
			var pod struct {
				Spec struct {
					SchedulerName string `json:"schedulerName"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(read(t, tmpl), &pod); err != nil {
				t.Fatal(err)
			}
			if pod.Spec.SchedulerName != plugins.ProfileName {
				t.Errorf("%s: %s asks for scheduler %q, want %s", tc.Name, tmpl, pod.Spec.SchedulerName, plugins.ProfileName)
			}
		}
	}
	if uses == 0 {
		t.Errorf("no test case of performance-config.yaml runs the kns-3-scheduler profile (schedulerConfigPath: %s)", ProfileFile)
	}
	if !usesLive {
		t.Errorf("no test case of performance-config.yaml runs the live install's profile (schedulerConfigPath: %s): NetworkCapacity goes unmeasured", LiveProfileFile)
	}

	// Section 1's CPU meter watches MeasuredNamespace alone.
	for _, tc := range before {
		if !strings.HasPrefix(tc.Name, "ProfileOverhead_") {
			continue
		}
		for _, op := range tc.WorkloadTemplate {
			if op.CollectMetrics && op.Namespace != MeasuredNamespace {
				t.Errorf("%s measures pods in namespace %q, want %q, where the CPU meter counts", tc.Name, op.Namespace, MeasuredNamespace)
			}
		}
	}

	if _, err := PerformanceConfig([]byte("- name: Default\n"), dir); err == nil {
		t.Error("PerformanceConfig accepted test cases that never use the profile")
	}
}
