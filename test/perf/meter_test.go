//go:build perf

package perf

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"
)

// measuredPods is the measurePods parameter of the workload about to run,
// 0 when it has none: rememberWorkload sets it before the workload starts,
// meterMeasuredPods reads it once the scheduler runs. Workloads run one
// at a time.
var measuredPods int

// rememberWorkload is the harness's PreRunFn: it notes how many pods the
// workload measures.
func rememberWorkload(_ ktesting.TContext, w *perf.Workload) (func(), error) {
	measuredPods, _ = w.GetParam("measurePods")
	return nil, nil
}

// stubAnswers counts the stub's /simulate answers: full bodies and 304s.
var stubAnswers struct{ full, notModified atomic.Int64 }

// countingStub counts the /simulate answers of next by status.
func countingStub(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if r.URL.Path != "/simulate" {
			return
		}
		switch sw.status {
		case http.StatusOK:
			stubAnswers.full.Add(1)
		case http.StatusNotModified:
			stubAnswers.notModified.Add(1)
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// meter reads the CPU time from the first measured pod's creation to the
// last one's scheduling.
type meter struct {
	name string
	want int
	etcd int

	mu        sync.Mutex
	started   bool
	done      bool
	from      CPUReading
	stubFrom  [2]int64
	scheduled map[types.UID]bool
}

// meterMeasuredPods watches the pods of MeasuredNamespace and, once the
// workload's measuredPods are scheduled, writes what their creation and
// scheduling cost, per pod, into the harness's -data-items-dir as
// scheduler_perf DataItems: "CPUPerPod" (Process: this process's CPU ms
// per pod, which holds the scheduler, the API server, the stub and the
// pods' creation; Etcd: etcd's; Seconds: the wall time; Pods: how many),
// "StubAnswers" (Full and NotModified: the stub's answers meanwhile) and,
// for each KNS-3 plugin that ran, "PreScore" (its PreScore calls meanwhile,
// timed by prescore_test.go: percentiles and mean in ms, and the count).
func meterMeasuredPods(tCtx ktesting.TContext) error {
	if measuredPods <= 0 {
		return nil
	}
	etcd, err := ChildPID("etcd")
	if err != nil {
		tCtx.Logf("CPU meter: no etcd process found, its CPU time not measured: %v", err)
	}
	m := &meter{name: tCtx.Name(), want: measuredPods, etcd: etcd, scheduled: map[types.UID]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(tCtx.Client(), 0, informers.WithNamespace(MeasuredNamespace))
	pods := factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.seen(tCtx, obj) },
		UpdateFunc: func(_, obj any) { m.seen(tCtx, obj) },
	}); err != nil {
		return err
	}
	factory.Start(tCtx.Done())
	go func() {
		<-tCtx.Done()
		factory.Shutdown()
	}()
	return nil
}

func (m *meter) seen(tCtx ktesting.TContext, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return
	}
	if !m.started {
		m.started = true
		preScores.start()
		m.from, _ = ReadCPU(m.etcd)
		m.stubFrom = [2]int64{stubAnswers.full.Load(), stubAnswers.notModified.Load()}
	}
	if pod.Spec.NodeName == "" || m.scheduled[pod.UID] {
		return
	}
	m.scheduled[pod.UID] = true
	if len(m.scheduled) < m.want {
		return
	}
	m.done = true
	to, err := ReadCPU(m.etcd)
	times := preScores.stop()
	if err != nil {
		tCtx.Errorf("CPU meter: %v", err)
		return
	}
	full, notModified := stubAnswers.full.Load()-m.stubFrom[0], stubAnswers.notModified.Load()-m.stubFrom[1]
	if err := m.write(m.from, to, full, notModified, times); err != nil {
		tCtx.Errorf("CPU meter: %v", err)
	}
}

type dataItem struct {
	Data   map[string]float64 `json:"data"`
	Unit   string             `json:"unit"`
	Labels map[string]string  `json:"labels"`
}

// write puts the workload's readings into the -data-items-dir, beside the
// harness's own file.
func (m *meter) write(from, to CPUReading, full, notModified int64, preScore map[string][]time.Duration) error {
	process, etcd, seconds := CPUPerPod(from, to, m.want)
	f := flag.Lookup("data-items-dir")
	if f == nil || f.Value.String() == "" {
		return nil
	}
	name := m.name + "/" + MeasuredNamespace
	items := struct {
		Version   string     `json:"version"`
		DataItems []dataItem `json:"dataItems"`
	}{Version: "v1", DataItems: []dataItem{
		{Data: map[string]float64{"Process": process, "Etcd": etcd, "Seconds": seconds, "Pods": float64(m.want)}, Unit: "ms",
			Labels: map[string]string{"Metric": "CPUPerPod", "Name": name}},
		{Data: map[string]float64{"Full": float64(full), "NotModified": float64(notModified)}, Unit: "answers",
			Labels: map[string]string{"Metric": "StubAnswers", "Name": name}},
	}}
	for plugin, times := range preScore {
		items.DataItems = append(items.DataItems, dataItem{Data: preScoreSummary(times), Unit: "ms",
			Labels: map[string]string{"Metric": "PreScore", "plugin": plugin, "Name": name}})
	}
	data, err := json.MarshalIndent(items, "", "  ")
	if err != nil {
		return err
	}
	file := filepath.Join(f.Value.String(), strings.ReplaceAll(m.name, "/", "_")+"_cpu.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}
