package customscore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/component-base/configz"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/ptr"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/customscore/publish"
	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// What runs beside the scheduling loop, on the leader, at the sizes the
// README names: the Background loop's poll (every refreshInterval, 1 s),
// the publisher's tick (every publish.Interval, 5 s: the status, with
// drift, encoded and compared, and written when it changed) and drift,
// over 5,000 nodes and 10,000 or 50,000 running KNS-3 pods.

const (
	besideNodes = 5000
	// besideWindow is the simulator's window: its answer changes once per
	// window, so a window holds one full answer and 304s for the rest.
	besideWindow  = 30 * time.Second
	besideProfile = "kns-3-scheduler"
)

// besideHandle is a framework handle with the informers the status and
// drift read, filled without an API server.
type besideHandle struct {
	fwk.Handle
	informers informers.SharedInformerFactory
}

func (h besideHandle) ProfileName() string                                    { return besideProfile }
func (h besideHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.informers }
func (h besideHandle) ClientSet() kubernetes.Interface                        { return nil }

// besideCluster returns informers holding nodes nodes and pods running
// KNS-3 pods spread over them, each with the default tolerations the API
// server adds.
func besideCluster(b *testing.B, nodes, pods int) informers.SharedInformerFactory {
	b.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	ns, ps := factory.Core().V1().Nodes().Informer().GetStore(), factory.Core().V1().Pods().Informer().GetStore()
	for i := range nodes {
		if err := ns.Add(st.MakeNode().Name(simtest.NodeName(i)).Obj()); err != nil {
			b.Fatal(err)
		}
	}
	seconds := int64(300)
	for i := range pods {
		name := fmt.Sprintf("pod-%06d", i)
		p := st.MakePod().Namespace("ns").Name(name).UID(name).SchedulerName(besideProfile).Node(simtest.NodeName(i % nodes)).Obj()
		p.ResourceVersion = strconv.Itoa(i + 1)
		p.Status.Phase = v1.PodRunning
		p.Spec.Tolerations = []v1.Toleration{
			{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)},
			{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)},
		}
		if err := ps.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return factory
}

// besideSimulator serves a /simulate answer for every node, stamped now,
// tagged, honoring If-None-Match; next makes it a new answer, as a new
// window does.
type besideSimulator struct {
	url    string
	bodies atomic.Pointer[[2]string] // body, etag
	n      int
	window int
}

func newBesideSimulator(b *testing.B, nodes int) *besideSimulator {
	s := &besideSimulator{n: nodes}
	s.next()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := s.bodies.Load()
		w.Header().Set("ETag", cur[1])
		if r.Header.Get("If-None-Match") == cur[1] {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(cur[0]))
	}))
	b.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *besideSimulator) next() {
	s.window++
	type result struct {
		Score         float64 `json:"score"`
		LatencyMs     float64 `json:"latency_ms"`
		BandwidthMbps float64 `json:"bandwidth_mbps"`
		PacketLoss    float64 `json:"packet_loss"`
	}
	results := make(map[string]result, s.n)
	for i := range s.n {
		results[simtest.NodeName(i)] = result{Score: float64((i+s.window)%1000) / 1000, LatencyMs: float64(i%50) + 0.5,
			BandwidthMbps: 100 + float64(i%900), PacketLoss: float64(i%10) / 1000}
	}
	body, err := json.Marshal(map[string]any{
		"timestamp": time.Now().UTC().Format(time.RFC3339), "source": "bench",
		"window_seconds": int(besideWindow / time.Second), "results": results,
	})
	if err != nil {
		panic(err)
	}
	s.bodies.Store(&[2]string{string(body), fmt.Sprintf(`"w%d"`, s.window)})
}

