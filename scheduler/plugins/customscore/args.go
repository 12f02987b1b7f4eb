package customscore

import (
	"fmt"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	// The scheduler's codec decodes, defaults and converts the plugin's args
	// once this has registered them: every binary and test that builds the
	// plugin gets it.
	_ "kns3.dev/kns3/scheduler/apis/config/scheme"
	configv1 "kns3.dev/kns3/scheduler/apis/config/v1"
	"kns3.dev/kns3/scheduler/apis/config/validation"
)

// RefreshMode says when CustomScorePlugin asks the simulator.
type RefreshMode = apiconfig.RefreshMode

const (
	// RefreshPerCycle asks the simulator in every scheduling cycle's PreScore.
	RefreshPerCycle = apiconfig.RefreshPerCycle
	// RefreshBackground asks it from one background loop.
	RefreshBackground = apiconfig.RefreshBackground
)

// config is the plugin's view of its defaulted, validated args.
type config struct {
	simulateURL string
	// shownURL is simulateURL without credentials, for logs.
	shownURL         string
	timeout          time.Duration
	retries          int
	retryDelay       time.Duration
	maxBodyBytes     int64
	breakerThreshold int
	breakerCooldown  time.Duration
	latencyBudget    time.Duration
	mode             RefreshMode
	refreshInterval  time.Duration
	maxAge           time.Duration
	normalization    apiconfig.Normalization
}

// newConfig takes the args the framework passes to New: the internal
// CustomScorePluginArgs the scheduler's codec decoded and defaulted from the
// profile's pluginConfig, or nil, which means the defaults. It validates
// them, naming the offending field on error.
func newConfig(obj runtime.Object) (config, error) {
	args, ok := obj.(*apiconfig.CustomScorePluginArgs)
	switch {
	case obj == nil || (ok && args == nil):
		var err error
		if args, err = defaultArgs(); err != nil {
			return config{}, fmt.Errorf("defaulting %s args: %w", Name, err)
		}
	case !ok:
		return config{}, fmt.Errorf("%s args: want *config.CustomScorePluginArgs, got %T", Name, obj)
	}
	if err := validation.ValidateCustomScorePluginArgs(field.NewPath("args"), args); err != nil {
		return config{}, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	u, _ := url.Parse(args.SimulatorURL)
	simulate := u.JoinPath("simulate")
	return config{
		simulateURL:      simulate.String(),
		shownURL:         simulate.Redacted(),
		timeout:          args.Timeout.Duration,
		retries:          int(args.Retries),
		retryDelay:       args.RetryDelay.Duration,
		maxBodyBytes:     args.MaxBodyBytes,
		breakerThreshold: int(args.BreakerFailureThreshold),
		breakerCooldown:  args.BreakerCooldown.Duration,
		latencyBudget:    args.BreakerLatencyBudget.Duration,
		mode:             args.RefreshMode,
		refreshInterval:  args.RefreshInterval.Duration,
		maxAge:           args.MaxSimulationAge.Duration,
		normalization:    args.Normalization,
	}, nil
}

// defaultArgs returns the internal args of an empty pluginConfig entry.
func defaultArgs() (*apiconfig.CustomScorePluginArgs, error) {
	in := &configv1.CustomScorePluginArgs{}
	configv1.SetObjectDefaults_CustomScorePluginArgs(in)
	out := &apiconfig.CustomScorePluginArgs{}
	if err := configv1.Convert_v1_CustomScorePluginArgs_To_config_CustomScorePluginArgs(in, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}
