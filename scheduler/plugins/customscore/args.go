package customscore

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Defaults follow the KNS-3 specification; the breaker defaults are ours.
const (
	DefaultSimulatorURL            = "http://127.0.0.1:80"
	DefaultTimeout                 = 5 * time.Second
	DefaultRetries           int32 = 2
	DefaultRetryDelay              = 100 * time.Millisecond
	DefaultMaxBodyBytes      int64 = 8 << 20
	DefaultBreakerThreshold  int32 = 5
	DefaultBreakerCooldown         = time.Second
	DefaultRefreshMode             = RefreshPerCycle
	DefaultRefreshInterval         = time.Second
	DefaultMaxSimulationAge        = 10 * time.Second
	maxRetries               int32 = 10
	maxAttemptTimeoutSeconds       = 60
)

// RefreshMode says when CustomScorePlugin asks the simulator.
type RefreshMode string

const (
	// RefreshPerCycle asks the simulator in every scheduling cycle's
	// PreScore, as the KNS-3 specification says.
	RefreshPerCycle RefreshMode = "PerCycle"
	// RefreshBackground asks it from one background loop; PreScore takes the
	// newest simulation and never waits for the network.
	RefreshBackground RefreshMode = "Background"
)

// CustomScorePluginArgs configures CustomScorePlugin through the profile's
// pluginConfig. Every field is optional; unset fields take the defaults above.
type CustomScorePluginArgs struct {
	metav1.TypeMeta `json:",inline"`

	// SimulatorURL is the base URL of the simulator; PreScore calls
	// {SimulatorURL}/simulate.
	SimulatorURL string `json:"simulatorURL,omitempty"`
	// Timeout bounds each attempt.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// Retries is how many times a failed attempt is retried (so at most
	// Retries+1 attempts per scheduling cycle).
	Retries *int32 `json:"retries,omitempty"`
	// RetryDelay is the pause between attempts.
	RetryDelay *metav1.Duration `json:"retryDelay,omitempty"`
	// MaxBodyBytes bounds the size of a /simulate response body.
	MaxBodyBytes *int64 `json:"maxBodyBytes,omitempty"`
	// BreakerFailureThreshold is how many scheduling cycles in a row must fail
	// to reach the simulator before the breaker opens.
	BreakerFailureThreshold *int32 `json:"breakerFailureThreshold,omitempty"`
	// BreakerCooldown is the longest pause between two background probes
	// of an open breaker; the first probes come sooner (50ms, then doubling).
	BreakerCooldown *metav1.Duration `json:"breakerCooldown,omitempty"`
	// RefreshMode is PerCycle (the default) or Background.
	RefreshMode RefreshMode `json:"refreshMode,omitempty"`
	// RefreshInterval is, in Background mode, the pause between two requests
	// while the simulator answers.
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`
	// MaxSimulationAge is, in Background mode, the age past which the newest
	// simulation is no longer used: nodes then score 0.
	MaxSimulationAge *metav1.Duration `json:"maxSimulationAge,omitempty"`
}

// config is the defaulted, validated form of CustomScorePluginArgs.
type config struct {
	simulateURL      string
	timeout          time.Duration
	retries          int
	retryDelay       time.Duration
	maxBodyBytes     int64
	breakerThreshold int
	breakerCooldown  time.Duration
	mode             RefreshMode
	refreshInterval  time.Duration
	maxAge           time.Duration
}

// decodeArgs reads the plugin's pluginConfig args as the scheduler reads its
// own configuration: field names are case-sensitive and unknown or duplicate
// fields are errors, so a misspelt field fails start-up instead of being
// silently ignored.
func decodeArgs(obj runtime.Object) (*CustomScorePluginArgs, error) {
	args := &CustomScorePluginArgs{}
	switch o := obj.(type) {
	case nil:
	case *CustomScorePluginArgs:
		args = o.DeepCopy()
	case *runtime.Unknown:
		if len(o.Raw) > 0 {
			if err := decodeStrict(o.Raw, args); err != nil {
				return nil, fmt.Errorf("decoding %s args: %w", Name, err)
			}
		}
	default:
		return nil, fmt.Errorf("%s args: want *runtime.Unknown or *CustomScorePluginArgs, got %T", Name, obj)
	}
	return args, nil
}

func decodeStrict(raw []byte, args *CustomScorePluginArgs) error {
	data, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(data, args)
	if err != nil {
		// Value errors (a bad duration, say) do not say which field they are
		// in: find it by decoding the fields one at a time.
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) == nil {
			for _, name := range sets.List(sets.KeySet(fields)) {
				one, _ := json.Marshal(map[string]json.RawMessage{name: fields[name]})
				if _, fieldErr := kjson.UnmarshalStrict(one, &CustomScorePluginArgs{}); fieldErr != nil {
					return field.Invalid(field.NewPath("args", name), string(fields[name]), fieldErr.Error())
				}
			}
		}
		return err
	}
	return errors.Join(strictErrs...)
}

// SetDefaults fills every unset field with its default.
func SetDefaults(a *CustomScorePluginArgs) {
	if a.SimulatorURL == "" {
		a.SimulatorURL = DefaultSimulatorURL
	}
	if a.Timeout == nil {
		a.Timeout = &metav1.Duration{Duration: DefaultTimeout}
	}
	if a.Retries == nil {
		r := DefaultRetries
		a.Retries = &r
	}
	if a.RetryDelay == nil {
		a.RetryDelay = &metav1.Duration{Duration: DefaultRetryDelay}
	}
	if a.MaxBodyBytes == nil {
		m := DefaultMaxBodyBytes
		a.MaxBodyBytes = &m
	}
	if a.BreakerFailureThreshold == nil {
		t := DefaultBreakerThreshold
		a.BreakerFailureThreshold = &t
	}
	if a.BreakerCooldown == nil {
		a.BreakerCooldown = &metav1.Duration{Duration: DefaultBreakerCooldown}
	}
	if a.RefreshMode == "" {
		a.RefreshMode = DefaultRefreshMode
	}
	if a.RefreshInterval == nil {
		a.RefreshInterval = &metav1.Duration{Duration: DefaultRefreshInterval}
	}
	if a.MaxSimulationAge == nil {
		a.MaxSimulationAge = &metav1.Duration{Duration: DefaultMaxSimulationAge}
	}
}

// ValidateArgs checks defaulted args; every error names its field under path.
func ValidateArgs(path *field.Path, a *CustomScorePluginArgs) field.ErrorList {
	var errs field.ErrorList
	if u, err := url.Parse(a.SimulatorURL); err != nil {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), a.SimulatorURL, err.Error()))
	} else if u.Scheme != "http" && u.Scheme != "https" {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), a.SimulatorURL, "scheme must be http or https"))
	} else if u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), a.SimulatorURL, "must include a host"))
	} else if u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), a.SimulatorURL, "must not have a query or fragment: /simulate is appended to it"))
	}
	if d := a.Timeout.Duration; d <= 0 || d > maxAttemptTimeoutSeconds*time.Second {
		errs = append(errs, field.Invalid(path.Child("timeout"), a.Timeout.Duration.String(), fmt.Sprintf("must be greater than 0 and at most %ds", maxAttemptTimeoutSeconds)))
	}
	if r := *a.Retries; r < 0 || r > maxRetries {
		errs = append(errs, field.Invalid(path.Child("retries"), r, fmt.Sprintf("must be between 0 and %d", maxRetries)))
	}
	if d := a.RetryDelay.Duration; d < 0 {
		errs = append(errs, field.Invalid(path.Child("retryDelay"), a.RetryDelay.Duration.String(), "must not be negative"))
	}
	if m := *a.MaxBodyBytes; m < 1024 {
		errs = append(errs, field.Invalid(path.Child("maxBodyBytes"), m, "must be at least 1024"))
	}
	if t := *a.BreakerFailureThreshold; t < 1 {
		errs = append(errs, field.Invalid(path.Child("breakerFailureThreshold"), t, "must be at least 1"))
	}
	if d := a.BreakerCooldown.Duration; d <= 0 {
		errs = append(errs, field.Invalid(path.Child("breakerCooldown"), a.BreakerCooldown.Duration.String(), "must be greater than 0"))
	}
	if m := a.RefreshMode; m != RefreshPerCycle && m != RefreshBackground {
		errs = append(errs, field.NotSupported(path.Child("refreshMode"), m, []RefreshMode{RefreshPerCycle, RefreshBackground}))
	}
	if d := a.RefreshInterval.Duration; d <= 0 {
		errs = append(errs, field.Invalid(path.Child("refreshInterval"), d.String(), "must be greater than 0"))
	}
	if d := a.MaxSimulationAge.Duration; d < a.RefreshInterval.Duration {
		errs = append(errs, field.Invalid(path.Child("maxSimulationAge"), d.String(),
			fmt.Sprintf("must be at least refreshInterval (%s), or every simulation would be too old before the next", a.RefreshInterval.Duration)))
	}
	return errs
}

// newConfig defaults and validates args, naming the offending field on error.
func newConfig(obj runtime.Object) (config, error) {
	args, err := decodeArgs(obj)
	if err != nil {
		return config{}, err
	}
	SetDefaults(args)
	if errs := ValidateArgs(field.NewPath("args"), args); len(errs) > 0 {
		return config{}, fmt.Errorf("invalid %s args: %w", Name, errs.ToAggregate())
	}
	u, _ := url.Parse(args.SimulatorURL)
	return config{
		simulateURL:      u.JoinPath("simulate").String(),
		timeout:          args.Timeout.Duration,
		retries:          int(*args.Retries),
		retryDelay:       args.RetryDelay.Duration,
		maxBodyBytes:     *args.MaxBodyBytes,
		breakerThreshold: int(*args.BreakerFailureThreshold),
		breakerCooldown:  args.BreakerCooldown.Duration,
		mode:             args.RefreshMode,
		refreshInterval:  args.RefreshInterval.Duration,
		maxAge:           args.MaxSimulationAge.Duration,
	}, nil
}

// DeepCopyObject implements runtime.Object.
func (a *CustomScorePluginArgs) DeepCopyObject() runtime.Object { return a.DeepCopy() }

// DeepCopy returns a copy of a.
func (a *CustomScorePluginArgs) DeepCopy() *CustomScorePluginArgs {
	if a == nil {
		return nil
	}
	out := *a
	out.Timeout = copyOf(a.Timeout)
	out.Retries = copyOf(a.Retries)
	out.RetryDelay = copyOf(a.RetryDelay)
	out.MaxBodyBytes = copyOf(a.MaxBodyBytes)
	out.BreakerFailureThreshold = copyOf(a.BreakerFailureThreshold)
	out.BreakerCooldown = copyOf(a.BreakerCooldown)
	out.RefreshInterval = copyOf(a.RefreshInterval)
	out.MaxSimulationAge = copyOf(a.MaxSimulationAge)
	return &out
}

func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
