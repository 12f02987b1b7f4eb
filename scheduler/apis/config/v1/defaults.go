package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults follow the KNS-3 specification; the breaker defaults are ours.
const (
	DefaultSimulatorURL               = "http://127.0.0.1:80"
	DefaultTimeout                    = 5 * time.Second
	DefaultRetries              int32 = 2
	DefaultRetryDelay                 = 100 * time.Millisecond
	DefaultMaxBodyBytes         int64 = 8 << 20
	DefaultBreakerThreshold     int32 = 5
	DefaultBreakerCooldown            = time.Second
	DefaultBreakerLatencyBudget       = time.Second
	DefaultRefreshMode                = RefreshPerCycle
	DefaultRefreshInterval            = time.Second
	DefaultMaxSimulationAge           = 10 * time.Second
	DefaultNormalization              = NormalizationMinMax
	// DefaultDriftMarginMilli is a fifth of a score of 1, the best the
	// simulator's metrics give.
	DefaultDriftMarginMilli int64 = 200
	// DefaultPodMbps is what a pod that declares no bandwidth is counted
	// at until a measurement covers it: a tenth of a 100 Mbit/s link.
	DefaultPodMbps int64 = 10
	// DefaultTargetUtilizationPercent leaves a fifth of a link free: at
	// four fifths a queue is on average a few packets long, at 96 % it is
	// tens (an M/M/1 queue holds ρ/(1−ρ)).
	DefaultTargetUtilizationPercent int32 = 80
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_CustomScorePluginArgs fills every unset field with its default.
func SetDefaults_CustomScorePluginArgs(obj *CustomScorePluginArgs) {
	if obj.SimulatorURL == "" {
		obj.SimulatorURL = DefaultSimulatorURL
	}
	if obj.Timeout == nil {
		obj.Timeout = &metav1.Duration{Duration: DefaultTimeout}
	}
	if obj.Retries == nil {
		r := DefaultRetries
		obj.Retries = &r
	}
	if obj.RetryDelay == nil {
		obj.RetryDelay = &metav1.Duration{Duration: DefaultRetryDelay}
	}
	if obj.MaxBodyBytes == nil {
		m := DefaultMaxBodyBytes
		obj.MaxBodyBytes = &m
	}
	if obj.BreakerFailureThreshold == nil {
		t := DefaultBreakerThreshold
		obj.BreakerFailureThreshold = &t
	}
	if obj.BreakerCooldown == nil {
		obj.BreakerCooldown = &metav1.Duration{Duration: DefaultBreakerCooldown}
	}
	if obj.BreakerLatencyBudget == nil {
		obj.BreakerLatencyBudget = &metav1.Duration{Duration: DefaultBreakerLatencyBudget}
	}
	if obj.RefreshMode == "" {
		obj.RefreshMode = DefaultRefreshMode
	}
	if obj.RefreshInterval == nil {
		obj.RefreshInterval = &metav1.Duration{Duration: DefaultRefreshInterval}
	}
	if obj.MaxSimulationAge == nil {
		obj.MaxSimulationAge = &metav1.Duration{Duration: DefaultMaxSimulationAge}
	}
	if obj.Normalization == "" {
		obj.Normalization = DefaultNormalization
	}
	if obj.DriftMarginMilli == nil {
		m := DefaultDriftMarginMilli
		obj.DriftMarginMilli = &m
	}
}

// SetDefaults_NetworkCapacityArgs fills every unset field with its default.
func SetDefaults_NetworkCapacityArgs(obj *NetworkCapacityArgs) {
	if obj.DefaultPodMbps == nil {
		m := DefaultPodMbps
		obj.DefaultPodMbps = &m
	}
	if obj.TargetUtilizationPercent == nil {
		p := DefaultTargetUtilizationPercent
		obj.TargetUtilizationPercent = &p
	}
}

// SetDefaults_NetworkPeersArgs fills every unset field with its default:
// the simulator CustomScorePlugin asks by default.
func SetDefaults_NetworkPeersArgs(obj *NetworkPeersArgs) {
	if obj.SimulatorURL == "" {
		obj.SimulatorURL = DefaultSimulatorURL
	}
}
