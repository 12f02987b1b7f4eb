// Package validation checks the KNS-3 plugins' defaulted internal args.
package validation

import (
	"fmt"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kns3.dev/kns3/scheduler/apis/config"
)

const (
	maxRetries               int32 = 10
	maxAttemptTimeoutSeconds       = 60
)

// ValidateCustomScorePluginArgs checks defaulted args; every error names its
// field under path.
func ValidateCustomScorePluginArgs(path *field.Path, args *config.CustomScorePluginArgs) error {
	var errs field.ErrorList
	if u, err := url.Parse(args.SimulatorURL); err != nil {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), args.SimulatorURL, err.Error()))
	} else if u.Scheme != "http" && u.Scheme != "https" {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), args.SimulatorURL, "scheme must be http or https"))
	} else if u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), args.SimulatorURL, "must include a host"))
	} else if u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, field.Invalid(path.Child("simulatorURL"), args.SimulatorURL, "must not have a query or fragment: /simulate is appended to it"))
	}
	if d := args.Timeout.Duration; d <= 0 || d > maxAttemptTimeoutSeconds*time.Second {
		errs = append(errs, field.Invalid(path.Child("timeout"), d.String(), fmt.Sprintf("must be greater than 0 and at most %ds", maxAttemptTimeoutSeconds)))
	}
	if r := args.Retries; r < 0 || r > maxRetries {
		errs = append(errs, field.Invalid(path.Child("retries"), r, fmt.Sprintf("must be between 0 and %d", maxRetries)))
	}
	if d := args.RetryDelay.Duration; d < 0 {
		errs = append(errs, field.Invalid(path.Child("retryDelay"), d.String(), "must not be negative"))
	}
	if m := args.MaxBodyBytes; m < 1024 {
		errs = append(errs, field.Invalid(path.Child("maxBodyBytes"), m, "must be at least 1024"))
	}
	if t := args.BreakerFailureThreshold; t < 1 {
		errs = append(errs, field.Invalid(path.Child("breakerFailureThreshold"), t, "must be at least 1"))
	}
	if d := args.BreakerCooldown.Duration; d <= 0 {
		errs = append(errs, field.Invalid(path.Child("breakerCooldown"), d.String(), "must be greater than 0"))
	}
	if m := args.RefreshMode; m != config.RefreshPerCycle && m != config.RefreshBackground {
		errs = append(errs, field.NotSupported(path.Child("refreshMode"), m, []config.RefreshMode{config.RefreshPerCycle, config.RefreshBackground}))
	}
	if n := args.Normalization; n != config.NormalizationMinMax && n != config.NormalizationAbsolute {
		errs = append(errs, field.NotSupported(path.Child("normalization"), n, []config.Normalization{config.NormalizationMinMax, config.NormalizationAbsolute}))
	}
	if d := args.RefreshInterval.Duration; d <= 0 {
		errs = append(errs, field.Invalid(path.Child("refreshInterval"), d.String(), "must be greater than 0"))
	}
	if d := args.MaxSimulationAge.Duration; d < args.RefreshInterval.Duration {
		errs = append(errs, field.Invalid(path.Child("maxSimulationAge"), d.String(),
			fmt.Sprintf("must be at least refreshInterval (%s), or every simulation would be too old before the next", args.RefreshInterval.Duration)))
	}
	return errs.ToAggregate()
}
