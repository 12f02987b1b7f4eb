package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProfileName is the scheduler name of the profile the shipped
// configurations run the KNS-3 plugins in.
const ProfileName = "kns-3-scheduler"

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

// Normalization says how NormalizeScore maps the simulator's scores onto
// the framework's 0-100 node score.
type Normalization string

const (
	// NormalizationMinMax stretches the cycle's scores onto 0-100: the best
	// node gets 100 and the worst 0, however close they are. The KNS-3
	// specification's normalization.
	NormalizationMinMax Normalization = "MinMax"
	// NormalizationAbsolute keeps the simulator's scale: a node scores its
	// simulator score × 100, clamped to 0-100, so a small network difference
	// stays a small score difference beside the other plugins'.
	NormalizationAbsolute Normalization = "Absolute"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomScorePluginArgs configures CustomScorePlugin. It is the defaulted
// form of the versioned args: every field is set. The json tags name the
// fields as the versioned args do, for /configz.
type CustomScorePluginArgs struct {
	metav1.TypeMeta `json:",inline"`

	// SimulatorURL is the base URL of the simulator; PreScore calls
	// {SimulatorURL}/simulate.
	SimulatorURL string `json:"simulatorURL"`
	// Timeout bounds each attempt.
	Timeout metav1.Duration `json:"timeout"`
	// Retries is how many times a failed attempt is retried (so at most
	// Retries+1 attempts per scheduling cycle).
	Retries int32 `json:"retries"`
	// RetryDelay is the pause between attempts.
	RetryDelay metav1.Duration `json:"retryDelay"`
	// MaxBodyBytes bounds the size of a /simulate response body.
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// BreakerFailureThreshold is how many scheduling cycles in a row must fail
	// to reach the simulator before the breaker opens.
	BreakerFailureThreshold int32 `json:"breakerFailureThreshold"`
	// BreakerCooldown is the longest pause between two background probes
	// of an open breaker; the first come sooner, on the backoff that
	// scheduler/plugins/customscore/simclient/poller.go describes.
	BreakerCooldown metav1.Duration `json:"breakerCooldown"`
	// BreakerLatencyBudget is, in PerCycle mode, the longest a cycle's call
	// to the simulator may take and still count as a success for the
	// breaker; a slower answer is used but counts as a failure, and an
	// open breaker closes only on a probe answered within it.
	BreakerLatencyBudget metav1.Duration `json:"breakerLatencyBudget"`
	// RefreshMode is PerCycle or Background.
	RefreshMode RefreshMode `json:"refreshMode"`
	// RefreshInterval is, in Background mode, the pause between two requests
	// while the simulator answers.
	RefreshInterval metav1.Duration `json:"refreshInterval"`
	// MaxSimulationAge is, in Background mode, the age past which the newest
	// simulation is no longer used: scoring is then skipped.
	MaxSimulationAge metav1.Duration `json:"maxSimulationAge"`
	// Normalization is MinMax or Absolute.
	Normalization Normalization `json:"normalization"`
	// DriftMarginMilli is, in thousandths of the simulator's score, how far
	// a running pod's node must fall below the best feasible alternative,
	// for longer than a window of fresh measurements, for the pod to be
	// listed as drifted (the published status, kubectl kns3 status, a
	// metric); 0 turns the listing off. KNS-3 never evicts.
	DriftMarginMilli int64 `json:"driftMarginMilli"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkCapacityArgs configures NetworkCapacity, which scores nodes by the
// bandwidth a new pod would find free on their link. It is the defaulted
// form of the versioned args.
type NetworkCapacityArgs struct {
	metav1.TypeMeta `json:",inline"`

	// DefaultPodMbps is the bandwidth, in Mbit/s, counted against a node's
	// link for a pod placed there since its last measurement that declares
	// none in the kubernetes.io/ingress-bandwidth or egress-bandwidth
	// annotation.
	DefaultPodMbps int64 `json:"defaultPodMbps"`

	// TargetUtilizationPercent is the share of a link's bandwidth, in
	// percent, that Score fills before it counts the link as full.
	TargetUtilizationPercent int32 `json:"targetUtilizationPercent"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkPeersArgs configures NetworkPeers, which scores nodes by the
// measured network to the nodes of the pod's peers. It is the defaulted
// form of the versioned args.
type NetworkPeersArgs struct {
	metav1.TypeMeta `json:",inline"`

	// SimulatorURL is the base URL of the simulator the profile's
	// CustomScorePlugin asks: the plugin tells it, from a background loop,
	// which nodes host peers ({SimulatorURL}/pairs/interest).
	SimulatorURL string `json:"simulatorURL"`
}
