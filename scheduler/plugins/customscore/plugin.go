// Package customscore implements CustomScorePlugin, which ranks nodes by the
// network simulator's scores: PreScore takes the cycle's simulation from
// its source (asked in the cycle, or kept by a background loop), Score
// reads a node's score × 1000, NormalizeScore maps the scores onto 0–100.
// The simulator client is simclient; the status it publishes is written
// by publish, with the drifted pods drift lists, and status.go is where the
// plugin's state becomes that status. What the profile's other plugins read
// of it lives beside the plugins: the answer in network, the arithmetic of
// scores in score, what a cycle says about a placement in placement.
package customscore

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/customscore/breaker"
	"kns3.dev/kns3/scheduler/plugins/customscore/drift"
	"kns3.dev/kns3/scheduler/plugins/customscore/internal/schedconfig"
	"kns3.dev/kns3/scheduler/plugins/customscore/publish"
	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
	"kns3.dev/kns3/scheduler/plugins/score"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = network.ScorePlugin

// maxLoggedNodes bounds the node names quoted in one log line.
const maxLoggedNodes = 10

// CustomScore is the CustomScorePlugin.
type CustomScore struct {
	args *apiconfig.CustomScorePluginArgs
	// shownURL is the /simulate URL without credentials, for logs and the
	// published status.
	shownURL string
	metrics  *profileMetrics
	client   *simclient.Client
	source   source
	// breaker is the source's circuit breaker, nil for a source without one.
	breaker breakerReporter
	// absolute keeps the simulator's scale in NormalizeScore instead of
	// stretching the cycle's scores onto 0-100.
	absolute bool
	// drift lists the running pods whose node has drifted, in the
	// published status; nil when off or without informers.
	drift *drift.Tracker
	// nodes are the cluster's, whose scores alone the status names; pods
	// are the cluster's, counted on their node's link in the status when
	// the profile scores with NetworkCapacity. Nil without informers.
	nodes corelisters.NodeLister
	pods  corelisters.PodLister
	// answers are the metrics read from the newest answer when scraped.
	answers *answerMetrics
	// handle is the profile's framework (nil in some tests).
	handle fwk.Handle
	// batch is the plugin's part in opportunistic batching (batch.go).
	batch batching
	// stop ends the plugin's goroutines; wg waits for them.
	stop context.CancelFunc
	wg   sync.WaitGroup
}

var (
	_ fwk.PreFilterPlugin   = &CustomScore{}
	_ fwk.EnqueueExtensions = &CustomScore{}
	_ fwk.PreScorePlugin    = &CustomScore{}
	_ fwk.ScorePlugin       = &CustomScore{}
	_ fwk.ScoreExtensions   = &CustomScore{}
	_ fwk.SignPlugin        = &CustomScore{}
	_ io.Closer             = &CustomScore{}
)

// New initializes the plugin from its CustomScorePluginArgs. Invalid args
// fail scheduler start-up with the field named. It starts its goroutines,
// ended by Close or by the end of ctx: the source's (the breaker's prober
// in PerCycle mode, the refresh loop in Background mode) and, in a pod
// that knows its namespace, the status publisher.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := getArgs(obj)
	if err != nil {
		return nil, err
	}
	profileName := ""
	if h != nil {
		profileName = h.ProfileName()
	}
	// What the status says of the plugin's points (profile.Scoring).
	profile.DeclareScoring(h, status.ScorePlugin{Name: Name})
	m := newProfileMetrics(profileName)
	logger := klog.FromContext(ctx).WithValues("plugin", Name, "profile", profileName)
	pl := &CustomScore{args: args, metrics: m, absolute: args.Normalization == apiconfig.NormalizationAbsolute, handle: h}
	pl.batch.now = time.Now
	var announce func(*network.Simulation)
	if h != nil {
		// What a filter of the profile judged may change with any new answer.
		announce = func(sim *network.Simulation) { network.AnnounceSimulation(h, sim) }
	}
	pl.client = newClient(args, m, announce)
	pl.shownURL = pl.client.ShownURL()
	namespace := os.Getenv(status.NamespaceEnv)
	publishing := namespace != "" && h != nil && h.ClientSet() != nil
	idle := time.Duration(0) // the status shows how the simulator is now
	if publishing {
		idle = publish.Interval
	}
	m.breakerState(breaker.Closed)
	m.maxSimulationAge(args.MaxSimulationAge.Duration)
	pl.source = newSource(args, pl.client, m, logger, idle)
	pl.breaker, _ = pl.source.(breakerReporter)
	pl.watchCluster(h, profileName)
	pl.answers = &answerMetrics{profile: profileName, client: pl.client, nodes: pl.nodes}
	pl.answers.ager, _ = pl.source.(simulationAger)
	answers.add(pl.answers)
	ctx, pl.stop = context.WithCancel(klog.NewContext(ctx, logger))
	pl.wg.Go(func() { pl.source.run(ctx) })
	if args.RefreshMode == apiconfig.RefreshPerCycle {
		pl.wg.Go(func() { warnIfShared(ctx, profileName, schedconfig.Running) })
	}
	logConfigured(logger, args, pl.shownURL)
	if publishing {
		pub := publish.New(h.ClientSet(), namespace, profileName, pl.statusSource(profileName))
		pl.wg.Go(func() { pub.Run(ctx) })
	} else {
		logger.V(1).Info("Not publishing the plugin's status: the scheduler does not know its pod's namespace",
			"env", status.NamespaceEnv)
	}
	return pl, nil
}

