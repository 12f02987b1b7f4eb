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
	// maxCycleBudget bounds what one PerCycle PreScore may wait for the
	// simulator, (retries+1)×timeout + retries×retryDelay: the cycle holds
	// the scheduling loop, for every profile of the process. The
	// specification's values take 15.2s.
	maxCycleBudget = 30 * time.Second
	// maxBodyBytes bounds maxBodyBytes: one body is held in memory, and
	// the client reads one byte more than the limit.
	maxBodyBytes int64 = 1 << 30
	// maxBreakerCooldown bounds the pause between probes of an open
	// breaker: ranking resumes at most this long after the simulator does.
	maxBreakerCooldown = 5 * time.Minute
	// maxRefreshInterval bounds Background mode's refresh interval.
	maxRefreshInterval = 10 * time.Minute
	// maxDriftMarginMilli bounds driftMarginMilli at a score of 1000, a
	// thousand times the best the simulator's metrics give.
	maxDriftMarginMilli int64 = 1_000_000
)

// ValidateCustomScorePluginArgs checks defaulted args; every error names its
// field under path.
func ValidateCustomScorePluginArgs(path *field.Path, args *config.CustomScorePluginArgs) error {
	errs := validateSimulatorURL(path.Child("simulatorURL"), args.SimulatorURL, "/simulate")
	before := len(errs)
	if d := args.Timeout.Duration; d <= 0 || d > maxAttemptTimeoutSeconds*time.Second {
		errs = append(errs, field.Invalid(path.Child("timeout"), d.String(), fmt.Sprintf("must be greater than 0 and at most %ds", maxAttemptTimeoutSeconds)))
	}
	if r := args.Retries; r < 0 || r > maxRetries {
		errs = append(errs, field.Invalid(path.Child("retries"), r, fmt.Sprintf("must be between 0 and %d", maxRetries)))
	}
	if d := args.RetryDelay.Duration; d < 0 || d > args.Timeout.Duration {
		errs = append(errs, field.Invalid(path.Child("retryDelay"), d.String(),
			fmt.Sprintf("must be between 0 and timeout (%s)", args.Timeout.Duration)))
	}
	// Only PerCycle cycles wait for the simulator; judged once its parts are valid.
	if budget := cycleBudget(args); args.RefreshMode == config.RefreshPerCycle && len(errs) == before && budget > maxCycleBudget {
		errs = append(errs, field.Invalid(path.Child("retries"), args.Retries,
			fmt.Sprintf("one cycle may wait (retries+1)×timeout + retries×retryDelay = %s for the simulator, over the %s a cycle may hold the scheduling loop", budget, maxCycleBudget)))
	}
	if m := args.MaxBodyBytes; m < 1024 || m > maxBodyBytes {
		errs = append(errs, field.Invalid(path.Child("maxBodyBytes"), m, fmt.Sprintf("must be between 1024 and %d (1 GiB)", maxBodyBytes)))
	}
	if t := args.BreakerFailureThreshold; t < 1 {
		errs = append(errs, field.Invalid(path.Child("breakerFailureThreshold"), t, "must be at least 1"))
	}
	if d := args.BreakerCooldown.Duration; d <= 0 || d > maxBreakerCooldown {
		errs = append(errs, field.Invalid(path.Child("breakerCooldown"), d.String(), fmt.Sprintf("must be greater than 0 and at most %s", maxBreakerCooldown)))
	}
	if d := args.BreakerLatencyBudget.Duration; d <= 0 || d > maxCycleBudget {
		errs = append(errs, field.Invalid(path.Child("breakerLatencyBudget"), d.String(), fmt.Sprintf("must be greater than 0 and at most %s", maxCycleBudget)))
	}
	if m := args.RefreshMode; m != config.RefreshPerCycle && m != config.RefreshBackground {
		errs = append(errs, field.NotSupported(path.Child("refreshMode"), m, []config.RefreshMode{config.RefreshPerCycle, config.RefreshBackground}))
	}
	if n := args.Normalization; n != config.NormalizationMinMax && n != config.NormalizationAbsolute {
		errs = append(errs, field.NotSupported(path.Child("normalization"), n, []config.Normalization{config.NormalizationMinMax, config.NormalizationAbsolute}))
	}
	if m := args.DriftMarginMilli; m < 0 || m > maxDriftMarginMilli {
		errs = append(errs, field.Invalid(path.Child("driftMarginMilli"), m, fmt.Sprintf("must be between 0 (off) and %d", maxDriftMarginMilli)))
	}
	if d := args.RefreshInterval.Duration; d <= 0 || d > maxRefreshInterval {
		errs = append(errs, field.Invalid(path.Child("refreshInterval"), d.String(), fmt.Sprintf("must be greater than 0 and at most %s", maxRefreshInterval)))
	}
	// In Background mode the next refresh starts refreshInterval after an
	// answer and may take up to timeout: a younger bound would leave every
	// refresh a window of stale cycles.
	if least := args.RefreshInterval.Duration + args.Timeout.Duration; args.RefreshMode == config.RefreshBackground && args.MaxSimulationAge.Duration < least {
		errs = append(errs, field.Invalid(path.Child("maxSimulationAge"), args.MaxSimulationAge.Duration.String(),
			fmt.Sprintf("must be at least refreshInterval + timeout (%s), or simulations would go stale between refreshes", least)))
	}
	return errs.ToAggregate()
}

// validateSimulatorURL checks a simulator's base URL, to which the
// plugin appends path.
func validateSimulatorURL(fld *field.Path, simulatorURL, path string) field.ErrorList {
	u, err := url.Parse(simulatorURL)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(fld, simulatorURL, err.Error())}
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(fld, simulatorURL, "scheme must be http or https")}
	case u.Host == "":
		return field.ErrorList{field.Invalid(fld, simulatorURL, "must include a host")}
	case u.RawQuery != "" || u.Fragment != "":
		return field.ErrorList{field.Invalid(fld, simulatorURL, "must not have a query or fragment: "+path+" is appended to it")}
	}
	return nil
}

// cycleBudget is the longest one PerCycle PreScore waits for the
// simulator: every attempt timing out, with the pauses between them.
func cycleBudget(args *config.CustomScorePluginArgs) time.Duration {
	n := time.Duration(args.Retries)
	return (n+1)*args.Timeout.Duration + n*args.RetryDelay.Duration
}

// maxPodMbps bounds defaultPodMbps: 100 Gbit/s, more than any node link.
const maxPodMbps int64 = 100_000

// ValidateNetworkCapacityArgs checks defaulted args; every error names its
// field under path.
func ValidateNetworkCapacityArgs(path *field.Path, args *config.NetworkCapacityArgs) error {
	var errs field.ErrorList
	if m := args.DefaultPodMbps; m < 0 || m > maxPodMbps {
		errs = append(errs, field.Invalid(path.Child("defaultPodMbps"), m, fmt.Sprintf("must be between 0 and %d", maxPodMbps)))
	}
	if p := args.TargetUtilizationPercent; p < 1 || p > 100 {
		errs = append(errs, field.Invalid(path.Child("targetUtilizationPercent"), p, "must be between 1 and 100"))
	}
	return errs.ToAggregate()
}

// ValidateNetworkPeersArgs checks defaulted args; every error names its
// field under path.
func ValidateNetworkPeersArgs(path *field.Path, args *config.NetworkPeersArgs) error {
	return validateSimulatorURL(path.Child("simulatorURL"), args.SimulatorURL, "/pairs/interest").ToAggregate()
}
