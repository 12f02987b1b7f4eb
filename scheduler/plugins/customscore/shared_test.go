package customscore

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/component-base/configz"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"kns3.dev/kns3/scheduler/plugins/customscore/breaker"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// PerCycle in a process with other profiles: every cycle holds the one
// scheduling loop, so a plain pod queued behind 10 KNS-3 pods waits for
// their cycles. One cycle far over the latency budget opens the breaker at
// once, as a timeout does: the plain pod waits at most one slow cycle.
func TestFarOverBudgetOpensTheBreakerAtOnce(t *testing.T) {
	const delay = 400 * time.Millisecond
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(delay)
		_, _ = w.Write([]byte(goodBody))
	})
	pl := newTestPlugin(t, srv.URL, "retries: 0\nbreakerFailureThreshold: 5\nbreakerLatencyBudget: 100ms")
	nodes := nodeInfos("n1", "n2")
	open := fallbacks(t, placement.FallbackBreakerOpen)
	start := time.Now()
	for range 10 { // the KNS-3 pods ahead of the plain pod
		scoreCycle(t, pl, nodes)
	}
	waited := time.Since(start)
	if g := gauge(t); g != float64(breaker.Open) {
		t.Errorf("breaker_state %v after 10 cycles at %s against a 100ms budget, want open", g, delay)
	}
	if skipped := fallbacks(t, placement.FallbackBreakerOpen) - open; skipped != 9 {
		t.Errorf("%v cycles skipped the simulator, want the 9 after the first", skipped)
	}
	if waited > 2*delay {
		t.Errorf("the plain pod behind 10 KNS-3 pods waited %s, want at most one slow cycle (%s)", waited.Round(time.Millisecond), delay)
	}
}

// syncBuffer is a log sink the plugin's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A PerCycle profile in a scheduler that runs other profiles warns once
// the scheduler has registered its configuration (after the plugins are
// made); alone, or in Background mode, it does not.
func TestPerCycleBesideOtherProfilesWarns(t *testing.T) {
	cz, err := configz.New("componentconfig")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { configz.Delete("componentconfig") })
	set := func(t *testing.T, profiles ...string) {
		cfg := &configv1.KubeSchedulerConfiguration{
			TypeMeta:       metav1.TypeMeta{APIVersion: configv1.SchemeGroupVersion.String(), Kind: "KubeSchedulerConfiguration"},
			LeaderElection: componentbaseconfigv1alpha1.LeaderElectionConfiguration{LeaderElect: ptr.To(false)},
		}
		for _, p := range profiles {
			cfg.Profiles = append(cfg.Profiles, configv1.KubeSchedulerProfile{SchedulerName: ptr.To(p)})
		}
		if err := cz.Set(cfg); err != nil {
			t.Fatal(err)
		}
	}
	const warning = "Warning: CustomScorePlugin asks the simulator in every scheduling cycle"
	for _, tc := range []struct {
		name     string
		profiles []string
		args     string
		want     bool
	}{
		{"beside the default profile", []string{plainProfile, "default-scheduler"}, "", true},
		{"alone", []string{plainProfile}, "", false},
		{"Background mode beside the default profile", []string{plainProfile, "default-scheduler"}, "refreshMode: Background", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set(t, tc.profiles...)
			var logs syncBuffer
			ctx := klog.NewContext(context.Background(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&logs))))
			obj, err := New(ctx, testArgs(t, "simulatorURL: http://127.0.0.1:1\n"+tc.args), profileHandle{name: plainProfile})
			if err != nil {
				t.Fatal(err)
			}
			pl := obj.(*CustomScore)
			// It warns within the first poll; a second is ample to see none.
			deadline := time.Now().Add(time.Second)
			for !strings.Contains(logs.String(), warning) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			_ = pl.Close()
			if got := strings.Contains(logs.String(), warning); got != tc.want {
				t.Errorf("warned %t, want %t; logs:\n%s", got, tc.want, logs.String())
			}
		})
	}
}
