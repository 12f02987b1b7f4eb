package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Normalization says how NormalizeScore maps the simulator's scores onto
// the framework's 0-100 node score.
type Normalization string

const (
	// NormalizationMinMax stretches the cycle's scores onto 0-100.
	NormalizationMinMax Normalization = "MinMax"
	// NormalizationAbsolute keeps the simulator's scale: score × 100,
	// clamped to 0-100.
	NormalizationAbsolute Normalization = "Absolute"
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

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomScorePluginArgs configures CustomScorePlugin through the profile's
// pluginConfig. Every field is optional; unset fields take the defaults in
// defaults.go. Field names are case-sensitive; unknown or duplicate fields
// and values of the wrong form are errors that name the field.
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
	// of an open breaker; the first come sooner, on the backoff that
	// scheduler/plugins/customscore/simclient/poller.go describes.
	BreakerCooldown *metav1.Duration `json:"breakerCooldown,omitempty"`
	// BreakerLatencyBudget is, in PerCycle mode, the longest a cycle's call
	// to the simulator may take and still count as a success for the
	// breaker; a slower answer is used but counts as a failure, and an
	// open breaker closes only on a probe answered within it.
	BreakerLatencyBudget *metav1.Duration `json:"breakerLatencyBudget,omitempty"`
	// RefreshMode is PerCycle (the default) or Background.
	RefreshMode RefreshMode `json:"refreshMode,omitempty"`
	// RefreshInterval is, in Background mode, the pause between two requests
	// while the simulator answers.
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`
	// MaxSimulationAge is, in Background mode, the age past which the newest
	// simulation is no longer used: scoring is then skipped.
	MaxSimulationAge *metav1.Duration `json:"maxSimulationAge,omitempty"`
	// Normalization is MinMax (the default, the KNS-3 specification's:
	// the cycle's best node 100, its worst 0) or Absolute (the simulator
	// score × 100, clamped to 0-100).
	Normalization Normalization `json:"normalization,omitempty"`
	// DriftMarginMilli is, in thousandths of the simulator's score, how far
	// a running pod's node must fall below the best feasible alternative,
	// for longer than a window of fresh measurements, for the pod to be
	// listed as drifted (the published status, kubectl kns3 status, a
	// metric); 0 turns the listing off. KNS-3 never evicts.
	DriftMarginMilli *int64 `json:"driftMarginMilli,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkCapacityArgs configures NetworkCapacity through the profile's
// pluginConfig. Every field is optional; unset fields take the defaults in
// defaults.go. Unknown or duplicate fields and values of the wrong form are
// errors that name the field.
type NetworkCapacityArgs struct {
	metav1.TypeMeta `json:",inline"`

	// DefaultPodMbps is the bandwidth, in Mbit/s, counted against a node's
	// link for a pod placed there since its last measurement that declares
	// none in the kubernetes.io/ingress-bandwidth or egress-bandwidth
	// annotation.
	DefaultPodMbps *int64 `json:"defaultPodMbps,omitempty"`

	// TargetUtilizationPercent is the share of a link's bandwidth, in
	// percent from 1 to 100, that Score fills before it counts the link as
	// full: a node ranks by the bandwidth free below it. Queueing delay on
	// a link grows steeply as it nears full, so a link kept below its
	// bandwidth keeps its small calls fast. The opt-in filter judges the
	// whole link.
	TargetUtilizationPercent *int32 `json:"targetUtilizationPercent,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkPeersArgs configures NetworkPeers through the profile's
// pluginConfig. Every field is optional; unset fields take the defaults in
// defaults.go. Unknown or duplicate fields and values of the wrong form are
// errors that name the field.
type NetworkPeersArgs struct {
	metav1.TypeMeta `json:",inline"`

	// SimulatorURL is the base URL of the simulator the profile's
	// CustomScorePlugin asks (set it to CustomScorePlugin's simulatorURL):
	// a background loop PUTs {SimulatorURL}/pairs/interest once a window,
	// naming the nodes that host pods other pods declare as peers, so that
	// the simulator measures the pairs between them directly. The plugin
	// reads the measurements from the answer CustomScorePlugin took, never
	// from the simulator itself.
	SimulatorURL string `json:"simulatorURL,omitempty"`
}
