package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"kns3.dev/kns3/simulator/scenario"
	"kns3.dev/kns3/simulator/server"
)

// fastClient is a client without client-side rate limiting, for bursts.
func fastClient(tb testing.TB, cfg *rest.Config) kubernetes.Interface {
	tb.Helper()
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 10000, 20000
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		tb.Fatal(err)
	}
	return client
}

// memSimulator is the simulator stub on a loopback port with its scenario
// set in memory: set takes effect before it returns, so a fault is in force
// without asking /simulate (which a hanging fault would never answer).
type memSimulator struct {
	tb  testing.TB
	url string
	srv *server.Server
}

func startMemSimulator(tb testing.TB, doc string) *memSimulator {
	tb.Helper()
	s := &memSimulator{tb: tb, srv: server.New()}
	s.set(doc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	hs := &http.Server{Handler: s.srv.Handler(), ReadHeaderTimeout: time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("simulator: %v", err)
		}
	}()
	tb.Cleanup(func() {
		s.srv.Close() // releases hung and delayed requests
		_ = hs.Close()
	})
	return s
}

func (s *memSimulator) set(doc string) {
	s.tb.Helper()
	sc, err := scenario.Parse("reliability.yaml", []byte(doc))
	if err != nil {
		s.tb.Fatal(err)
	}
	s.srv.SetScenario(sc)
}

// createBenchNodes creates n Ready nodes named by name(i), with room for
// every pod of every case, from several goroutines.
func createBenchNodes(tb testing.TB, client kubernetes.Interface, n int, name func(int) string) {
	tb.Helper()
	capacity := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("1000"),
		v1.ResourceMemory: resource.MustParse("4Ti"),
		v1.ResourcePods:   resource.MustParse("10000"),
	}
	err := parallel(n, 16, func(i int) error {
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name(i), Labels: map[string]string{labelHost: name(i)}},
			Status: v1.NodeStatus{Capacity: capacity, Allocatable: capacity,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		}
		_, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		tb.Fatalf("creating %d nodes: %v", n, err)
	}
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for i := range next {
				if err := f(i); err != nil && first == nil {
					first = fmt.Errorf("item %d: %w", i, err)
				}
			}
			errs <- first
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func counterValue(tb testing.TB, m metrics.CounterMetric) float64 {
	tb.Helper()
	v, err := testutil.GetCounterMetricValue(m)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// bindTracker records when an informer first saw each pod with a node.
type bindTracker struct {
	mu    sync.Mutex
	binds map[string]time.Time
	added chan struct{}
}

func trackBinds(tb testing.TB, client kubernetes.Interface, ns, prefix string) *bindTracker {
	tb.Helper()
	t := &bindTracker{binds: map[string]time.Time{}, added: make(chan struct{}, 1)}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	see := func(obj any) {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.Spec.NodeName == "" || !strings.HasPrefix(pod.Name, prefix) {
			return
		}
		now := time.Now()
		t.mu.Lock()
		if _, seen := t.binds[pod.Name]; !seen {
			t.binds[pod.Name] = now
		}
		t.mu.Unlock()
		select {
		case t.added <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
	}); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(func() { cancel(); factory.Shutdown() })
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		tb.Fatal("pod informer did not sync")
	}
	return t
}

// wait returns the bind times once n pods are bound, or what it has after timeout.
func (t *bindTracker) wait(n int, timeout time.Duration) (map[string]time.Time, bool) {
	deadline := time.After(timeout)
	for {
		t.mu.Lock()
		got := len(t.binds)
		t.mu.Unlock()
		if got >= n {
			break
		}
		select {
		case <-t.added:
		case <-deadline:
			t.mu.Lock()
			defer t.mu.Unlock()
			return maps.Clone(t.binds), false
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.binds), true
}
