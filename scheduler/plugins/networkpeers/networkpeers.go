// Package networkpeers implements NetworkPeers, which places a pod near
// the pods it talks to: it scores each candidate node by what the measured
// network costs between that node and the nodes that host the pod's peers,
// weighted by the traffic the pod expects to exchange with them.
//
// A pod declares its peers with annotations (scheduler/plugins/peers), or
// through the AppGroup of scheduler-plugins' networkaware plugins, when
// that custom resource is installed (appgroup.go). PreScore finds the
// peers among the pods of the scheduler's snapshot, which holds the pods
// placed and not yet bound, so the pods of one burst see each other
// (peers.go). It reads the
// network from the simulation CustomScorePlugin's PreScore took for the
// cycle (list it after CustomScorePlugin at preScore), and never asks the
// simulator for it: the answer's pairs key (network.Pairs) holds each
// node's network coordinate and the pairs measured directly. A pair's cost
// is its round trip, stretched by the share of its free bandwidth the pod
// would take, plus a penalty per lost packet; costs too close to tell
// apart tie, by the rule the simulator ties its scores by. That cost model
// lives beside the plugins (scheduler/plugins/peers), where kubectl kns3
// explain works the plugin's points out with it too.
//
// A background loop tells the simulator which nodes host peers, so that it
// measures the pairs between them directly (interest.go). Enabled at
// preFilter and filter as well (opt-in), the plugin also rejects a node
// whose pair to a peer's node has less free bandwidth than the pod
// declares for the peers there (filter.go).
package networkpeers

import (
	"context"
	"io"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = status.NetworkPeers

// NetworkPeers is the NetworkPeers plugin. What a cycle knows is in its
// CycleState; the plugin keeps only its readers and its loops.
type NetworkPeers struct {
	args *apiconfig.NetworkPeersArgs
	// nodeInfos lists the nodes of the cycle's snapshot, with their pods.
	nodeInfos func() ([]fwk.NodeInfo, error)
	// parallelize runs work(i) for i in [0, n), in parallel where it can.
	parallelize func(ctx context.Context, n int, work func(int))
	// recorder records the Warning events of pods whose declaration cannot
	// be read; nil without one (a test's plugin).
	recorder  events.EventRecorder
	appGroups *appGroups
	// interest tells the simulator which pairs matter; nil without
	// informers.
	interest *interest
	stop     context.CancelFunc
	wg       sync.WaitGroup
}

var (
	_ fwk.PreScorePlugin  = &NetworkPeers{}
	_ fwk.ScorePlugin     = &NetworkPeers{}
	_ fwk.ScoreExtensions = &NetworkPeers{}
	_ fwk.SignPlugin      = &NetworkPeers{}
	_ io.Closer           = &NetworkPeers{}
)

// New initializes the plugin from its NetworkPeersArgs. Invalid args fail
// scheduler start-up with the field named. It starts its goroutines, ended
// by Close or by the end of ctx: the AppGroups' discovery and informer,
// and the loop that tells the simulator which pairs matter.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := getArgs(obj)
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx).WithValues("plugin", Name)
	pl := &NetworkPeers{args: args, appGroups: &appGroups{}, parallelize: sequentially,
		nodeInfos: func() ([]fwk.NodeInfo, error) { return nil, nil }}
	ctx, pl.stop = context.WithCancel(klog.NewContext(ctx, logger))
	if h == nil {
		return pl, nil
	}
	// The placement event weighs its points with the other KNS-3 plugins'
	// (profile.Scoring); its args change none of them.
	profile.DeclareScoring(h, status.ScorePlugin{Name: Name})
	pl.nodeInfos = func() ([]fwk.NodeInfo, error) { return h.SnapshotSharedLister().NodeInfos().List() }
	pl.parallelize = func(ctx context.Context, n int, work func(int)) { h.Parallelizer().Until(ctx, n, work, Name) }
	pl.recorder = h.EventRecorder()
	if h.ClientSet() != nil && h.KubeConfig() != nil {
		if client, err := dynamic.NewForConfig(h.KubeConfig()); err != nil {
			logger.Info("AppGroups are not read: no dynamic client", "err", err)
		} else {
			pl.wg.Go(func() { pl.appGroups.watch(ctx, h.ClientSet().Discovery(), client) })
		}
	}
	if h.SharedInformerFactory() != nil {
		in, err := newInterest(args.SimulatorURL, h.ProfileName(), h.SharedInformerFactory().Core().V1().Pods().Lister(), pl.read)
		if err != nil {
			return nil, err
		}
		pl.interest = in
		stopHearing := network.OnNewSimulation(h, in.heard)
		pl.wg.Go(func() {
			defer stopHearing()
			in.run(ctx)
		})
	}
	logger.V(1).Info("Plugin configured", "simulatorURL", redacted(args.SimulatorURL))
	return pl, nil
}

// sequentially runs work(i) for i in [0, n) one after the other: a test's
// plugin has no parallelizer.
func sequentially(_ context.Context, n int, work func(int)) {
	for i := range n {
		work(i)
	}
}

// Name returns the name of the plugin.
func (pl *NetworkPeers) Name() string { return Name }

// Close stops the plugin's goroutines when the scheduler stops its
// framework.
func (pl *NetworkPeers) Close() error {
	pl.stop()
	pl.wg.Wait()
	if pl.interest != nil {
		pl.interest.close()
	}
	return nil
}