// registerLeader registers a running scheduler's configuration without
// leader election, so that the publisher leads.
func registerLeader(b *testing.B) {
	b.Helper()
	cz, err := configz.New("componentconfig")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { configz.Delete("componentconfig") })
	cfg := &configv1.KubeSchedulerConfiguration{
		TypeMeta:       metav1.TypeMeta{APIVersion: configv1.SchemeGroupVersion.String(), Kind: "KubeSchedulerConfiguration"},
		LeaderElection: componentbaseconfigv1alpha1.LeaderElectionConfiguration{LeaderElect: ptr.To(false)},
		Profiles:       []configv1.KubeSchedulerProfile{{SchedulerName: ptr.To(besideProfile)}},
	}
	if err := cz.Set(cfg); err != nil {
		b.Fatal(err)
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkBesideTheLoop measures one simulator window (30 s) of the work
// beside the scheduling loop, done back to back: 30 polls (one full answer
// and 29 answered 304) and 6 publisher ticks (each the status with its
// drift pass, encoded and compared; the first, after the new answer,
// written to the ConfigMap of a fake API server). It reports the CPU that
// work takes per second of the scheduler's running (ns/op ÷ 30 s, as
// "cpu-%": percent of one core), the same for drift alone, and the heap
// it keeps (the simulation, the last status, drift's pods) as
// "retained-MB".
func BenchmarkBesideTheLoop(b *testing.B) {
	for _, pods := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("nodes=%d/pods=%d", besideNodes, pods), func(b *testing.B) {
			factory := besideCluster(b, besideNodes, pods)
			sim := newBesideSimulator(b, besideNodes)
			registerLeader(b)
			b.Setenv(status.NamespaceEnv, "kns-3-system")
			client := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: status.ConfigMapName, Namespace: "kns-3-system"}})
			base := heapInUse()

			ctx := klog.NewContext(context.Background(), klog.Background().V(0))
			// The plugin's own loop asks once at start; the benchmark asks
			// for it after, at the window's pace.
			pl := newBesidePlugin(b, sim.url, factory)
			if pl.drift == nil {
				b.Fatal("drift is off")
			}
			pub := publish.New(client, "kns-3-system", besideProfile, pl.statusSource(besideProfile))
			var driftTime time.Duration
			window := func() {
				sim.next()
				for i := range int(besideWindow / time.Second) {
					if _, _, err := pl.client.Fetch(ctx, 1, 5*time.Second); err != nil {
						b.Fatal(err)
					}
					if i%int(publish.Interval/time.Second) == 0 {
						pub.Tick(ctx)
					}
				}
			}
			window()
			retained := heapInUse() - base
			// Drift alone, over the same simulation, as often.
			snapshot := pl.statusSource(besideProfile)
			doc := snapshot()
			b.ResetTimer()
			for b.Loop() {
				window()
				b.StopTimer()
				start := time.Now()
				for range besideWindow / publish.Interval {
					pl.drift.Update(doc.Simulator.Simulation)
				}
				driftTime += time.Since(start)
				b.StartTimer()
			}
			perSecond := func(d time.Duration) float64 {
				return float64(d) / float64(b.N) / besideWindow.Seconds()
			}
			b.ReportMetric(perSecond(b.Elapsed())/1e7, "cpu-%")
			b.ReportMetric(perSecond(driftTime)/1e7, "drift-cpu-%")
			b.ReportMetric(float64(retained)/1e6, "retained-MB")
		})
	}
}

// BenchmarkLoopBesideDrift measures what drift costs the scheduling loop
// where they share one core: the plugin's cycle in Background mode at
// 5,000 nodes (PreScore, Score for every node, NormalizeScore) runs for a
// publish interval (5 s) with GOMAXPROCS 1, once alone and once with the
// drift pass of 50,000 running pods that the publisher's tick makes in
// that interval, in alternating order. It reports cycles per second
// alone and with drift, and their ratio ("with/alone").
func BenchmarkLoopBesideDrift(b *testing.B) {
	const pods = 50000
	factory := besideCluster(b, besideNodes, pods)
	sim := newBesideSimulator(b, besideNodes)
	ctx := klog.NewContext(context.Background(), klog.Background().V(0))
	pl := newBesidePlugin(b, sim.url, factory)
	nodes := make([]fwk.NodeInfo, besideNodes)
	for i := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(st.MakeNode().Name(simtest.NodeName(i)).Obj())
		nodes[i] = ni
	}
	pod := st.MakePod().Name("p").UID("p").Obj()
	list := make(fwk.NodeScoreList, len(nodes))
	cycle := func() {
		state := framework.NewCycleState()
		if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
			b.Fatalf("PreScore: %v", s)
		}
		for i, ni := range nodes {
			v, _ := pl.Score(ctx, state, pod, ni)
			list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: v}
		}
		_ = pl.NormalizeScore(ctx, state, pod, list)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s, _ := pl.source.simulation(ctx, pod); s != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	doc := pl.statusSource(besideProfile)()
	if doc.Simulator.Simulation == nil {
		b.Fatal("no simulation")
	}
	pl.drift.Update(doc.Simulator.Simulation) // the steady state: pods seen before
	// run runs cycles for one publish interval, with the interval's drift
	// pass beside them when drift is set, and returns cycles per second.
	run := func(drift bool) float64 {
		done := make(chan struct{})
		if drift {
			go func() {
				defer close(done)
				pl.drift.Update(doc.Simulator.Simulation)
			}()
		} else {
			close(done)
		}
		n, start := 0, time.Now()
		for time.Since(start) < publish.Interval {
			cycle()
			n++
		}
		elapsed := time.Since(start)
		<-done
		return float64(n) / elapsed.Seconds()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var alone, with float64
	i := 0
	b.ResetTimer()
	for b.Loop() {
		if i%2 == 0 {
			alone += run(false)
			with += run(true)
		} else {
			with += run(true)
			alone += run(false)
		}
		i++
	}
	b.ReportMetric(alone/float64(i), "cycles/s-alone")
	b.ReportMetric(with/float64(i), "cycles/s-with-drift")
	b.ReportMetric(with/alone, "with/alone")
}

// newBesidePlugin is the plugin in Background mode against the simulator
// at url, over the informers of factory; its own loop waits 10 minutes
// between polls, so a benchmark drives them.
func newBesidePlugin(b *testing.B, url string, factory informers.SharedInformerFactory) *CustomScore {
	b.Helper()
	ctx := klog.NewContext(context.Background(), klog.Background().V(0))
	obj, err := New(ctx, testArgs(b, "simulatorURL: "+url+"\nrefreshMode: Background\nrefreshInterval: 10m\nmaxSimulationAge: 11m"),
		besideHandle{informers: factory})
	if err != nil {
		b.Fatal(err)
	}
	pl := obj.(*CustomScore)
	b.Cleanup(func() { _ = pl.Close() })
	return pl
}
