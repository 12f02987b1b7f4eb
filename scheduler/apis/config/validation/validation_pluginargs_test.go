package validation

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kns3.dev/kns3/scheduler/apis/config"
)

// valid returns defaulted args, then changed by change.
func valid(change func(*config.CustomScorePluginArgs)) *config.CustomScorePluginArgs {
	a := &config.CustomScorePluginArgs{
		SimulatorURL:            "http://127.0.0.1:80",
		Timeout:                 metav1.Duration{Duration: 5 * time.Second},
		Retries:                 2,
		RetryDelay:              metav1.Duration{Duration: 100 * time.Millisecond},
		MaxBodyBytes:            8 << 20,
		BreakerFailureThreshold: 5,
		BreakerCooldown:         metav1.Duration{Duration: time.Second},
		BreakerLatencyBudget:    metav1.Duration{Duration: time.Second},
		RefreshMode:             config.RefreshPerCycle,
		RefreshInterval:         metav1.Duration{Duration: time.Second},
		MaxSimulationAge:        metav1.Duration{Duration: 10 * time.Second},
		Normalization:           config.NormalizationMinMax,
	}
	if change != nil {
		change(a)
	}
	return a
}

func TestValidateCustomScorePluginArgs(t *testing.T) {
	tests := map[string]struct {
		args *config.CustomScorePluginArgs
		// want are substrings of the error; none means valid.
		want []string
	}{
		"defaults": {args: valid(nil)},
		"https URL with a path": {args: valid(func(a *config.CustomScorePluginArgs) {
			a.SimulatorURL = "https://sim.kns-3.svc:8443/api/"
		})},
		"limits": {args: valid(func(a *config.CustomScorePluginArgs) {
			a.Timeout.Duration, a.Retries, a.RetryDelay.Duration, a.MaxBodyBytes = time.Minute, 10, 0, 1024
			a.BreakerFailureThreshold, a.RefreshMode = 1, config.RefreshBackground
			a.RefreshInterval.Duration, a.MaxSimulationAge.Duration = 2*time.Second, 62*time.Second
		})},
		"upper limits": {args: valid(func(a *config.CustomScorePluginArgs) {
			a.MaxBodyBytes, a.BreakerCooldown.Duration, a.BreakerLatencyBudget.Duration = 1<<30, 5*time.Minute, 30*time.Second
			a.RefreshInterval.Duration, a.MaxSimulationAge.Duration = 10*time.Minute, 11*time.Minute
		})},
		// (2+1)×9.9s + 2×100ms = 29.9s
		"cycle budget at the limit": {args: valid(func(a *config.CustomScorePluginArgs) { a.Timeout.Duration = 9900 * time.Millisecond })},
		"cycle budget over the limit": {
			args: valid(func(a *config.CustomScorePluginArgs) {
				a.Retries, a.Timeout.Duration, a.RetryDelay.Duration = 10, 5*time.Second, 5*time.Second
			}),
			want: []string{"args.retries", "= 1m45s for the simulator, over the 30s"},
		},
		"long retry delay": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Retries, a.RetryDelay.Duration = 1, 10*time.Minute }),
			want: []string{"args.retryDelay", "must be between 0 and timeout (5s)"},
		},
		"Background mode waits for no cycle budget": {args: valid(func(a *config.CustomScorePluginArgs) {
			a.RefreshMode, a.Retries, a.Timeout.Duration, a.MaxSimulationAge.Duration = config.RefreshBackground, 10, time.Minute, 2*time.Minute
		})},
		"huge body limit": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.MaxBodyBytes = 9223372036854775807 }),
			want: []string{"args.maxBodyBytes", "must be between 1024 and 1073741824"},
		},
		"long cooldown": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.BreakerCooldown.Duration = time.Hour }),
			want: []string{"args.breakerCooldown", "at most 5m0s"},
		},
		"zero latency budget": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.BreakerLatencyBudget.Duration = 0 }),
			want: []string{"args.breakerLatencyBudget", "must be greater than 0"},
		},
		"negative drift margin": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.DriftMarginMilli = -1 }),
			want: []string{"args.driftMarginMilli", "between 0 (off) and 1000000"},
		},
		"drift margin above any score": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.DriftMarginMilli = 1_000_001 }),
			want: []string{"args.driftMarginMilli", "between 0 (off) and 1000000"},
		},
		"long refresh interval": {
			args: valid(func(a *config.CustomScorePluginArgs) {
				a.RefreshInterval.Duration, a.MaxSimulationAge.Duration = time.Hour, 2*time.Hour
			}),
			want: []string{"args.refreshInterval", "at most 10m0s"},
		},
		"age leaves no room for a refresh": {
			args: valid(func(a *config.CustomScorePluginArgs) {
				a.RefreshMode = config.RefreshBackground
				a.RefreshInterval.Duration, a.Timeout.Duration, a.MaxSimulationAge.Duration = 300*time.Millisecond, 150*time.Millisecond, 300*time.Millisecond
			}),
			want: []string{"args.maxSimulationAge", "must be at least refreshInterval + timeout (450ms)"},
		},
		"bad URL": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.SimulatorURL = "http://[::1" }),
			want: []string{"args.simulatorURL"},
		},
		"URL without scheme": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.SimulatorURL = "127.0.0.1:80" }),
			want: []string{"args.simulatorURL"},
		},
		"ftp URL": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.SimulatorURL = "ftp://127.0.0.1" }),
			want: []string{"args.simulatorURL", "scheme must be http or https"},
		},
		"URL without host": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.SimulatorURL = "http://" }),
			want: []string{"args.simulatorURL", "must include a host"},
		},
		"URL with query": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.SimulatorURL = "http://a/?x=1" }),
			want: []string{"args.simulatorURL", "must not have a query or fragment"},
		},
		"URL with fragment": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.SimulatorURL = "http://a/#x" }),
			want: []string{"args.simulatorURL", "must not have a query or fragment"},
		},
		"negative timeout": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Timeout.Duration = -time.Second }),
			want: []string{"args.timeout", `"-1s"`, "must be greater than 0 and at most 60s"},
		},
		"zero timeout": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Timeout.Duration = 0 }),
			want: []string{"args.timeout"},
		},
		"huge timeout": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Timeout.Duration = 10 * time.Minute }),
			want: []string{"args.timeout"},
		},
		"negative retries": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Retries = -1 }),
			want: []string{"args.retries", "must be between 0 and 10"},
		},
		"too many retries": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Retries = 100 }),
			want: []string{"args.retries"},
		},
		"negative delay": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.RetryDelay.Duration = -5 * time.Millisecond }),
			want: []string{"args.retryDelay", "must be between 0 and timeout"},
		},
		"tiny body limit": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.MaxBodyBytes = 10 }),
			want: []string{"args.maxBodyBytes", "must be between 1024 and"},
		},
		"zero threshold": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.BreakerFailureThreshold = 0 }),
			want: []string{"args.breakerFailureThreshold", "must be at least 1"},
		},
		"zero cooldown": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.BreakerCooldown.Duration = 0 }),
			want: []string{"args.breakerCooldown", "must be greater than 0"},
		},
		"unknown mode": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.RefreshMode = "Sometimes" }),
			want: []string{"args.refreshMode", `"PerCycle"`, `"Background"`},
		},
		"mode case": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.RefreshMode = "background" }),
			want: []string{"args.refreshMode"},
		},
		"unknown normalization": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Normalization = "Linear" }),
			want: []string{"args.normalization", `"MinMax"`, `"Absolute"`},
		},
		"zero interval": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.RefreshInterval.Duration = 0 }),
			want: []string{"args.refreshInterval", "must be greater than 0"},
		},
		"age under interval": {
			args: valid(func(a *config.CustomScorePluginArgs) {
				a.RefreshMode = config.RefreshBackground
				a.RefreshInterval.Duration, a.MaxSimulationAge.Duration = 5*time.Second, 2*time.Second
			}),
			want: []string{"args.maxSimulationAge", "must be at least refreshInterval + timeout (10s)"},
		},
		"two errors at once": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.Timeout.Duration, a.Retries = -time.Second, -1 }),
			want: []string{"args.timeout", "args.retries"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateCustomScorePluginArgs(field.NewPath("args"), tt.args)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateNetworkPeersArgs(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{url: "http://127.0.0.1:10271"},
		{url: "ftp://127.0.0.1", want: []string{"args.simulatorURL", "scheme must be http or https"}},
		{url: "http://", want: []string{"args.simulatorURL", "must include a host"}},
		{url: "http://127.0.0.1/?a=b", want: []string{"args.simulatorURL", "/pairs/interest is appended to it"}},
		{url: "http://[::1", want: []string{"args.simulatorURL"}},
	} {
		err := ValidateNetworkPeersArgs(field.NewPath("args"), &config.NetworkPeersArgs{SimulatorURL: tc.url})
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: want no error, got %v", tc.url, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: want an error", tc.url)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.url, err, w)
			}
		}
	}
}
