package value

import (
	"cmp"
	"time"
)

// The four placements of every trial of the peers benchmark (e2e
// TestValuePeers), in the order a report lists them: the default
// scheduler's first, which the first ratios compare with, then preferred
// pod affinity, which the second ratios compare with.
const (
	PlacementAffinity = "preferred pod affinity"
	PlacementNoPeers  = "KNS-3 live, without NetworkPeers"
	PlacementPeers    = "KNS-3 live, with NetworkPeers"
)

// PeersPlacements are the peers benchmark's placements in report order.
var PeersPlacements = []string{PlacementDefault, PlacementAffinity, PlacementNoPeers, PlacementPeers}

// The peers benchmark's cases: whether the server's node has room for its
// clients.
const (
	// CaseRoom: the server asks for little CPU, and its node can take
	// every client beside it.
	CaseRoom = "room"
	// CaseFull: the server asks for nearly all its node's free CPU, and
	// no client fits beside it.
	CaseFull = "full"
)

// PeersCases are the cases in the order a benchmark runs them.
var PeersCases = []string{CaseRoom, CaseFull}

// PeersFileName is where a run keeps workload's PeersReport, in its
// output directory for the peers benchmark.
func PeersFileName(workload string) string {
	return cmp.Or(workload, WorkloadNetbench) + ".json"
}

// PeersReport is one run of the peers benchmark for one workload: in each
// case, a server and its clients placed four ways, trial after trial, on
// one kind cluster whose path between two nodes is shaped.
type PeersReport struct {
	Version         string    `json:"version"`
	Date            time.Time `json:"date"`
	DurationSeconds float64   `json:"duration_seconds"`
	Workload        string    `json:"workload"`
	// ClientMbps is what each client asks for, and declares.
	ClientMbps     float64 `json:"client_mbps"`
	PingIntervalMs float64 `json:"ping_interval_ms"`
	// Order is how the trials ordered the placements (OrderBalanced).
	Order string `json:"order"`
	// ShapedPair are the two nodes the server may go to, the path between
	// them shaped as PairShape says; ControlPlane is the third node the
	// clients may go to.
	ShapedPair   []string `json:"shaped_pair"`
	PairShape    string   `json:"pair_shape"`
	ControlPlane string   `json:"control_plane"`
	// ClientCPUMillis is each client's CPU request.
	ClientCPUMillis int64 `json:"client_cpu_millis"`
	// Cases are Levels named by case (CaseRoom, CaseFull), each with
	// PeersPlacements; every placement carries its Server.
	Cases []Level `json:"cases"`
}

// ServerFull says whether p's server left its node no room for all of
// clients: a placement beside the server cannot take them.
func (p Placement) ServerFull(clients int) bool {
	return p.Server != nil && p.Server.Room < clients
}

// Across counts p's clients on the node across the shaped pair from p's
// server, whose path to the server is the slow one.
func (p Placement) Across(pair []string) int {
	if p.Server == nil || len(pair) != 2 {
		return 0
	}
	switch p.Server.Node {
	case pair[0]:
		return p.Nodes[pair[1]]
	case pair[1]:
		return p.Nodes[pair[0]]
	}
	return 0
}
