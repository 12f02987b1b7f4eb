package networkpeers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/network"
)

const profileName = "kns-3-scheduler"

var now = measuredAt.Add(time.Minute)

func podLister(t *testing.T, pods ...*v1.Pod) corelisters.PodLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewPodLister(indexer)
}

// placedAt is pod bound at t.
func placedAt(p *v1.Pod, node string, t time.Time) *v1.Pod {
	p.Spec.NodeName = node
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t)}}
	return p
}

func waiting(p *v1.Pod, scheduler string) *v1.Pod {
	p.Spec.SchedulerName = scheduler
	return p
}

// interestServer records the bodies PUT to it, and answers with status.
type interestServer struct {
	mu     sync.Mutex
	bodies []string
	status int
}

func (s *interestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPut || r.URL.Path != interestPath || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want PUT "+interestPath+" with a JSON body", http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(r.Body)
	s.bodies = append(s.bodies, string(b))
	if s.status != http.StatusNoContent {
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(`{"detail": "not today"}`))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *interestServer) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

func newTestInterest(t *testing.T, url string, pods ...*v1.Pod) *interest {
	t.Helper()
	pl := newPlugin(t)
	in, err := newInterest(url, profileName, podLister(t, pods...), pl.read)
	if err != nil {
		t.Fatal(err)
	}
	in.now = func() time.Time { return now }
	t.Cleanup(in.close)
	return in
}

func TestInterestNodes(t *testing.T) {
	pods := []*v1.Pod{
		peer("s1", "server", "n2"), peer("s2", "server", "n1"), peer("d1", "db", "n3"), peer("k1", "cache", "n4"),
		st.MakePod().Name("s3").Namespace("other").Label("app", "server").Node("n9").Obj(),
		peer("q1", "queue", "n5"),
		// A client waiting for the profile, of servers on n1 and n2.
		waiting(client("c1", peersOf("app=server")), profileName),
		// Waiting for another scheduler: not the profile's to place.
		waiting(client("c2", peersOf("app=queue")), "default-scheduler"),
		// Placed three windows (45 s) ago and more: its peers are placed.
		placedAt(client("c3", peersOf("app=db")), "n1", now.Add(-46*time.Second)),
		// Placed recently.
		placedAt(client("c4", peersOf("app=cache")), "n1", now.Add(-10*time.Second)),
		// A declaration that cannot be read.
		waiting(client("c5", peersOf("app in (")), profileName),
	}
	in := newTestInterest(t, "http://127.0.0.1:1", pods...)
	if got, want := strings.Join(in.nodes(), ","), "n1,n2,n4"; got != want {
		t.Errorf("nodes %s, want %s", got, want)
	}
}

// logLines collects what a logger logs at up to level 1.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() klog.Logger {
	return funcr.NewJSON(func(obj string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, obj)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func TestInterestTell(t *testing.T) {
	srv := &interestServer{status: http.StatusNoContent}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	server := peer("s1", "server", "n2")
	in := newTestInterest(t, ts.URL+"/", server, waiting(client("c1", peersOf("app=server")), profileName))
	var logs logLines
	logger := logs.logger()
	ctx := context.Background()

	in.tell(ctx, logger)
	if got, want := srv.sent(), []string{`{"nodes":["n2"]}`}; strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("sent %q, want %q", got, want)
	}
	// The simulator fails: logged once however many windows it lasts.
	srv.mu.Lock()
	srv.status = http.StatusInternalServerError
	srv.mu.Unlock()
	for range 3 {
		in.tell(ctx, logger)
	}
	if n := logs.count("Could not tell the simulator"); n != 1 {
		t.Errorf("a failing simulator logged %d times over 3 windows, want once", n)
	}
	if n := logs.count("not today"); n != 1 {
		t.Errorf("the simulator's answer is in %d log lines, want 1", n)
	}
	srv.mu.Lock()
	srv.status = http.StatusNoContent
	srv.mu.Unlock()
	in.tell(ctx, logger)
	if n := logs.count("to measure again"); n != 1 {
		t.Errorf("the simulator answering again logged %d times, want once", n)
	}
	if n := len(srv.sent()); n != 5 {
		t.Errorf("%d PUTs, want one a window: 5", n)
	}
}

// A cluster whose pods declare no peers sends nothing; once interest ends,
// the simulator hears it once.
func TestInterestSendsNothingForNothing(t *testing.T) {
	srv := &interestServer{status: http.StatusNoContent}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	in := newTestInterest(t, ts.URL, peer("s1", "server", "n2"))
	in.tell(context.Background(), klog.Background())
	if got := srv.sent(); len(got) != 0 {
		t.Fatalf("sent %q with no pod declaring peers", got)
	}
	in.sent = []string{"n2"} // what the last window named
	in.tell(context.Background(), klog.Background())
	in.tell(context.Background(), klog.Background())
	if got := srv.sent(); len(got) != 1 {
		t.Fatalf("sent %q, want the end of interest once", got)
	}
	var body struct{ Nodes []string }
	if err := json.Unmarshal([]byte(srv.sent()[0]), &body); err != nil || body.Nodes == nil || len(body.Nodes) != 0 {
		t.Errorf("sent %s, want an empty list of nodes", srv.sent()[0])
	}
}

func TestInterestWindow(t *testing.T) {
	in := newTestInterest(t, "http://127.0.0.1:1")
	if got := in.window(); got != network.DefaultPairsWindow {
		t.Errorf("window before any answer: %s, want %s", got, network.DefaultPairsWindow)
	}
	in.heard(&network.Simulation{Body: []byte(`{"results": {}, "pairs": {"window_seconds": 2, "measured": [{"from": "a", "to": "b", "latency_ms": {"value": 1}}]}}`)})
	if got := in.window(); got != 2*time.Second {
		t.Errorf("window: %s, want the answer's 2s", got)
	}
}

func TestInterestRunEndsWithItsContext(t *testing.T) {
	in := newTestInterest(t, "http://127.0.0.1:1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		in.run(ctx)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not end with its context")
	}
}
