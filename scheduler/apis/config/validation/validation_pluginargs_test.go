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
			a.RefreshInterval.Duration, a.MaxSimulationAge.Duration = 2*time.Second, 2*time.Second
		})},
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
			want: []string{"args.retryDelay", "must not be negative"},
		},
		"tiny body limit": {
			args: valid(func(a *config.CustomScorePluginArgs) { a.MaxBodyBytes = 10 }),
			want: []string{"args.maxBodyBytes", "must be at least 1024"},
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
				a.RefreshInterval.Duration, a.MaxSimulationAge.Duration = 5*time.Second, 2*time.Second
			}),
			want: []string{"args.maxSimulationAge", "must be at least refreshInterval (5s)"},
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
