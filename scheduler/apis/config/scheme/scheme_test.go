package scheme_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	kubeschedulerconfigv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/scheduler/apis/config"
	_ "kns3.dev/kns3/scheduler/apis/config/scheme"
	configv1 "kns3.dev/kns3/scheduler/apis/config/v1"
	"kns3.dev/kns3/scheduler/apis/config/validation"
)

const pluginName = "CustomScorePlugin"

// shippedConfig is the configuration the product ships.
const shippedConfig = "../../../../deploy/scheduler-config.yaml"

// profile is a KNS-3 profile; pluginConfig, when set, is its pluginConfig
// entry for CustomScorePlugin.
func profile(pluginConfig string) string {
	p := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: kns-3-scheduler
    plugins:
      preScore:
        enabled:
          - name: CustomScorePlugin
      score:
        enabled:
          - name: CustomScorePlugin
            weight: 10
`
	if pluginConfig != "" {
		p += "    pluginConfig:\n      - name: CustomScorePlugin\n"
		for _, line := range strings.Split(strings.TrimSpace(pluginConfig), "\n") {
			p += "        " + line + "\n"
		}
	}
	return p
}

// withArgs is a profile whose CustomScorePlugin args are args (YAML).
func withArgs(args string) string {
	indented := ""
	for _, line := range strings.Split(strings.TrimSpace(args), "\n") {
		indented += "  " + line + "\n"
	}
	return profile("args:\n" + indented)
}

// decode decodes a configuration file as the scheduler does.
func decode(t *testing.T, data string) (*kubeschedulerconfig.KubeSchedulerConfiguration, error) {
	t.Helper()
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*kubeschedulerconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded %T, want *KubeSchedulerConfiguration", obj)
	}
	return cfg, nil
}

// scoreArgs returns the args of CustomScorePlugin in the profile named
// kns-3-scheduler.
func scoreArgs(t *testing.T, cfg *kubeschedulerconfig.KubeSchedulerConfiguration) *config.CustomScorePluginArgs {
	t.Helper()
	for _, p := range cfg.Profiles {
		if p.SchedulerName != "kns-3-scheduler" {
			continue
		}
		for _, pc := range p.PluginConfig {
			if pc.Name == pluginName {
				args, ok := pc.Args.(*config.CustomScorePluginArgs)
				if !ok {
					t.Fatalf("%s args are %T, want *config.CustomScorePluginArgs", pluginName, pc.Args)
				}
				return args
			}
		}
		t.Fatalf("profile kns-3-scheduler has no pluginConfig for %s: %+v", pluginName, p.PluginConfig)
	}
	t.Fatal("no profile kns-3-scheduler")
	return nil
}

func d(s string) metav1.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return metav1.Duration{Duration: v}
}

// defaults are the internal args of an empty pluginConfig entry.
func defaults() *config.CustomScorePluginArgs {
	return &config.CustomScorePluginArgs{
		SimulatorURL:            "http://127.0.0.1:80",
		Timeout:                 d("5s"),
		Retries:                 2,
		RetryDelay:              d("100ms"),
		MaxBodyBytes:            8 << 20,
		BreakerFailureThreshold: 5,
		BreakerCooldown:         d("1s"),
		BreakerLatencyBudget:    d("1s"),
		RefreshMode:             config.RefreshPerCycle,
		RefreshInterval:         d("1s"),
		MaxSimulationAge:        d("10s"),
		Normalization:           config.NormalizationMinMax,
		DriftMarginMilli:        200,
	}
}

func TestDecodeDefaultsArgs(t *testing.T) {
	withDefaults := func(change func(*config.CustomScorePluginArgs)) *config.CustomScorePluginArgs {
		a := defaults()
		change(a)
		return a
	}
	tests := map[string]struct {
		config string
		want   *config.CustomScorePluginArgs
	}{
		"no pluginConfig": {
			config: profile(""),
			want:   defaults(),
		},
		"enabled through multiPoint, no pluginConfig": {
			config: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kns-3-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: CustomScorePlugin
`,
			want: defaults(),
		},
		"empty args": {
			config: withArgs("{}"),
			want:   defaults(),
		},
		"pluginConfig entry without args": {
			config: profile("args:"),
			want:   defaults(),
		},
		"some fields": {
			config: withArgs("simulatorURL: http://simulator.kns-3.svc:8080\nretries: 0\nretryDelay: 0s"),
			want: withDefaults(func(a *config.CustomScorePluginArgs) {
				a.SimulatorURL, a.Retries, a.RetryDelay = "http://simulator.kns-3.svc:8080", 0, d("0s")
			}),
		},
		"every field": {
			config: withArgs(`
simulatorURL: http://sim.kns-3.svc:8080/api/
timeout: 250ms
retries: 0
retryDelay: 0s
maxBodyBytes: 2048
breakerFailureThreshold: 1
breakerCooldown: 1m
breakerLatencyBudget: 200ms
refreshMode: Background
refreshInterval: 2s
maxSimulationAge: 30s
normalization: Absolute
driftMarginMilli: 0
`),
			want: &config.CustomScorePluginArgs{
				SimulatorURL:            "http://sim.kns-3.svc:8080/api/",
				Timeout:                 d("250ms"),
				Retries:                 0,
				RetryDelay:              d("0s"),
				MaxBodyBytes:            2048,
				BreakerFailureThreshold: 1,
				BreakerCooldown:         d("1m"),
				BreakerLatencyBudget:    d("200ms"),
				RefreshMode:             config.RefreshBackground,
				RefreshInterval:         d("2s"),
				MaxSimulationAge:        d("30s"),
				Normalization:           config.NormalizationAbsolute,
			},
		},
		"args with apiVersion and kind": {
			config: withArgs("apiVersion: kubescheduler.config.k8s.io/v1\nkind: CustomScorePluginArgs\nrefreshMode: Background"),
			want:   withDefaults(func(a *config.CustomScorePluginArgs) { a.RefreshMode = config.RefreshBackground }),
		},
		"JSON configuration": {
			config: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",
"profiles":[{"schedulerName":"kns-3-scheduler","plugins":{"score":{"enabled":[{"name":"CustomScorePlugin"}]}},
"pluginConfig":[{"name":"CustomScorePlugin","args":{"simulatorURL":"https://10.0.0.1","retries":4}}]}]}`,
			want: withDefaults(func(a *config.CustomScorePluginArgs) { a.SimulatorURL, a.Retries = "https://10.0.0.1", 4 }),
		},
		"second profile": {
			config: profile("args:\n  retries: 3") + `  - schedulerName: other
    plugins:
      score:
        enabled:
          - name: CustomScorePlugin
    pluginConfig:
      - name: CustomScorePlugin
        args:
          retries: 4
