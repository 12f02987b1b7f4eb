// Package perf benchmarks KNS-3 on upstream's scheduler_perf harness
// (perf_test.go, build tag perf; `make bench`). The kns-3-scheduler profile
// it runs is the shipped one, derived here; the plugins are the binary's
// (plugins.Registry).
package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"

	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/scheduler/plugins"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/customscore"
	"kns3.dev/kns3/scheduler/plugins/networkpeers"
)

const (
	// DeployConfigPath is the configuration the product ships, seen from
	// this directory (where go test and the benchmark run).
	DeployConfigPath = "../../deploy/scheduler-config.yaml"
	// ProfileFile is the name performance-config.yaml gives the
	// kns-3-scheduler profile as its schedulerConfigPath. No such file is
	// kept: the benchmark writes Profile's output at start.
	ProfileFile = "kns3-scheduler-config.yaml"
	// NoEventProfileFile is ProfileFile without CustomBindPlugin at
	// PostBind (WithPostBind): the same scheduling with no
	// placement event, to measure the event's cost side by side.
	NoEventProfileFile = "kns3-scheduler-config-noevent.yaml"
	// NoSinkProfileFile is ProfileFile with NoSinkBindPlugin at PostBind
	// in place of CustomBindPlugin: the placement events are made but not
	// written to the API server.
	NoSinkProfileFile = "kns3-scheduler-config-nosink.yaml"
	// ControlPlaneConfigPath is the one-scheduler install's configuration
	// (Background mode), seen from this directory.
	ControlPlaneConfigPath = "../../deploy/control-plane/scheduler-config.yaml"
	// BackgroundProfileFile is the one-scheduler install's configuration as
	// the benchmark runs it (BackgroundProfile): the kns-3-scheduler profile
	// in Background mode.
	BackgroundProfileFile = "kns3-scheduler-config-background.yaml"
	// NoSinkBindPlugin is the benchmark's CustomBindPlugin whose events
	// go to a sink that drops them (nosink_test.go).
	NoSinkBindPlugin = "CustomBindPluginNoSink"
	// LiveConfigPath is the live install's configuration (its
	// kns-3-scheduler profile adds NetworkCapacity), seen from this
	// directory.
	LiveConfigPath = "../../deploy/live/scheduler-config.yaml"
	// LiveProfileFile is the live install's configuration as the benchmark
	// runs it (Profile): PerCycle mode, NetworkCapacity ranking nodes by
	// the bandwidth the stub serves.
	LiveProfileFile = "kns3-scheduler-config-live.yaml"
	// LiveNoPeersProfileFile is LiveProfileFile without NetworkPeers
	// (WithoutPlugin): what the plugin costs pods that declare no peers.
	LiveNoPeersProfileFile = "kns3-scheduler-config-live-nopeers.yaml"
	// SimulatorAddr is where the benchmark serves the simulator stub.
	SimulatorAddr = "127.0.0.1:18477"
)

// Profile returns the shipped KubeSchedulerConfiguration (the content of
// deploy/scheduler-config.yaml) as the benchmark runs it. The only
// difference: in the kns-3-scheduler profile, CustomScorePlugin's args
// point simulatorURL at the stub on SimulatorAddr (a pluginConfig entry is
// added if the shipped one has none; its other args stay as shipped), and
// so do NetworkPeers', where the profile configures it. Everything else,
// plugins, weights and scheduler settings, is the shipped configuration's.
func Profile(deployConfig []byte) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.UnmarshalStrict(deployConfig, &cfg); err != nil {
		return nil, fmt.Errorf("the shipped scheduler configuration: %w", err)
	}
	profiles, _ := cfg["profiles"].([]any)
	var profile map[string]any
	for _, p := range profiles {
		if p, ok := p.(map[string]any); ok && p["schedulerName"] == plugins.ProfileName {
			profile = p
		}
	}
	if profile == nil {
		return nil, fmt.Errorf("the shipped scheduler configuration has no %s profile", plugins.ProfileName)
	}
	pluginConfig, _ := profile["pluginConfig"].([]any)
	var args map[string]any
	for _, pc := range pluginConfig {
		if pc, ok := pc.(map[string]any); ok && pc["name"] == networkpeers.Name {
			if peers, ok := pc["args"].(map[string]any); ok {
				peers["simulatorURL"] = "http://" + SimulatorAddr
			}
		}
		if pc, ok := pc.(map[string]any); ok && pc["name"] == customscore.Name {
			if pc["args"] == nil {
				pc["args"] = map[string]any{}
			}
			if args, ok = pc["args"].(map[string]any); !ok {
				return nil, fmt.Errorf("%s profile: %s args are %T, want a map", plugins.ProfileName, customscore.Name, pc["args"])
			}
		}
	}
	if args == nil {
		args = map[string]any{}
		profile["pluginConfig"] = append(pluginConfig, map[string]any{"name": customscore.Name, "args": args})
	}
	args["simulatorURL"] = "http://" + SimulatorAddr
	return yaml.Marshal(cfg)
}

