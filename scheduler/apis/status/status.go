// Package status is what a running KNS-3 scheduler tells the people and
// tools that operate it (kubectl kns3): its placement events' reason, and
// its state, published as one JSON document per profile that runs
// CustomScorePlugin in the ConfigMap kns-3-status of the scheduler pod's
// namespace. Readers get both through the API server with ordinary RBAC
// (get on that one ConfigMap), so they need no access to the pod: no
// port-forward, no credentials sent to it.
//
// The package holds only types, names and the one rule readers share for
// a simulation's window, so that readers do not link the scheduler.
package status

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"time"
)

const (
	// ConfigMapName is the ConfigMap the scheduler publishes to, in its
	// pod's namespace. The install ships it empty; the scheduler may only
	// patch it (RBAC resourceNames).
	ConfigMapName = "kns-3-status"
	// APIVersion and Kind identify a ProfileStatus document.
	APIVersion = "kns3.dev/v1alpha1"
	Kind       = "ProfileStatus"
	// PlacementEventReason is the reason of the event CustomBindPlugin
	// records on every pod it binds, reported by the profile (its
	// reportingController is the profile's name).
	PlacementEventReason = "NetworkPlacement"
	// NamespaceEnv names the environment variable that tells the scheduler
	// its pod's namespace (the downward API's metadata.namespace). Without
	// it, nothing is published.
	NamespaceEnv = "POD_NAMESPACE"
)

// Breaker states of ProfileStatus.Breaker.
const (
	BreakerClosed = "closed"
	BreakerOpen   = "open"
)

// ProfileStatus is one profile's CustomScorePlugin as its scheduler last
// published it.
type ProfileStatus struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Profile is the scheduling profile's name (its schedulerName).
	Profile string `json:"profile"`
	// Instance is the publishing scheduler's host name: the pod's name in a
	// Deployment, the node's for a static pod. With leader election on,
	// only the leader publishes.
	Instance string `json:"instance"`
	// Started is when the plugin instance started; Published when this
	// document was written. A scheduler publishes at most every
	// IntervalSeconds while its state changes, and at least every
	// HeartbeatSeconds, so a much older document comes from a scheduler
	// that has stopped or lost its lease.
	Started          time.Time `json:"started"`
	Published        time.Time `json:"published"`
	IntervalSeconds  int       `json:"intervalSeconds"`
	HeartbeatSeconds int       `json:"heartbeatSeconds"`
	// RefreshMode and Normalization are the plugin's args.
	RefreshMode   string `json:"refreshMode"`
	Normalization string `json:"normalization"`
	// Scoring is each KNS-3 plugin the profile scores nodes with, in the
	// profile's order, with its weight and what a reader needs besides
	// Normalization and the simulation's metrics to work out the points it
	// gives a node. Empty when the scheduler cannot list its profile's
	// plugins.
	Scoring []ScorePlugin `json:"scoring,omitempty"`
	// Breaker is the circuit breaker's state (BreakerClosed, BreakerOpen);
	// empty in Background mode, which has none.
	Breaker string `json:"breaker,omitempty"`
	// ScoredCycles counts the cycles ranked from a simulation since
	// Started; Fallbacks the cycles scored without one, by reason (the
	// reasons of the kns3_simulator_fallbacks_total metric).
	ScoredCycles int64            `json:"scoredCycles"`
	Fallbacks    map[string]int64 `json:"fallbacks"`
	Simulator    Simulator        `json:"simulator"`
	// Drift lists the running pods of the profile whose node has fallen
	// below the best feasible alternative by the plugin's driftMarginMilli
	// for longer than a window of fresh measurements, longest drifted
	// first; DriftOmitted counts those left out to keep the document
	// bounded. Advisory: KNS-3 never evicts.
	Drift        []DriftedPod `json:"drift,omitempty"`
	DriftOmitted int          `json:"driftOmitted,omitempty"`
}

// The KNS-3 plugins a profile may score with (ScorePlugin.Name).
const (
	CustomScorePlugin = "CustomScorePlugin"
	NetworkCapacity   = "NetworkCapacity"
	NetworkPeers      = "NetworkPeers"
)

