//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/test/perf/value"
)

// The peers value benchmark's own flags; it reads the value benchmark's
// -kns3.value-duration, -kns3.value-trials and -kns3.value-workloads too
// (valueflags_test.go).
var (
	valuePeersOut   = flag.String("kns3.value-peers-out", "", "run the peers value benchmark (make bench: hack/bench/run.sh full value-peers) and write its results into this directory, one JSON file per workload")
	valuePeersCases = flag.String("kns3.value-peers-cases", strings.Join(value.PeersCases, ","), "the peers value benchmark's cases, comma-separated: room (the server's node can take every client) and full (it can take none)")
)

// peersValueClients is how many clients each placement runs: 96 Mbit/s
// together, nearly five times what the shaped pair carries, and as many
// as the control plane has CPU requests left for on a 2-core host.
const peersValueClients = 6

// TestValuePeers is the peers value benchmark, run by make bench
// (hack/bench/run.sh full value-peers) and by no other run: a server and
// its clients, all placed by the scheduler under test, on a cluster
// whose path between the two workers the server may take is slow and
// lossy. They are placed by the default scheduler, with upstream's
// preferred pod affinity to the server, and by KNS-3 live without and
// with NetworkPeers, measured side by side (docs/value-peers.md). It runs
// on the suite's deploy/live install.
func TestValuePeers(t *testing.T) {
	if *valuePeersOut == "" {
		t.Skip("the peers value benchmark runs with -kns3.value-peers-out (make bench)")
	}
	f := inNamespace(features.New("peers value benchmark"), "kns3-e2e-value-peers").
		WithSetup("deploy/live, with the suite's window", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			useLive(ctx, t)
			return ctx
		}).
		Assess("a server and its clients placed by the default scheduler, with preferred pod affinity, and by KNS-3 live without and with NetworkPeers",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				(&peersRun{valueRun: &valueRun{cluster: clusterFrom(ctx, t)}}).run(ctx)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}

// peersRun is one run of the peers value benchmark.
type peersRun struct {
	*valueRun
	controlPlaneNode string
	// since is when the last placement's traffic ended (or the pair was
	// shaped): the next is made on measurements from after it.
	since time.Time
}

// A placement of the peers benchmark: which scheduler places the server
// and the clients; affinity gives the clients upstream's preferred pod
// affinity to the server's node, peers declares the server as their
// peer.
type peersPlacement struct {
	name, scheduler string
	affinity, peers bool
}

// peersPlacements are the placements, in value.PeersPlacements' order.
var peersPlacements = []peersPlacement{
	{name: value.PlacementDefault, scheduler: "default-scheduler"},
	{name: value.PlacementAffinity, scheduler: "default-scheduler", affinity: true},
	{name: value.PlacementNoPeers, scheduler: noPeersProfile},
	{name: value.PlacementPeers, scheduler: config.ProfileName, peers: true},
}