// BackgroundProfile returns the one-scheduler install's configuration (the
// content of deploy/control-plane/scheduler-config.yaml) as the benchmark
// runs it: as Profile does, and without the install's client connection
// (a kubeconfig on the control-plane node) and leader election, which the
// harness replaces with its own client and a single scheduler.
func BackgroundProfile(controlPlaneConfig []byte) ([]byte, error) {
	out, err := Profile(controlPlaneConfig)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := yaml.UnmarshalStrict(out, &cfg); err != nil {
		return nil, err
	}
	delete(cfg, "clientConnection")
	delete(cfg, "leaderElection")
	return yaml.Marshal(cfg)
}

// WithPostBind returns Profile's output (profile) with CustomBindPlugin at
// the kns-3-scheduler profile's PostBind replaced by the plugin named
// replacement, or taken out when replacement is "" (then no pod gets a
// placement event); nothing else changes.
func WithPostBind(profile []byte, replacement string) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.UnmarshalStrict(profile, &cfg); err != nil {
		return nil, err
	}
	profiles, _ := cfg["profiles"].([]any)
	removed := false
	for _, p := range profiles {
		p, ok := p.(map[string]any)
		if !ok || p["schedulerName"] != plugins.ProfileName {
			continue
		}
		ps, _ := p["plugins"].(map[string]any)
		postBind, _ := ps["postBind"].(map[string]any)
		enabled, _ := postBind["enabled"].([]any)
		kept := enabled[:0:0]
		for _, e := range enabled {
			if m, ok := e.(map[string]any); ok && m["name"] == custombind.Name {
				removed = true
				if replacement == "" {
					continue
				}
				e = map[string]any{"name": replacement}
			}
			kept = append(kept, e)
		}
		if postBind != nil {
			postBind["enabled"] = kept
		}
	}
	if !removed {
		return nil, fmt.Errorf("the %s profile does not enable %s at postBind", plugins.ProfileName, custombind.Name)
	}
	return yaml.Marshal(cfg)
}

// WithoutPlugin returns Profile's output (profile) with plugin taken out
// of the kns-3-scheduler profile: from every extension point, and its
// pluginConfig; nothing else changes.
func WithoutPlugin(profile []byte, plugin string) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.UnmarshalStrict(profile, &cfg); err != nil {
		return nil, err
	}
	profiles, _ := cfg["profiles"].([]any)
	removed := false
	without := func(list []any) []any {
		kept := list[:0:0]
		for _, e := range list {
			if m, ok := e.(map[string]any); ok && m["name"] == plugin {
				removed = true
				continue
			}
			kept = append(kept, e)
		}
		return kept
	}
	for _, p := range profiles {
		p, ok := p.(map[string]any)
		if !ok || p["schedulerName"] != plugins.ProfileName {
			continue
		}
		ps, _ := p["plugins"].(map[string]any)
		for _, set := range ps {
			if set, ok := set.(map[string]any); ok {
				if enabled, ok := set["enabled"].([]any); ok {
					set["enabled"] = without(enabled)
				}
			}
		}
		if pcs, ok := p["pluginConfig"].([]any); ok {
			p["pluginConfig"] = without(pcs)
		}
	}
	if !removed {
		return nil, fmt.Errorf("the %s profile does not enable %s", plugins.ProfileName, plugin)
	}
	return yaml.Marshal(cfg)
}

// profileRef is a schedulerConfigPath naming one of the generated profiles.
var profileRef = regexp.MustCompile(`(?m)^([ \t]*schedulerConfigPath:[ \t]*)(` +
	regexp.QuoteMeta(ProfileFile) + `|` + regexp.QuoteMeta(NoEventProfileFile) + `|` + regexp.QuoteMeta(NoSinkProfileFile) + `|` +
	regexp.QuoteMeta(BackgroundProfileFile) + `|` + regexp.QuoteMeta(LiveProfileFile) + `|` + regexp.QuoteMeta(LiveNoPeersProfileFile) + `)[ \t]*$`)

// PerformanceConfig returns the test cases of performance-config.yaml
// (perfConfig) with each schedulerConfigPath that names ProfileFile,
// NoEventProfileFile, NoSinkProfileFile, BackgroundProfileFile,
// LiveProfileFile or LiveNoPeersProfileFile pointing
// at that file in dir instead, where the benchmark wrote them. Template paths stay relative to this directory.
func PerformanceConfig(perfConfig []byte, dir string) ([]byte, error) {
	if !bytes.Contains(perfConfig, []byte(ProfileFile)) || !profileRef.Match(perfConfig) {
		return nil, fmt.Errorf("no test case has schedulerConfigPath: %s", ProfileFile)
	}
	var err error
	out := profileRef.ReplaceAllFunc(perfConfig, func(line []byte) []byte {
		m := profileRef.FindSubmatch(line)
		// A JSON string is a YAML scalar, whatever the path holds.
		quoted, qerr := json.Marshal(filepath.Join(dir, string(m[2])))
		if qerr != nil {
			err = qerr
		}
		return append(bytes.Clone(m[1]), quoted...)
	})
	return out, err
}