// ScorePlugin is one KNS-3 plugin a profile scores nodes with.
type ScorePlugin struct {
	Name string `json:"name"`
	// Weight is the plugin's weight in the profile: a node gets weight ×
	// the plugin's normalized score.
	Weight int32 `json:"weight"`
	// Capacity is NetworkCapacity's args, nil for another plugin.
	Capacity *CapacityArgs `json:"capacity,omitempty"`
}

// CapacityArgs are the NetworkCapacity args that decide its scores.
type CapacityArgs struct {
	DefaultPodMbps           int64 `json:"defaultPodMbps"`
	TargetUtilizationPercent int32 `json:"targetUtilizationPercent"`
}

// DriftedPod is one running pod whose node has drifted.
type DriftedPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	// MilliThen is its node's score when the plugin first saw the pod
	// running with fresh measurements; MilliNow its score now.
	MilliThen int64 `json:"milliThen"`
	MilliNow  int64 `json:"milliNow"`
	// Best is the best-scored node the pod could run on now (KNS-3's
	// filter, taints, cordons), scored MilliBest.
	Best      string `json:"best"`
	MilliBest int64  `json:"milliBest"`
	// Since is when the node fell below Best by the margin.
	Since time.Time `json:"since"`
}

// Simulator is what the plugin knows of its simulator.
type Simulator struct {
	// URL is the /simulate URL, without credentials.
	URL string `json:"url"`
	// LastSuccess and LastFailure are the plugin's last good and last
	// failed requests; LastError is the failure's error.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	LastFailure time.Time `json:"lastFailure,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	// Simulation is the newest simulation the plugin holds; nil before
	// the first good answer.
	Simulation *Simulation `json:"simulation,omitempty"`
}

// Down reports whether the simulator's last request failed.
func (s Simulator) Down() bool { return s.LastFailure.After(s.LastSuccess) }

// Simulation is one answer of the simulator, as the plugin scores it.
type Simulation struct {
	// Received is when the plugin got the answer.
	Received time.Time `json:"received"`
	// Source, Timestamp and WindowSeconds are the answer's own: where its
	// numbers come from, when they were sampled, over how long a window.
	// The simulator wrote them: readers must escape them before printing.
	Source        string    `json:"source,omitempty"`
	Timestamp     time.Time `json:"timestamp,omitzero"`
	WindowSeconds int       `json:"windowSeconds,omitempty"`
	// MilliScores are the plugin's raw scores, int64(score × 1000), by node.
	MilliScores map[string]int64 `json:"milliScores"`
	// Unscored counts the nodes sent without a finite score; Omitted the
	// scored nodes left out of MilliScores to keep the document bounded.
	Unscored int `json:"unscored,omitempty"`
	Omitted  int `json:"omitted,omitempty"`
	// Metrics are the latency, bandwidth and loss the answer gave behind
	// each node's score, by node, for nodes with any; MetricsOmitted says
	// they were all left out to keep the document bounded.
	Metrics        map[string]NodeMetrics `json:"metrics,omitempty"`
	MetricsOmitted bool                   `json:"metricsOmitted,omitempty"`
	// Pairs is what the answer says of the network between the cluster's
	// nodes, as NetworkPeers reads it, published by a profile that scores
	// with NetworkPeers: empty, not nil, when the answer says nothing of
	// pairs that the plugin can use. nil from a scheduler older than the
	// field, and when PairsOmitted says they were left out to keep the
	// document bounded (they go before the metrics).
	Pairs        *Pairs `json:"pairs,omitempty"`
	PairsOmitted bool   `json:"pairsOmitted,omitempty"`
}

// Pairs is an answer's pairs key as NetworkPeers ranks by it
// (scheduler/plugins/network.Pairs): each node's network coordinate, and
// the metrics of the pairs measured directly that were fresh when the
// answer was sampled. A metric too old to be taken is left out, as the
// plugin leaves it out; so is a pair with no metric left.
type Pairs struct {
	Coordinates map[string]Coordinate `json:"coordinates,omitempty"`
	// Measured is sorted by From, then To; From before To by name.
	Measured []MeasuredPair `json:"measured,omitempty"`
}

