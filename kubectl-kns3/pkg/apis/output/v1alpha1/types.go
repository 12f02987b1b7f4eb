package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version -o json|yaml name the output with.
var GroupVersion = schema.GroupVersion{Group: "kns3.dev", Version: "v1alpha1"}

// Filter verdicts of a Row.
const (
	Pass   = "pass"
	Reject = "reject"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Explanation is `kubectl kns3 explain POD`'s answer, also its JSON and
// YAML output.
type Explanation struct {
	metav1.TypeMeta `json:",inline"`
	Namespace       string `json:"namespace"`
	Pod             string `json:"pod"`
	SchedulerName   string `json:"schedulerName"`
	// Node is the pod's node; "" while it is pending.
	Node                 string `json:"node,omitempty"`
	PlacementEvent       string `json:"placementEvent,omitempty"`
	LastFailedScheduling string `json:"lastFailedScheduling,omitempty"`
	// Normalization is CustomScorePlugin's (MinMax or Absolute).
	Normalization string `json:"normalization"`
	// Scoring is how the pod's profile ranks nodes among KNS-3's plugins:
	// each plugin with its weight, as the scheduler published it;
	// ScoringAssumed says it published none, and CustomScorePlugin alone is
	// assumed.
	Scoring        []ScoringPlugin `json:"scoring"`
	ScoringAssumed bool            `json:"scoringAssumed,omitempty"`
	// DecidedBy is the KNS-3 plugin whose points put the pod's node ahead
	// of the runner-up by the most; "" when none did, or when it cannot be
	// told (DecidedFrom is then empty too). DecidedFrom says where it was
	// read: DecidedFromEvent or DecidedFromStatus. RunnerUp is the other
	// candidate with the most points here.
	DecidedBy   string `json:"decidedBy,omitempty"`
	DecidedFrom string `json:"decidedFrom,omitempty"`
	RunnerUp    string `json:"runnerUp,omitempty"`
	// Caveats say why the candidate ranked first here may not be the pod's
	// node; set only when it is not.
	Caveats []string `json:"caveats,omitempty"`
	// Unrecomputed names the KNS-3 plugins whose points could not be
	// worked out from the status, and why; they are left out of Points.
	Unrecomputed []string `json:"unrecomputed,omitempty"`
	// Simulation is the newest simulation the profile holds; nil when none
	// (SimulatorError says why).
	Simulation     *Simulation `json:"simulation,omitempty"`
	SimulatorError string      `json:"simulatorError,omitempty"`
	// Peers is what the pod declares of its peers and where they are now,
	// as NetworkPeers reads them; nil when the profile does not score with
	// NetworkPeers or the pod declares no peers by annotation.
	Peers *Peers `json:"peers,omitempty"`
	// Nodes has one row per node: candidates by points, most first (by
	// name among equals), then the other nodes, by name.
	Nodes []Row `json:"nodes"`
}

// Where an Explanation's DecidedBy was read.
const (
	// DecidedFromEvent: the pod's placement event names it.
	DecidedFromEvent = "placementEvent"
	// DecidedFromStatus: worked out here, from the published status.
	DecidedFromStatus = "status"
)

// ScoringPlugin is one KNS-3 plugin a profile scores nodes with.
type ScoringPlugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight"`
}

// PluginScore is one KNS-3 plugin's normalized score of a node (0–100,
// before its weight).
type PluginScore struct {
	Plugin     string `json:"plugin"`
	Normalized int64  `json:"normalized"`
}

// Peers is a pod's peers as NetworkPeers finds them: the pods of its
// namespace that its annotation's selectors match, other than itself,
// placed on a node and not finished or leaving.
type Peers struct {
	// Selectors is the pod's peers annotation; TrafficMbps its declared
	// traffic to them all, 0 when it declares none.
	Selectors   string  `json:"selectors"`
	TrafficMbps float64 `json:"trafficMbps,omitempty"`
	// Invalid says why the annotations cannot be read: the scheduler then
	// places the pod as if it declared no peers.
	Invalid string `json:"invalid,omitempty"`
	// Hosts are the nodes that host the peers now, most peers first.
	Hosts []PeerHost `json:"hosts,omitempty"`
	// PlacedAfter names the peers (namespace/name on node) placed after
	// the pod, which the cycle that placed it did not see, at most 5;
	// PlacedAfterCount counts them all.
	PlacedAfter      []string `json:"placedAfter,omitempty"`
	PlacedAfterCount int      `json:"placedAfterCount,omitempty"`
	// Skipped says why NetworkPeers gives the candidates no points, as its
	// PreScore would skip: no peer placed, no pairs in the simulation, no
	// candidate's cost known. Empty when it scores them.
	Skipped string `json:"skipped,omitempty"`
}

