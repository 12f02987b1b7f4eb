package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"kns3.dev/kns3/simulator/livescore"
	"kns3.dev/kns3/simulator/probe"
	"kns3.dev/kns3/simulator/probe/agent"
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
		_, err := agentsOf("agents", tc.spec)
		if (err == nil) != tc.ok {
			t.Errorf("agentsOf(%q) = %v, want ok %v", tc.spec, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--agents=") {
			t.Errorf("agentsOf(%q): %v does not name the flag", tc.spec, err)
		}
	}
}

// TestNodeLinkFlag checks --node-link names one interface or "auto", the
// default, and the agent's link counters are off unless --node-sysfs is
// given.
func TestNodeLinkFlag(t *testing.T) {
	o, err := ParseFlags(nil)
	if err != nil || o.NodeLink != agent.AutoLink || o.NodeSysfs != "" {
		t.Fatalf("defaults: --node-link=%q --node-sysfs=%q (%v), want auto and off", o.NodeLink, o.NodeSysfs, err)
	}
	for _, tc := range []struct {
		link string
		ok   bool
	}{
		{"ens5", true},
		{"auto", true},
		{"..", false},
		{"eth0/../..", false},
		{"a-name-too-long-for-linux", false},
	} {
		_, err := ParseFlags([]string{"--agent", "--probe-key-file=/key", "--node-sysfs=/host/sys", "--node-link=" + tc.link})
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--node-link")) {
			t.Errorf("--node-link=%s: %v, want ok %v, or an error naming the flag", tc.link, err, tc.ok)
		}
	}
	t.Setenv("HOST_IP", "172.18.0.5")
	if o, err := ParseFlags([]string{"--agent", "--probe-key-file=/key"}); err != nil || o.HostIP.String() != "172.18.0.5" {
		t.Errorf("$HOST_IP: --host-ip %v (%v), want 172.18.0.5", o.HostIP, err)
	}
}

// TestProbingFlags: every probing flag that can be wrong fails start-up,
// naming itself; the timeout and the budget share reach the prober.
func TestProbingFlags(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("a probe key of more than sixteen bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--agents=10.0.0.1:10271", "--probe-key-file=" + key}
	for _, tc := range []struct {
		args []string
		flag string // "" for none
	}{
		{nil, ""},
		{[]string{"--probers=0"}, "--probers"},
		{[]string{"--bandwidth-difference=1"}, "--bandwidth-difference"},
		{[]string{"--latency-difference-ms=-1"}, "--latency-difference"},
		{[]string{"--loss-difference=NaN"}, "--loss-difference"},
		{[]string{"--warm-up-quorum=2"}, "--warm-up-quorum"},
		{[]string{"--pairs-per-node=17"}, "--pairs-per-node"},
		{[]string{"--pair-echoes=0"}, "--pair-echoes"},
	} {
		_, err := ParseFlags(append(append([]string{}, base...), tc.args...))
		if (err == nil) != (tc.flag == "") || (err != nil && !strings.Contains(err.Error(), tc.flag)) {
			t.Errorf("%v: %v, want an error naming %q", tc.args, err, tc.flag)
		}
	}
	for _, mode := range [][]string{{"--agents=10.0.0.1:10271"}, {"--agent"}, {"--agent-check=127.0.0.1:10271"}} {
		if _, err := ParseFlags(mode); err == nil || !strings.Contains(err.Error(), "--probe-key-file") {
			t.Errorf("%v without a key: %v, want an error naming --probe-key-file", mode, err)
		}
	}
	o, err := ParseFlags(append(base, "--probe-timeout=1500ms", "--probers=3", "--probe-budget-mbps=12", "--pairs-per-node=4", "--pair-echoes=20"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.probeConfig()
	if err != nil || cfg.Timeout != 1500*time.Millisecond || cfg.BudgetBytesPerSecond != 12e6/8/3 || cfg.Key == nil || cfg.PairsPerNode != 4 || cfg.PairEchoesPerSecond != 20 {
		t.Errorf("probe config %+v (%v): want a 1.5 s timeout, a third of 12 Mbit/s, the key, 4 pairs per node at 20 echoes a second", cfg, err)
	}
	o.KeyFile = filepath.Join(t.TempDir(), "missing")
	if _, err := o.probeConfig(); err == nil || !strings.Contains(err.Error(), "probe key") {
		t.Errorf("a missing key file: %v, want an error about the probe key", err)
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
		got := measurementsOf(snap, livescore.DefaultRules()).Nodes["n1"].LinkUseMbps
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

// TestPeersFlag: --peers finds the other agents as --agents does, and a
// bad value fails start-up naming --peers.
func TestPeersFlag(t *testing.T) {
	o, err := ParseFlags([]string{"--agent", "--probe-key-file=/key", "--peers=dns:kns-3-agent.kns-3-agents.svc:10271"})
	if err != nil || o.Peers != "dns:kns-3-agent.kns-3-agents.svc:10271" {
		t.Errorf("--peers: %q (%v)", o.Peers, err)
	}
	if _, err := ParseFlags([]string{"--agent", "--probe-key-file=/key", "--peers=dns:kns-3-agent"}); err == nil || !strings.Contains(err.Error(), "--peers=") {
		t.Errorf("--peers without a port: %v, want an error naming --peers", err)
	}
}

// TestMeasurementsCarryPairs checks the snapshot's coordinates and pairs
// reach the API's answer: coordinates rounded to a tenth of a
// microsecond and aged by the snapshot's time, pairs with their
// estimates; and no pairs key when nothing between nodes is known.
func TestMeasurementsCarryPairs(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 10, 0, time.UTC)
	snap := probe.Snapshot{At: at, Window: 15 * time.Second, Nodes: map[string]probe.Metrics{}}
	if m := measurementsOf(snap, livescore.DefaultRules()); m.Pairs != nil {
		t.Errorf("nothing between nodes: pairs %+v, want none", m.Pairs)
	}
	coord := &coordinate.Coordinate{Vec: []float64{1.23456789e-4, -2e-9, 0, 0, 0, 0, 0, 0}, Error: 0.212345, Adjustment: -3.33333e-6, Height: 1.0000049e-5}
	snap.Coordinates = map[string]probe.NodeCoordinate{"a": {Coordinate: coord, Samples: 31, At: at.Add(-2 * time.Second)}}
	loss := &probe.Estimate{Value: 0.02, Low: 0.01, High: 0.03, Samples: 750, At: at.Add(-3 * time.Second)}
	snap.Pairs = []probe.PairMetrics{{From: "a", To: "b", PacketLoss: loss}}
	p := measurementsOf(snap, livescore.DefaultRules()).Pairs
	if p == nil || p.WindowSeconds != 15 || len(p.Coordinates) != 1 || len(p.Measured) != 1 {
		t.Fatalf("pairs %+v: want one coordinate and one pair over 15 s", p)
	}
	c := p.Coordinates["a"]
	if c.Vec[0] != 1.235e-4 || c.Vec[1] != 0 || c.Error != 0.212 || c.Adjustment != -3.3e-6 || c.Height != 1e-5 || c.Samples != 31 || c.AgeSeconds != 2 {
		t.Errorf("coordinate %+v: want serf's, rounded to 0.1 µs, 31 samples, 2 s old", c)
	}
	m := p.Measured[0]
	if m.From != "a" || m.To != "b" || m.LatencyMs != nil || m.PacketLoss == nil || m.PacketLoss.Samples != 750 || m.PacketLoss.AgeSeconds != 3 {
		t.Errorf("pair %+v: want a to b's loss of 750 echoes, 3 s old, and no latency", m)
	}
}