`,
			want: withDefaults(func(a *config.CustomScorePluginArgs) { a.Retries = 3 }),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := decode(t, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			got := scoreArgs(t, cfg)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
			if err := validation.ValidateCustomScorePluginArgs(field.NewPath("args"), got); err != nil {
				t.Errorf("defaulted args do not validate: %v", err)
			}
		})
	}
}

// The shipped configuration, through the scheduler's own loader.
func TestLoadShippedConfig(t *testing.T) {
	cfg, err := options.LoadConfigFromFile(klog.Background(), shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaults(), scoreArgs(t, cfg)); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

// The scheduler shows its configuration as /configz (the internal
// configuration as JSON) and as --write-config-to and -v=2 (encoded back to
// v1): both must show the defaulted args.
func TestEncodeShowsDefaultedArgs(t *testing.T) {
	cfg, err := decode(t, withArgs("refreshMode: Background"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"simulatorURL":            "http://127.0.0.1:80",
		"timeout":                 "5s",
		"retries":                 float64(2),
		"retryDelay":              "100ms",
		"maxBodyBytes":            float64(8 << 20),
		"breakerFailureThreshold": float64(5),
		"breakerCooldown":         "1s",
		"breakerLatencyBudget":    "1s",
		"driftMarginMilli":        float64(200),
		"refreshMode":             "Background",
		"refreshInterval":         "1s",
		"maxSimulationAge":        "10s",
		"normalization":           "MinMax",
	}

	t.Run("configz", func(t *testing.T) {
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Profiles []struct {
				SchedulerName string
				PluginConfig  []struct {
					Name string
					Args map[string]any
				}
			}
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		for _, pc := range got.Profiles[0].PluginConfig {
			if pc.Name == pluginName {
				if diff := cmp.Diff(want, pc.Args); diff != "" {
					t.Errorf("(-want,+got):\n%s", diff)
				}
				return
			}
		}
		t.Fatalf("no %s in %s", pluginName, data)
	})

	t.Run("v1", func(t *testing.T) {
		// As the scheduler's --write-config-to encodes it.
		info, ok := runtime.SerializerInfoForMediaType(kubeschedulerscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
		if !ok {
			t.Fatal("no YAML serializer")
		}
		encoder := kubeschedulerscheme.Codecs.EncoderForVersion(info.Serializer, kubeschedulerconfigv1.SchemeGroupVersion)
		var buf bytes.Buffer
		if err := encoder.Encode(cfg, &buf); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Profiles []struct {
				PluginConfig []struct {
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				} `json:"pluginConfig"`
			} `json:"profiles"`
		}
		if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		wantV1 := map[string]any{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "CustomScorePluginArgs"}
		for k, v := range want {
			wantV1[k] = v
		}
		found := false
		for _, pc := range got.Profiles[0].PluginConfig {
			if pc.Name == pluginName {
				found = true
				if diff := cmp.Diff(wantV1, pc.Args); diff != "" {
					t.Errorf("(-want,+got):\n%s", diff)
				}
			}
		}
		if !found {
			t.Fatalf("no %s in\n%s", pluginName, buf.String())
		}
		// What was written loads back to the same configuration.
		again, err := decode(t, buf.String())
		if err != nil {
			t.Fatalf("decoding the encoded configuration: %v\n%s", err, buf.String())
		}
		if diff := cmp.Diff(scoreArgs(t, cfg), scoreArgs(t, again)); diff != "" {
			t.Errorf("round trip (-want,+got):\n%s", diff)
		}
	})
}

// Every bad configuration fails with the offending field named: a decoding
// error when the scheduler loads the file, a validation error when the
// plugin starts.
func TestBadArgsNameTheField(t *testing.T) {
	tests := map[string]struct {
		config string
		want   []string
		// decodeErr says the file does not even decode; the scheduler then
		// names the plugin too.
		decodeErr bool
	}{
		"bad URL":                    {config: withArgs(`simulatorURL: "http://[::1"`), want: []string{"args.simulatorURL"}},
		"URL without scheme":         {config: withArgs(`simulatorURL: 127.0.0.1:80`), want: []string{"args.simulatorURL"}},
		"ftp URL":                    {config: withArgs(`simulatorURL: ftp://127.0.0.1`), want: []string{"args.simulatorURL", "scheme must be http or https"}},
		"URL without host":           {config: withArgs(`simulatorURL: "http://"`), want: []string{"args.simulatorURL", "host"}},
		"URL with query":             {config: withArgs(`simulatorURL: "http://a/?x=1"`), want: []string{"args.simulatorURL", "query"}},
		"negative timeout":           {config: withArgs(`timeout: -1s`), want: []string{"args.timeout", "greater than 0"}},
		"zero timeout":               {config: withArgs(`timeout: 0s`), want: []string{"args.timeout"}},
		"huge timeout":               {config: withArgs(`timeout: 10m`), want: []string{"args.timeout"}},
		"negative retries":           {config: withArgs(`retries: -1`), want: []string{"args.retries"}},
		"too many retries":           {config: withArgs(`retries: 100`), want: []string{"args.retries"}},
		"negative delay":             {config: withArgs(`retryDelay: -5ms`), want: []string{"args.retryDelay"}},
		"tiny body limit":            {config: withArgs(`maxBodyBytes: 10`), want: []string{"args.maxBodyBytes"}},
		"zero threshold":             {config: withArgs(`breakerFailureThreshold: 0`), want: []string{"args.breakerFailureThreshold"}},
		"zero cooldown":              {config: withArgs(`breakerCooldown: 0s`), want: []string{"args.breakerCooldown"}},
		"unknown mode":               {config: withArgs(`refreshMode: Sometimes`), want: []string{"args.refreshMode", `"PerCycle"`, `"Background"`}},
		"mode case":                  {config: withArgs(`refreshMode: background`), want: []string{"args.refreshMode"}},
		"zero interval":              {config: withArgs(`refreshInterval: 0s`), want: []string{"args.refreshInterval"}},
		"age under interval":         {config: withArgs("refreshMode: Background\nrefreshInterval: 5s\nmaxSimulationAge: 2s"), want: []string{"args.maxSimulationAge", "at least refreshInterval + timeout (10s)"}},
		"default age under interval": {config: withArgs("refreshMode: Background\nrefreshInterval: 6s"), want: []string{"args.maxSimulationAge", "at least refreshInterval + timeout (11s)"}},
		"two errors at once":         {config: withArgs("timeout: -1s\nretries: -1"), want: []string{"args.timeout", "args.retries"}},
		"misspelt field":             {config: withArgs(`simulatorAddress: http://x`), want: []string{`unknown field "simulatorAddress"`, pluginName}, decodeErr: true},
		"field name case":            {config: withArgs(`simulatorUrl: http://x`), want: []string{`unknown field "simulatorUrl"`, pluginName}, decodeErr: true},
		"duration not parsed":        {config: withArgs(`timeout: five`), want: []string{"args.timeout", `Invalid value: "five"`, "invalid duration", pluginName}, decodeErr: true},
		"bad duration":               {config: withArgs("retries: 1\nrefreshInterval: 5x"), want: []string{"args.refreshInterval", `Invalid value: "5x"`, `unknown unit "x"`, pluginName}, decodeErr: true},
		"number not parsed":          {config: withArgs(`retries: two`), want: []string{"args.retries", pluginName}, decodeErr: true},
		"duplicate field":            {config: withArgs("retries: 1\nretries: 2"), want: []string{`"retries" already set`}, decodeErr: true},
		"duplicate field in JSON": {
			config: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",
"profiles":[{"schedulerName":"kns-3-scheduler","pluginConfig":[{"name":"CustomScorePlugin","args":{"retries":1,"retries":2}}]}]}`,
			want:      []string{`duplicate field "retries"`, pluginName},
			decodeErr: true,
		},
		"misspelt field in JSON": {
			config: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",
"profiles":[{"schedulerName":"kns-3-scheduler","pluginConfig":[{"name":"CustomScorePlugin","args":{"simulatorAddress":"x"}}]}]}`,
			want:      []string{`unknown field "simulatorAddress"`, pluginName},
			decodeErr: true,
		},
		"args of another kind": {
			config:    withArgs("apiVersion: kubescheduler.config.k8s.io/v1\nkind: DefaultPreemptionArgs"),
			want:      []string{pluginName, "CustomScorePluginArgs", "DefaultPreemptionArgs"},
			decodeErr: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := decode(t, tt.config)
			if (err != nil) != tt.decodeErr {
				t.Fatalf("decoding error %v, want one: %v", err, tt.decodeErr)
			}
			if err == nil {
				err = validation.ValidateCustomScorePluginArgs(field.NewPath("args"), scoreArgs(t, cfg))
				if err == nil {
					t.Fatal("want a validation error")
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func Example_badDuration() {
	_, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(withArgs("timeout: 5x")), nil, nil)
	fmt.Println(err)
	// Output: decoding .profiles[0].pluginConfig[0]: decoding args for plugin CustomScorePlugin: args.timeout: Invalid value: "5x": time: unknown unit "x" in duration "5x"
}

// NetworkCapacity's args decode from a profile's pluginConfig, take their
// defaults, and fail on an unknown field or a value of the wrong form with
// the field named.
func TestNetworkCapacityArgsDecode(t *testing.T) {
	cfgOf := func(args string) string {
		return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kns-3-scheduler
    pluginConfig:
      - name: NetworkCapacity
        args: ` + args + "\n"
	}
	argsOf := func(t *testing.T, cfg *kubeschedulerconfig.KubeSchedulerConfiguration) *config.NetworkCapacityArgs {
		t.Helper()
		for _, pc := range cfg.Profiles[0].PluginConfig {
			if a, ok := pc.Args.(*config.NetworkCapacityArgs); ok {
				return a
			}
		}
		t.Fatalf("no NetworkCapacityArgs in %+v", cfg.Profiles[0].PluginConfig)
		return nil
	}
	for _, tc := range []struct {
		args       string
		want       int64
		wantTarget int32
		wantErr    string
	}{
		{args: "{}", want: 10, wantTarget: 80},
		{args: "{defaultPodMbps: 25, targetUtilizationPercent: 100}", want: 25, wantTarget: 100},
		{args: "{defaultPodMbit: 25}", wantErr: "defaultPodMbit"},
		{args: `{defaultPodMbps: "25M"}`, wantErr: "defaultPodMbps"},
		{args: "{targetUtilizationPercent: 0.8}", wantErr: "targetUtilizationPercent"},
	} {
		cfg, err := decode(t, cfgOf(tc.args))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one naming %s", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if got := argsOf(t, cfg); got.DefaultPodMbps != tc.want || got.TargetUtilizationPercent != tc.wantTarget {
			t.Errorf("%s: defaultPodMbps %d, targetUtilizationPercent %d, want %d and %d",
				tc.args, got.DefaultPodMbps, got.TargetUtilizationPercent, tc.want, tc.wantTarget)
		}
	}
	if err := validation.ValidateNetworkCapacityArgs(field.NewPath("args"), &config.NetworkCapacityArgs{DefaultPodMbps: -3}); err == nil ||
		!strings.Contains(err.Error(), "args.defaultPodMbps") {
		t.Errorf("validating defaultPodMbps -3: %v, want an error naming args.defaultPodMbps", err)
	}
}

// NetworkPeers' args decode from a profile's pluginConfig, take
// CustomScorePlugin's default simulator, and fail on an unknown field or a
// bad URL with the field named.
func TestNetworkPeersArgsDecode(t *testing.T) {
	cfgOf := func(args string) string {
		return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kns-3-scheduler
    pluginConfig:
      - name: NetworkPeers
        args: ` + args + "\n"
	}
	for _, tc := range []struct {
		args, want, wantErr string
	}{
		{args: "{}", want: configv1.DefaultSimulatorURL},
		{args: "{simulatorURL: http://127.0.0.1:10271}", want: "http://127.0.0.1:10271"},
		{args: "{simulatorUrl: http://127.0.0.1:10271}", wantErr: "simulatorUrl"},
		{args: "{simulatorURL: 3}", wantErr: "simulatorURL"},
	} {
		cfg, err := decode(t, cfgOf(tc.args))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one naming %s", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		var got *config.NetworkPeersArgs
		for _, pc := range cfg.Profiles[0].PluginConfig {
			if a, ok := pc.Args.(*config.NetworkPeersArgs); ok {
				got = a
			}
		}
		if got == nil || got.SimulatorURL != tc.want {
			t.Errorf("%s: args %+v, want simulatorURL %s", tc.args, got, tc.want)
		}
	}
}

// The live installs' configurations, through the scheduler's own loader:
// NetworkCapacity's args as they set them, NetworkPeers' simulator
// CustomScorePlugin's, and their weights against CustomScorePlugin's.
func TestLoadLiveConfig(t *testing.T) {
	for _, path := range []string{"../../../../deploy/live/scheduler-config.yaml", "../../../../deploy/live/control-plane/scheduler-config.yaml"} {
		t.Run(path, func(t *testing.T) {
			cfg, err := options.LoadConfigFromFile(klog.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			var profile *kubeschedulerconfig.KubeSchedulerProfile
			for i := range cfg.Profiles {
				if cfg.Profiles[i].SchedulerName == "kns-3-scheduler" {
					profile = &cfg.Profiles[i]
				}
			}
			if profile == nil {
				t.Fatal("no kns-3-scheduler profile")
			}
			weights := map[string]int32{}
			for _, p := range profile.Plugins.Score.Enabled {
				weights[p.Name] = p.Weight
			}
			if weights["NetworkCapacity"] != 2*weights["CustomScorePlugin"] || weights["NetworkPeers"] != 2*weights["CustomScorePlugin"] ||
				weights["CustomScorePlugin"] == 0 {
				t.Errorf("score weights %v, want NetworkCapacity and NetworkPeers at twice CustomScorePlugin's", weights)
			}
			var capacity *config.NetworkCapacityArgs
			var peers *config.NetworkPeersArgs
			var score *config.CustomScorePluginArgs
			for _, pc := range profile.PluginConfig {
				switch a := pc.Args.(type) {
				case *config.NetworkCapacityArgs:
					capacity = a
				case *config.NetworkPeersArgs:
					peers = a
				case *config.CustomScorePluginArgs:
					score = a
				}
			}
			switch {
			case capacity == nil || peers == nil || score == nil:
				t.Errorf("pluginConfig %+v, want args of CustomScorePlugin, NetworkCapacity and NetworkPeers", profile.PluginConfig)
			case capacity.DefaultPodMbps != 10 || capacity.TargetUtilizationPercent != 80:
				t.Errorf("args %+v, want defaultPodMbps 10 and targetUtilizationPercent 80", *capacity)
			case peers.SimulatorURL != score.SimulatorURL:
				t.Errorf("NetworkPeers tells %s which pairs matter, CustomScorePlugin asks %s", peers.SimulatorURL, score.SimulatorURL)
			}
		})
	}
}