// PeerHost is a node that hosts peers of the pod, and how many.
type PeerHost struct {
	Node string `json:"node"`
	Pods int    `json:"pods"`
}

// PeersCost is what reaching the pod's peers costs from a candidate, as
// NetworkPeers ranks it: the traffic-weighted mean over the peers' nodes
// of a round trip's cost (its round trip, stretched by the share of the
// pair's free bandwidth the pod's traffic would take, plus 200 ms per lost
// packet), in milliseconds.
type PeersCost struct {
	// Known is false when a pair to one of the peers' nodes is not known
	// (neither measured nor estimated by coordinates): the candidate then
	// scores 0.
	Known bool `json:"known"`
	// Ms is the cost, in [LowMs, HighMs]; RankedMs is the cost it ranks at
	// once costs within each other's noise, or too close to count, tie.
	Ms       float64 `json:"ms,omitempty"`
	LowMs    float64 `json:"lowMs,omitempty"`
	HighMs   float64 `json:"highMs,omitempty"`
	RankedMs float64 `json:"rankedMs,omitempty"`
	// Measured and Estimated count the pairs to the peers' nodes measured
	// directly and estimated by the nodes' coordinates.
	Measured  int `json:"measured,omitempty"`
	Estimated int `json:"estimated,omitempty"`
}

// Simulation describes the simulator's answer the scores come from.
type Simulation struct {
	// Received is when the scheduler got it.
	Received      metav1.Time `json:"received"`
	Source        string      `json:"source,omitempty"`
	Timestamp     metav1.Time `json:"timestamp,omitzero"`
	WindowSeconds int         `json:"windowSeconds,omitempty"`
	// Omitted counts the nodes whose scores the scheduler left out of its
	// status to keep it bounded (their rows show none).
	Omitted int `json:"omitted,omitempty"`
}

// Row is one node.
type Row struct {
	Node string `json:"node"`
	// Filter is CustomFilterPlugin's verdict (Pass or Reject), with its
	// reason when it rejects.
	Filter       string `json:"filter"`
	FilterReason string `json:"filterReason,omitempty"`
	// Other names a check of upstream's filters the node fails that
	// Build can tell from the pod and the node alone: unschedulable, an
	// untolerated NoSchedule or NoExecute taint, the pod's required node
	// affinity or node selector. Resources, pod affinity and the like are
	// left to the scheduler's FailedScheduling message.
	Other string `json:"otherFilters,omitempty"`
	// SimulatorScore is the node's score in the newest simulation; nil
	// when it has none for the node.
	SimulatorScore *float64 `json:"simulatorScore,omitempty"`
	// LatencyMs, BandwidthMbps and PacketLoss are the metrics behind the
	// score (measured, with a live simulator); nil when unknown.
	LatencyMs     *float64 `json:"latencyMs,omitempty"`
	BandwidthMbps *float64 `json:"bandwidthMbps,omitempty"`
	PacketLoss    *float64 `json:"packetLoss,omitempty"`
	// BandwidthAtLeast says BandwidthMbps is only a lower bound: the
	// simulator could not measure the link above it.
	BandwidthAtLeast bool `json:"bandwidthAtLeast,omitempty"`
	// LinkUseMbps is the traffic measured on the node's link; nil when
	// not measured.
	LinkUseMbps *float64 `json:"linkUseMbps,omitempty"`
	// FreeMbps is what NetworkCapacity finds free on the link for the pod:
	// the bandwidth less the measured use and the need of the pods placed
	// since the measurement, the pod itself not among them (OwnNeedMbps
	// says what of its own need was taken off); nil when the profile does
	// not score with NetworkCapacity or the link is not described.
	FreeMbps    *float64 `json:"freeMbps,omitempty"`
	OwnNeedMbps float64  `json:"ownNeedMbps,omitempty"`
	// PeersCost is what reaching the pod's peers costs from the node, as
	// NetworkPeers ranks it; nil for a non-candidate, and when NetworkPeers
	// costs no node (Explanation.Peers says why).
	PeersCost *PeersCost `json:"peersCost,omitempty"`
	// Scores are each KNS-3 plugin's normalized score among the candidates
	// (nodes that pass the checks above), in Scoring's order, as its
	// NormalizeScore would make them; a plugin its PreScore would skip
	// (no candidate scored) has none. None for a non-candidate.
	Scores []PluginScore `json:"scores,omitempty"`
	// Points is the candidate's sum of weight × normalized score over
	// Scores: what ranks the candidates; nil for a non-candidate, or when
	// no plugin scores.
	Points *int64 `json:"points,omitempty"`
	// Rank is the candidate's place by Points (ties share it); 0 for a
	// non-candidate, or when no plugin scores.
	Rank int `json:"rank,omitempty"`
	// Chosen marks the pod's node.
	Chosen bool `json:"chosen,omitempty"`
}