// run sets the cluster up (the live profile without NetworkPeers beside
// it, CoreDNS off the two workers, the pair between them shaped and
// measured directly), then runs each workload's cases, trial after trial,
// the four placements in balanced order (value.TrialOrder), and writes a
// report per workload.
func (r *peersRun) run(ctx context.Context) {
	r.t.Helper()
	cases, workloads := r.parsePeersFlags()
	if err := os.MkdirAll(*valuePeersOut, 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.controlPlaneNode = r.cluster.controlPlane(ctx)
	// The scheduler restarts with it, its simulator too: first.
	r.runNoPeersProfile(ctx)
	r.clearShapedWorkers(ctx)
	r.shapePair(ctx)
	r.since = time.Now()
	stop := r.keepInterest(ctx, r.rigorous, r.plain)
	defer stop()
	r.serveMeasurementsAlone("value-peers")
	// The restarted simulator warms up, then measures the pairs the
	// interest asks for.
	first := r.awaitPairsApart(6*liveWindow + 3*twoWindows + 60*time.Second)
	for _, w := range []string{r.rigorous, r.plain} {
		r.t.Logf("the pair of %s and %s: %s", r.controlPlaneNode, w, describePair(pairOf(first, r.controlPlaneNode, w)))
	}
	r.t.Logf("the shaped pair of %s and %s: %s", r.rigorous, r.plain, describePair(pairOf(first, r.rigorous, r.plain)))
	r.checkControlPlaneRoom(ctx)
	for _, workload := range workloads {
		report := value.PeersReport{Version: kns3.Version, Date: time.Now().UTC(), DurationSeconds: valueDuration.Seconds(),
			Workload: workload, ClientMbps: clientMbps, PingIntervalMs: float64(clientPingInterval.Milliseconds()),
			Order: value.OrderBalanced, ShapedPair: []string{r.rigorous, r.plain}, ControlPlane: r.controlPlaneNode,
			PairShape:       fmt.Sprintf("%g Mbit/s and %.1f%% loss each way", valuePairShape.RateMbit, 100*valuePairShape.Loss),
			ClientCPUMillis: peersClientCPU,
		}
		for _, name := range cases {
			report.Cases = append(report.Cases, r.runCase(ctx, workload, name))
		}
		r.writePeersReport(report)
	}
}

// parsePeersFlags reads -kns3.value-peers-cases and -kns3.value-workloads.
func (r *peersRun) parsePeersFlags() (cases, workloads []string) {
	r.t.Helper()
	for _, name := range strings.Split(*valuePeersCases, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !slices.Contains(value.PeersCases, name) {
			r.t.Fatalf("-kns3.value-peers-cases: unknown case %q, want %s", name, strings.Join(value.PeersCases, " or "))
		}
		cases = append(cases, name)
	}
	if len(cases) == 0 {
		r.t.Fatal("-kns3.value-peers-cases is empty: nothing to run")
	}
	return cases, r.parseWorkloads()
}

// runCase runs workload's case, trial after trial.
func (r *peersRun) runCase(ctx context.Context, workload, name string) value.Level {
	r.t.Helper()
	level := value.Level{Name: name, Clients: peersValueClients, DemandMbps: peersValueClients * clientMbps, Placements: value.PeersPlacements}
	for trial := range *valueTrials {
		tr := value.Trial{Placements: make([]value.Placement, len(peersPlacements))}
		for _, i := range value.TrialOrder(len(peersPlacements), trial) {
			pl := peersPlacements[i]
			before := r.awaitPairsApart(3*twoWindows + 30*time.Second)
			p := r.runPlacement(ctx, workload, name, pl)
			r.since = time.Now()
			tr.Order = append(tr.Order, pl.name)
			tr.Placements[i] = p
			r.t.Logf("%s, %s, trial %d: %-34s p50 %7.1f ms  p99 %7.1f ms  %5.1f Mbit/s  clients %v; server on %s (%d m CPU, room for %d client(s)); the shaped pair: %s",
				workload, name, trial+1, p.Name, p.P50Ms, p.P99Ms, p.Mbps, p.Nodes, p.Server.Node, p.Server.CPUMillis, p.Server.Room,
				describePair(pairOf(before, r.rigorous, r.plain)))
			r.checkPeersPlacement(name, pl, p)
		}
		level.Trials = append(level.Trials, tr)
	}
	level.Summarise()
	vsAffinity := level.Against(1)
	for i, s := range level.Summary {
		a := vsAffinity[i]
		r.t.Logf("%s, %s (%d clients): %-34s median p99 %.1f ms (%.2f× default, worst %.2f×; %.2f× affinity, worst %.2f×), median %.1f Mbit/s (%.2f× default, worst %.2f×; %.2f× affinity, worst %.2f×)",
			workload, name, level.Clients, s.Name, s.MedianP99Ms, s.MedianP99Ratio, s.WorstP99Ratio, a.MedianP99Ratio, a.WorstP99Ratio,
			s.MedianMbps, s.MedianMbpsRatio, s.WorstMbpsRatio, a.MedianMbpsRatio, a.WorstMbpsRatio)
	}
	return level
}

// runPlacement places workload's server and then its clients as pl says,
// in case, runs them and sums up what the clients measured.
func (r *peersRun) runPlacement(ctx context.Context, workload, caseName string, pl peersPlacement) value.Placement {
	r.t.Helper()
	label := placementLabel(pl.name)
	serverCPU := int64(peersServerCPU)
	if caseName == value.CaseFull {
		serverCPU = r.fullServerCPU(ctx)
	}
	server := r.placeServer(ctx, workload, pl.scheduler, label, serverCPU)
	room := int(r.freeCPU(ctx, server.Spec.NodeName) / peersClientCPU)
	burst := r.burstClient()
	barrier := clientBarrier(label)
	var names []string
	for i := range peersValueClients {
		pod := netbenchClient(fmt.Sprintf("client-%s-%d", label, i), pl.scheduler, serverFlag(workload, server.Status.PodIP), barrier, peersValueClients)
		peersClient(pod, pl, label)
		if _, err := burst.CoreV1().Pods(r.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			r.t.Fatal(err)
		}
		names = append(names, pod.Name)
	}
	p, _ := r.awaitClients(ctx, pl.name, names)
	r.deleteAll(ctx, "placement="+label)
	p.Summarise()
	p.Server = &value.Server{Node: server.Spec.NodeName, CPUMillis: serverCPU, Room: room}
	return p
}

// checkPeersPlacement checks what a placement must follow: the server
// goes to one of the two workers, the only nodes it may take; in the full
// case its node has no room left for a client, and none goes there; with
// NetworkPeers no client goes across the shaped pair from the server, to
// the one node whose path to it is slow and lossy.
func (r *peersRun) checkPeersPlacement(caseName string, pl peersPlacement, p value.Placement) {
	r.t.Helper()
	pair := []string{r.rigorous, r.plain}
	if !slices.Contains(pair, p.Server.Node) {
		r.t.Errorf("%s: the server is on %s, want one of %v, the nodes it may take", p.Name, p.Server.Node, pair)
	}
	if caseName == value.CaseFull && (p.Server.Room > 0 || p.Nodes[p.Server.Node] > 0) {
		r.t.Errorf("%s, full case: the server's node %s has room for %d client(s) and took %d, want none: the case is not what it says",
			p.Name, p.Server.Node, p.Server.Room, p.Nodes[p.Server.Node])
	}
	if across := p.Across(pair); pl.peers && across > 0 {
		r.t.Errorf("%s: %d client(s) across the shaped pair from the server on %s (clients %v), want none",
			p.Name, across, p.Server.Node, p.Nodes)
	}
}

// writePeersReport writes report into -kns3.value-peers-out.
func (r *peersRun) writePeersReport(report value.PeersReport) {
	r.t.Helper()
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*valuePeersOut, value.PeersFileName(report.Workload)), data, 0o644); err != nil {
		r.t.Fatal(err)
	}
}