// Coordinate is a node's Vivaldi network coordinate, in the units and
// semantics of serf's coordinate package: the distance between two nodes'
// coordinates, in seconds, estimates their round trip.
type Coordinate struct {
	Vec        []float64 `json:"vec"`
	Error      float64   `json:"error"`
	Adjustment float64   `json:"adjustment"`
	Height     float64   `json:"height"`
}

// MeasuredPair is one pair of nodes the simulator measured directly; a
// metric not measured, or too old, is nil.
type MeasuredPair struct {
	From          string        `json:"from"`
	To            string        `json:"to"`
	LatencyMs     *PairEstimate `json:"latencyMs,omitempty"`
	PacketLoss    *PairEstimate `json:"packetLoss,omitempty"`
	BandwidthMbps *PairEstimate `json:"bandwidthMbps,omitempty"`
}

// PairEstimate is one measured metric of a pair: its value in [Low,
// High], the served 95 % interval; AtLeast for a bandwidth the probes
// could only bound from below.
type PairEstimate struct {
	Value   float64 `json:"value"`
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
	AtLeast bool    `json:"atLeast,omitempty"`
}

// DefaultWindow is the window a reader assumes of a simulation that names
// none; MaxWindow the longest it takes of one that names one: a longer one
// would keep any simulation fresh.
const (
	DefaultWindow = 30 * time.Second
	MaxWindow     = time.Hour
)

// Window is the span a simulation's numbers were sampled over, as its
// readers take it: windowSeconds, DefaultWindow when it is not positive,
// at most MaxWindow (compared in seconds: a Duration overflows past 292
// years).
func Window(windowSeconds int) time.Duration {
	switch {
	case windowSeconds <= 0:
		return DefaultWindow
	case windowSeconds >= int(MaxWindow/time.Second):
		return MaxWindow
	}
	return time.Duration(windowSeconds) * time.Second
}

// NodeMetrics are a node's metrics in an answer; nil is unknown.
type NodeMetrics struct {
	LatencyMs     *float64 `json:"latencyMs,omitempty"`
	BandwidthMbps *float64 `json:"bandwidthMbps,omitempty"`
	PacketLoss    *float64 `json:"packetLoss,omitempty"`
	// BandwidthAtLeast says BandwidthMbps is only a lower bound: the
	// simulator could not measure the link above it.
	BandwidthAtLeast bool `json:"bandwidthAtLeast,omitempty"`
	// LinkUseMbps is the traffic measured on the node's link; nil when
	// not measured.
	LinkUseMbps *float64 `json:"linkUseMbps,omitempty"`
	// Capacity is the link as NetworkCapacity counts it for a new pod
	// when the status is written; nil when the profile does not run
	// NetworkCapacity or the answer gives the node no bandwidth.
	Capacity *LinkCapacity `json:"capacity,omitempty"`
}

// LinkCapacity is a node's link as NetworkCapacity counts it for a new
// pod (scheduler/plugins/capacity).
type LinkCapacity struct {
	// RankedBandwidthMbps is the bandwidth NetworkCapacity ranks the link
	// at: a faster link's, when this one's was measured within that one's
	// noise; BandwidthMbps otherwise.
	RankedBandwidthMbps float64 `json:"rankedBandwidthMbps"`
	// CountedMbps is the need of the CountedPods pods placed on the node
	// after CountedSince, which the measurement does not hold yet:
	// declared, or the plugin's defaultPodMbps.
	CountedMbps  float64   `json:"countedMbps"`
	CountedPods  int       `json:"countedPods"`
	CountedSince time.Time `json:"countedSince"`
	// FreeMbps is what is left: BandwidthMbps − LinkUseMbps − CountedMbps,
	// at least 0.
	FreeMbps float64 `json:"freeMbps"`
}

// keyName is what a ConfigMap data key may hold.
var keyName = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// Key is the ConfigMap data key of profile's document: the name itself
// when a key may hold it, else a hash of it (the document names the
// profile either way).
func Key(profile string) string {
	if keyName.MatchString(profile) && len(profile) <= 240 {
		return profile + ".json"
	}
	sum := sha256.Sum256([]byte(profile))
	return "profile-" + hex.EncodeToString(sum[:8]) + ".json"
}
