package integration

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kns3.dev/kns3/simulator/scenario"
	"kns3.dev/kns3/simulator/server"
	"kns3.dev/kns3/test/pairs"
)

// simulatorStub is the simulator on a loopback port, serving a scenario file
// that the test can rewrite while the scheduler runs.
type simulatorStub struct {
	t    *testing.T
	url  string
	path string
	http *http.Server
	// pairs adds the pairs key to the answers and takes the scheduler's
	// interest in pairs; nil when the test gives no pairs.
	pairs *pairs.Stub
}

// startSimulator serves scenarioYAML and, unless pairsOf is nil, the pairs
// key it gives each answer's nodes.
func startSimulator(t *testing.T, scenarioYAML string, pairsOf func(nodes []string) *pairs.Answer) *simulatorStub {
	t.Helper()
	s := &simulatorStub{t: t, path: filepath.Join(t.TempDir(), "scenario.yaml")}
	s.writeScenario(scenarioYAML)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := server.New()
	if err := scenario.Watch(ctx, s.path, 20*time.Millisecond, srv.SetScenario); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	handler := srv.Handler()
	if pairsOf != nil {
		s.pairs = pairs.Wrap(handler, pairsOf)
		handler = s.pairs
	}
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: time.Second}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("simulator: %v", err)
		}
	}()
	t.Cleanup(s.stop)
	return s
}

// writeScenario replaces the file atomically, as the kubelet does for a
// ConfigMap volume.
func (s *simulatorStub) writeScenario(doc string) {
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		s.t.Fatal(err)
	}
}

// setScenario rewrites the scenario and waits until the stub serves it.
func (s *simulatorStub) setScenario(doc string) {
	s.t.Helper()
	before := s.served()
	s.writeScenario(doc)
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, false,
		func(context.Context) (bool, error) { return s.served() != before, nil })
	if err != nil {
		s.t.Fatalf("simulator did not pick up the new scenario: %v", err)
	}
}

// served is what the stub serves now, less the timestamp, which moves on
// with every window whatever the scenario.
func (s *simulatorStub) served() string {
	resp, err := http.Get(s.url + "/simulate")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return resp.Status // a fault's answer
	}
	delete(body, "timestamp")
	out, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.Status + " " + string(out)
}

// stop closes the listener: later calls are refused.
func (s *simulatorStub) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.http.Shutdown(ctx)
}