// Candidate reports whether the row is a node the pod could go to as far
// as Build can tell.
func (r Row) Candidate() bool { return r.Filter == Pass && r.Other == "" }

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Status is `kubectl kns3 status`'s answer, also its JSON and YAML output.
type Status struct {
	metav1.TypeMeta `json:",inline"`
	// Install is the install's kind and namespace.
	Install   string         `json:"install"`
	Namespace string         `json:"namespace"`
	Pods      []SchedulerPod `json:"pods"`
	// PodsError says why the pods could not be listed.
	PodsError string `json:"podsError,omitempty"`
	// Ignored are pods wearing KNS-3's label that its install did not make.
	Ignored []string `json:"ignored,omitempty"`
	// Profiles are as their schedulers published them; StatusError says
	// why there are none.
	Profiles    []Profile `json:"profiles"`
	StatusError string    `json:"statusError,omitempty"`
	// Placements are the newest placement events, newest first.
	Placements []Placement `json:"placements"`
}

// SchedulerPod is one scheduler pod.
type SchedulerPod struct {
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	Node           string `json:"node"`
	Phase          string `json:"phase"`
	SchedulerReady bool   `json:"schedulerReady"`
	SimulatorReady bool   `json:"simulatorReady"`
	Restarts       int32  `json:"restarts"`
	// Publishing: this pod wrote the published status (the leader).
	Publishing bool `json:"publishing"`
}

// Profile is one profile's CustomScorePlugin.
type Profile struct {
	Name string `json:"name"`
	// Instance published it at Published; Stale when that is longer ago
	// than its heartbeat allows.
	Instance  string      `json:"instance"`
	Published metav1.Time `json:"published"`
	Stale     bool        `json:"stale"`
	// RefreshMode and Normalization are the plugin's args; Breaker is
	// closed or open (none in Background mode).
	RefreshMode   string `json:"refreshMode"`
	Normalization string `json:"normalization"`
	Breaker       string `json:"breaker,omitempty"`
	// ScoredCycles and Fallbacks count cycles scored with and without a
	// simulation since the plugin started; FallbacksTotal is the sum.
	ScoredCycles   int64            `json:"scoredCycles"`
	Fallbacks      map[string]int64 `json:"fallbacks"`
	FallbacksTotal int64            `json:"fallbacksTotal"`
	Simulator      SimulatorStatus  `json:"simulator"`
	// Drift lists the profile's running pods whose node has drifted below
	// the best feasible alternative; DriftOmitted counts those the
	// scheduler left out. Advisory: KNS-3 never evicts.
	Drift        []DriftedPod `json:"drift,omitempty"`
	DriftOmitted int          `json:"driftOmitted,omitempty"`
}

// DriftedPod is a running pod whose node scores below the best node it
// could run on by the profile's margin, for longer than a window.
type DriftedPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	// ScoreThen is its node's simulator score when the scheduler first
	// saw the pod running, ScoreNow its score now.
	ScoreThen float64 `json:"scoreThen"`
	ScoreNow  float64 `json:"scoreNow"`
	// Best is the best-scored node it could run on now, scored BestScore.
	Best      string      `json:"best"`
	BestScore float64     `json:"bestScore"`
	Since     metav1.Time `json:"since"`
}

// SimulatorStatus is what the profile's plugin knows of its simulator.
type SimulatorStatus struct {
	Down        bool        `json:"down"`
	LastSuccess metav1.Time `json:"lastSuccess,omitzero"`
	LastFailure metav1.Time `json:"lastFailure,omitzero"`
	LastError   string      `json:"lastError,omitempty"`
	// The newest simulation's metadata and size; Received is zero
	// without one.
	Received      metav1.Time `json:"received,omitzero"`
	Source        string      `json:"source,omitempty"`
	Timestamp     metav1.Time `json:"timestamp,omitzero"`
	WindowSeconds int         `json:"windowSeconds,omitempty"`
	Nodes         int         `json:"nodes"`
}

// Placement is one placement event.
type Placement struct {
	Time      metav1.Time `json:"time"`
	Namespace string      `json:"namespace"`
	Pod       string      `json:"pod"`
	Message   string      `json:"message"`
}

// SetKind names e for -o json|yaml: kubectl's printers want a kind.
func (e *Explanation) SetKind() *Explanation {
	e.TypeMeta.SetGroupVersionKind(GroupVersion.WithKind("PlacementExplanation"))
	return e
}

// SetKind names s for -o json|yaml: kubectl's printers want a kind.
func (s *Status) SetKind() *Status {
	s.TypeMeta.SetGroupVersionKind(GroupVersion.WithKind("Status"))
	return s
}