// PreScore works out what each feasible node costs the pod, and leaves it
// in the cycle's state for Score and for the placement event. It skips,
// leaving the choice to the other plugins, for a pod that declares no
// peers (at the cost of two map lookups), when none of its peers is
// placed, and when the cycle's simulation has no pairs.
func (pl *NetworkPeers) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if !peers.Declares(pod) {
		return fwk.NewStatus(fwk.Skip)
	}
	d := pl.declaration(ctx, state, pod)
	if d == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	logger := klog.FromContext(ctx)
	c, err := placement.Read(state)
	if err != nil || c.Simulation == nil || c.Simulation.Pairs() == nil {
		logger.V(4).Info("No pairs in the cycle's simulation: peers not ranked", "plugin", Name, "pod", klog.KObj(pod))
		return fwk.NewStatus(fwk.Skip)
	}
	all, err := pl.nodeInfos()
	if err != nil {
		return fwk.AsStatus(err)
	}
	hosts := findPeers(all, pod, d)
	if len(hosts) == 0 {
		logger.V(4).Info("None of the pod's peers is placed: peers not ranked", "plugin", Name, "pod", klog.KObj(pod))
		return fwk.NewStatus(fwk.Skip)
	}
	cs := &Cycle{hosts: hosts, pairs: c.Simulation.Pairs(), links: c.Simulation.Links(), costs: make(map[string]peers.NodeCost, len(nodes))}
	for i := range hosts {
		hosts[i].Pairs = cs.pairs.Node(hosts[i].Node)
	}
	names, costs := make([]string, len(nodes)), make([]peers.NodeCost, len(nodes))
	pl.parallelize(ctx, len(nodes), func(i int) {
		names[i] = nodes[i].Node().Name
		costs[i] = peers.CostOf(names[i], hosts, cs.pairs, cs.links)
	})
	peers.RankCosts(names, costs)
	known := false
	for i, name := range names {
		cs.costs[name] = costs[i]
		if costs[i].Known && (!known || costs[i].Ms < cs.lowestMs) {
			cs.lowestMs, known = costs[i].Ms, true
		}
	}
	write(state, cs)
	if !known {
		// Every node scores 0; the note still says where the peers are.
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score is the node's ranked cost in microseconds (lower is better), or
// peers.UnknownScore; NormalizeScore turns it around.
func (pl *NetworkPeers) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	cs, err := read(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	c, ok := cs.costs[nodeInfo.Node().Name]
	if !ok {
		return peers.UnknownScore, nil
	}
	return c.RawScore(), nil
}

// ScoreExtensions returns the plugin itself, which normalizes its scores.
func (pl *NetworkPeers) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore maps the costs onto 0–MaxNodeScore in proportion, the
// lowest scoring MaxNodeScore and an unknown cost 0 (peers.Normalize). It
// leaves the scores in the cycle state for the placement event, which
// tells which plugin decided (placement.WritePoints).
func (pl *NetworkPeers) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	peers.Normalize(scores)
	placement.WritePoints(state, pointsKey, scores)
	return nil
}

// pointsKey is where NormalizeScore leaves the cycle's normalized scores,
// for the placement event.
var pointsKey = placement.PointsKey(Name)

// SignPod lets pods that declare the same peers share a batched ranking: a
// node's cost depends on the pod only through its namespace, its
// annotations and its AppGroup labels. A pod that is one of its own peers
// is not signable: placing one changes every node's cost for the next.
// For any other, a placement changes nothing of the next pod's costs, and
// upstream's batching scores the chosen node again before it reuses the
// rest of the ranking.
func (pl *NetworkPeers) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	namespace := ""
	if peers.Declares(pod) {
		if d, err := pl.read(pod); err == nil && d.Matches(pod) {
			return nil, fwk.NewStatus(fwk.Unschedulable, "pods that are their own peers are not signable")
		}
		namespace = pod.Namespace
	}
	return []fwk.SignFragment{
		{Key: namespaceSignerName, Value: namespace},
		{Key: peersSignerName, Value: pod.Annotations[PeersAnnotation]},
		{Key: trafficSignerName, Value: pod.Annotations[PeerTrafficAnnotation]},
		{Key: appGroupSignerName, Value: pod.Labels[AppGroupLabel]},
		{Key: appWorkloadSignerName, Value: pod.Labels[AppGroupWorkloadLabel]},
	}, nil
}

// declarationKey is where the cycle's first reading of the pod's
// declaration is kept, so that PreFilter and PreScore read it, and warn
// of it, once.
const declarationKey fwk.StateKey = Name + "/declaration"

type declared struct{ d *peers.Declaration }

func (d *declared) Clone() fwk.StateData { return d }

// declaration is what pod declares of its peers, nil for none; a
// declaration that cannot be read gets the pod a Warning event, once per
// cycle, and counts as none.
func (pl *NetworkPeers) declaration(ctx context.Context, state fwk.CycleState, pod *v1.Pod) *peers.Declaration {
	if data, err := state.Read(declarationKey); err == nil {
		if d, ok := data.(*declared); ok {
			return d.d
		}
	}
	d, err := pl.read(pod)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Pod declares its peers in a form the plugin cannot read; scheduled as if it declared none",
			"plugin", Name, "pod", klog.KObj(pod), "err", err)
		if pl.recorder != nil {
			pl.recorder.Eventf(pod, nil, v1.EventTypeWarning, ReasonInvalidPeers, "Scheduling", "%v; scheduled as if it declared no peers", err)
		}
		d = nil
	}
	state.Write(declarationKey, &declared{d: d})
	return d
}

// read reads what pod declares: its annotations when it has any, else its
// AppGroup's dependencies.
func (pl *NetworkPeers) read(pod *v1.Pod) (*peers.Declaration, error) {
	if peers.ByAnnotations(pod) {
		return peers.FromAnnotations(pod)
	}
	return pl.appGroups.declaration(pod)
}