// watchCluster takes the listers the status needs from the framework's
// informers: the nodes, and the pods, which the scheduler watches anyway
// (drift lists them, and the status counts them on their node's link).
// Without informers (a test's handle) the status names every node, counts
// no link and lists no drift.
func (pl *CustomScore) watchCluster(h fwk.Handle, profile string) {
	if h == nil || h.SharedInformerFactory() == nil {
		return
	}
	informers := h.SharedInformerFactory().Core().V1()
	pl.nodes, pl.pods = informers.Nodes().Lister(), informers.Pods().Lister()
	if pl.args.DriftMarginMilli > 0 {
		pl.drift = drift.New(profile, pl.args.DriftMarginMilli, pl.pods, pl.nodes)
	}
}

// logConfigured logs every effective arg, at --v=1.
func logConfigured(logger klog.Logger, args *apiconfig.CustomScorePluginArgs, shown string) {
	logger.V(1).Info("Plugin configured", "url", shown, "refreshMode", args.RefreshMode, "timeout", args.Timeout.Duration,
		"retries", args.Retries, "retryDelay", args.RetryDelay.Duration, "maxBodyBytes", args.MaxBodyBytes,
		"breakerFailureThreshold", args.BreakerFailureThreshold, "breakerCooldown", args.BreakerCooldown.Duration,
		"breakerLatencyBudget", args.BreakerLatencyBudget.Duration, "refreshInterval", args.RefreshInterval.Duration,
		"maxSimulationAge", args.MaxSimulationAge.Duration, "normalization", args.Normalization,
		"driftMarginMilli", args.DriftMarginMilli)
}

// warnIfShared warns, once the scheduler has registered its
// configuration, when this PerCycle profile shares its process with other
// profiles: their pods wait behind every cycle that waits for the
// simulator.
func warnIfShared(ctx context.Context, profile string, read func() (schedconfig.Config, error)) {
	cfg, err := schedconfig.Wait(ctx, read, 200*time.Millisecond, time.Minute)
	var others []string
	for _, p := range cfg.Profiles {
		if p.SchedulerName != profile {
			others = append(others, p.SchedulerName)
		}
	}
	if err == nil && len(others) > 0 {
		klog.FromContext(ctx).Info("Warning: CustomScorePlugin asks the simulator in every scheduling cycle (refreshMode PerCycle), "+
			"and this scheduler runs other profiles, whose pods wait behind each such cycle; refreshMode Background never waits",
			"otherProfiles", others)
	}
}

// Name returns the name of the plugin.
func (pl *CustomScore) Name() string { return Name }

