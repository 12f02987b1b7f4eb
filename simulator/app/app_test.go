package app

import (
	"strings"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/livescore"
	"kns3.dev/kns3/simulator/probe"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantListen string
		wantReload time.Duration
	}{
		{"defaults listen on loopback only", nil, "127.0.0.1:80", 2 * time.Second},
		{"all interfaces when asked", []string{"--listen=:80"}, ":80", 2 * time.Second},
		{"another port", []string{"--listen=127.0.0.1:10271", "--reload-interval=5s"}, "127.0.0.1:10271", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseFlags(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if o.Listen != tt.wantListen || o.Reload != tt.wantReload {
				t.Errorf("listen %q reload %v, want %q %v", o.Listen, o.Reload, tt.wantListen, tt.wantReload)
			}
		})
	}
}

// TestHTTPServerTimeouts holds the server to timeouts that reap idle
// keep-alive connections and slow request headers but never end a request
// that a fault holds: a hung /simulate request lasts until its client gives
// up, a delayed one until its delay is over.
func TestHTTPServerTimeouts(t *testing.T) {
	srv := newHTTPServer(nil)
	tests := []struct {
		name       string
		got        time.Duration
		wantAbove  time.Duration // exclusive
		wantAtMost time.Duration
	}{
		{"ReadHeaderTimeout", srv.ReadHeaderTimeout, 0, 10 * time.Second},
		{"IdleTimeout", srv.IdleTimeout, 0, 5 * time.Minute},
		// Its deadline starts when the header is read, so it counts
		// fault.delay_ms and would drop a delayed answer.
		{"WriteTimeout", srv.WriteTimeout, -1, 0},
	}
	for _, tt := range tests {
		if tt.got <= tt.wantAbove || tt.got > tt.wantAtMost {
			t.Errorf("%s = %v, want above %v and at most %v", tt.name, tt.got, tt.wantAbove, tt.wantAtMost)
		}
	}
}

func TestAgentsOf(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"dns:kns-3-agent.kns-3-system.svc.cluster.local:10271", true},
		{"dns:kns-3-agent.kns-3-system.svc.cluster.local.:10271", true}, // absolute
		{"dns:kns-3-agent.kns-3-system.svc:10271", true},                // the cluster's own domain from the search list
		{"10.0.0.1:10271,10.0.0.2:10271", true},
		{"dns:kns-3-agent.kns-3-system.svc", false}, // no port
		{"dns:kns-3-agent:0", false},                // port out of range
		{"dns:Not_A_Name:10271", false},             // not DNS-1123
		{"10.0.0.1:10271,10.0.0.2", false},          // an entry without a port
	} {
		_, err := agentsOf(tc.spec)
		if (err == nil) != tc.ok {
			t.Errorf("agentsOf(%q) = %v, want ok %v", tc.spec, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--agents=") {
			t.Errorf("agentsOf(%q): %v does not name the flag", tc.spec, err)
		}
	}
}

// TestNodeLinkFlag checks --node-link names one interface, and the
// agent's link counters are off unless --node-sysfs is given.
func TestNodeLinkFlag(t *testing.T) {
	o, err := ParseFlags(nil)
	if err != nil || o.NodeLink != "eth0" || o.NodeSysfs != "" {
		t.Fatalf("defaults: --node-link=%q --node-sysfs=%q (%v), want eth0 and off", o.NodeLink, o.NodeSysfs, err)
	}
	for _, tc := range []struct {
		link string
		ok   bool
	}{
		{"ens5", true},
		{"..", false},
		{"eth0/../..", false},
		{"a-name-too-long-for-linux", false},
	} {
		_, err := ParseFlags([]string{"--agent", "--node-sysfs=/host/sys", "--node-link=" + tc.link})
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--node-link")) {
			t.Errorf("--node-link=%s: %v, want ok %v, or an error naming the flag", tc.link, err, tc.ok)
		}
	}
}

// TestMeasurementsCarryLinkUse checks a node's link use goes from the
// prober's snapshot into the API's measurements, aged by the snapshot's
// time, with its interval closed at its value.
func TestMeasurementsCarryLinkUse(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 10, 0, time.UTC)
	for _, tc := range []struct {
		name string
		use  *probe.Estimate
	}{
		{"measured", &probe.Estimate{Value: 100, Low: 100, High: 100, Samples: 16, At: at.Add(-1500 * time.Millisecond)}},
		{"not measured", nil},
	} {
		snap := probe.Snapshot{At: at, Window: 15 * time.Second, Nodes: map[string]probe.Metrics{"n1": {LinkUseMbps: tc.use}}}
		got := measurementsOf(snap, livescore.DefaultTargets()).Nodes["n1"].LinkUseMbps
		if tc.use == nil {
			if got != nil {
				t.Errorf("%s: link use %+v, want none", tc.name, got)
			}
			continue
		}
		if got == nil || got.Value != 100 || got.Low != 100 || got.High == nil || *got.High != 100 || got.Samples != 16 ||
			!got.MeasuredAt.Equal(tc.use.At) || got.AgeSeconds != 1.5 {
			t.Errorf("%s: link use %+v, want 100 Mbit/s of 16 readings, 1.5 s old", tc.name, got)
		}
	}
}