// PreScore gets this cycle's simulation from the source. It never fails
// the pod: without a simulation, or when the simulation scores no
// candidate, it returns Skip, so Score and NormalizeScore do not run and
// the plugin adds the same (0) to every node, leaving the choice to the
// other plugins. In Background mode it remembers the ranking for the batch
// the cycle may start, and a re-score inside a batch uses that ranking
// instead (batch.go).
func (pl *CustomScore) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	background := pl.args.RefreshMode == apiconfig.RefreshBackground
	if background && rescoring(state) {
		return pl.rescore(ctx, state, pod, nodes)
	}
	// The state is written fresh every cycle: nothing from an earlier cycle survives.
	cs := &placement.Cycle{Feasible: make([]string, len(nodes))}
	for i, n := range nodes {
		cs.Feasible[i] = n.Node().Name
	}
	sim, fallback := pl.source.simulation(ctx, pod)
	s := pl.rank(ctx, cs, pod, sim, fallback)
	placement.Write(state, cs)
	if background {
		pl.remember(cs)
	}
	return s
}

// rank fills cs, whose Feasible nodes are set, from the cycle's
// simulation (nil: none, for the reason fallback) and counts the cycle in
// the metrics. It returns Skip when the cycle has nothing to score with.
// A warming-up simulator's answer (its scores all 0 for the nodes it has
// measured) is nothing to score with either, and it leaves no simulation
// in the cycle: the profile's other plugins that read it
// (NetworkCapacity) skip too.
func (pl *CustomScore) rank(ctx context.Context, cs *placement.Cycle, pod *v1.Pod, sim *network.Simulation, fallback string) *fwk.Status {
	logger := klog.FromContext(ctx)
	if sim != nil && sim.WarmUp != nil {
		logger.V(2).Info("Simulator is warming up: too few nodes measured in full to rank them; scoring skipped", "pod", klog.KObj(pod),
			"measuredInFull", sim.WarmUp.MeasuredInFull, "nodes", sim.WarmUp.Nodes, "quorum", sim.WarmUp.Quorum)
		sim, fallback, cs.WarmUp = nil, placement.FallbackWarmingUp, sim.WarmUp
	}
	if sim == nil {
		pl.metrics.fallback(fallback)
		cs.Fallback = fallback
		return fwk.NewStatus(fwk.Skip)
	}
	cs.Scores, cs.Simulation = sim.Scores, sim
	if len(sim.Invalid) > 0 {
		logger.V(1).Info("Simulator sent nodes without a finite score; they score 0",
			"pod", klog.KObj(pod), "count", len(sim.Invalid), "nodes", firstN(sim.Invalid, maxLoggedNodes))
	}
	if !scoresAny(sim.Scores, cs.Feasible) {
		logger.V(1).Info("Simulator had a score for none of the candidate nodes; scoring skipped",
			"pod", klog.KObj(pod), "candidates", len(cs.Feasible), "results", len(sim.Scores))
		pl.metrics.fallback(placement.FallbackNoneScored)
		cs.Fallback = placement.FallbackNoneScored
		return fwk.NewStatus(fwk.Skip)
	}
	pl.metrics.scored()
	return nil
}

// Score returns the node's simulator score × 1000, or 0 for a node the
// simulator did not score.
func (pl *CustomScore) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	c, err := placement.Read(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	return c.Scores[nodeInfo.Node().Name], nil
}

// Close stops the plugin's goroutines and releases the simulator
// connections when the scheduler stops its framework (a profile reload, a
// shutdown, a test's scheduler).
func (pl *CustomScore) Close() error {
	if pl.answers != nil {
		answers.remove(pl.answers)
	}
	if pl.stop != nil {
		pl.stop()
		pl.wg.Wait()
	}
	pl.client.Close()
	return nil
}

// ScoreExtensions returns the plugin itself, which normalizes its scores.
func (pl *CustomScore) ScoreExtensions() fwk.ScoreExtensions { return pl }

// pointsKey is where NormalizeScore leaves the cycle's normalized scores,
// for the placement event.
var pointsKey = placement.PointsKey(Name)

// NormalizeScore maps the scores onto [0, MaxNodeScore] as the args'
// normalization says (score.Normalize), and leaves them in the cycle
// state for the placement event (placement.WritePoints).
func (pl *CustomScore) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	score.Normalize(scores, pl.absolute)
	placement.WritePoints(state, pointsKey, scores)
	return nil
}

// scoresAny reports whether the simulator scored at least one candidate. It
// runs every cycle, so it stops at the first hit: a full count would double
// Score's map lookups.
func scoresAny(scores map[string]int64, nodes []string) bool {
	for _, n := range nodes {
		if _, ok := scores[n]; ok {
			return true
		}
	}
	return false
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
