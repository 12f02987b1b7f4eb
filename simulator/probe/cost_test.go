package probe

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
)

// agentsEnv makes the test binary serve that many agents on loopback
// instead of running tests: the cost test's agents live in another
// process, so the CPU it reports is the prober's.
const agentsEnv = "KNS3_PROBE_AGENTS"

func TestMain(m *testing.M) {
	if n := os.Getenv(agentsEnv); n != "" {
		if err := serveAgents(n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// serveAgents serves n agents on 127.0.0.1, prints their addresses, and
// returns when stdin closes.
func serveAgents(n string) error {
	count, err := strconv.Atoi(n)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := bufio.NewWriter(os.Stdout)
	for i := range count {
		conn, trains, err := listenPairOf()
		if err != nil {
			return err
		}
		fmt.Fprintln(w, conn.LocalAddr())
		a := agent.NewAgent(fmt.Sprintf("node-%05d", i), conn, testKey, agent.WithTrainConn(trains))
		go a.Serve(ctx)
	}
	w.Flush()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return nil
}

// listenPairOf is listenPair outside a test.
func listenPairOf() (conn, trains *net.UDPConn, err error) {
	for range 100 {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return nil, nil, err
		}
		port := c.LocalAddr().(*net.UDPAddr).Port
		tc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(wire.TrainPort(uint16(port)))})
		if err == nil {
			return c, tc, nil
		}
		c.Close()
	}
	return nil, nil, fmt.Errorf("no two free ports in a row on loopback")
}

// TestCostAtScale probes 5,000 agents on loopback for a few windows and
// checks the cost bound: every node's latency and loss refreshed within
// each window, and probing, on the wire, within the budget (1 % of a
// 1 Gbit/s link) however many nodes there are. It logs what it cost.
func TestCostAtScale(t *testing.T) {
	const nodes = 5000
	const window = 5 * time.Second
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), agentsEnv+"="+strconv.Itoa(nodes))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	var addrs []string
	sc := bufio.NewScanner(stdout)
	for len(addrs) < nodes && sc.Scan() {
		addrs = append(addrs, sc.Text())
	}
	if len(addrs) != nodes {
		t.Fatalf("the agents' process gave %d addresses, want %d: %v", len(addrs), nodes, sc.Err())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents(addrs), Window: window})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	// One window to find and name the agents, one to fill the first.
	time.Sleep(2 * window)
	c0, cpu0, t0 := p.Cost(), cpuTime(t), time.Now()
	time.Sleep(2 * window)
	c1, cpu1, t1 := p.Cost(), cpuTime(t), time.Now()
	snap := p.Snapshot()

	secs := t1.Sub(t0).Seconds()
	bytes := float64(c1.BytesSent-c0.BytesSent+c1.BytesReceived-c0.BytesReceived) / secs
	budget := float64(DefaultBudgetBytesPerSecond)
	t.Logf("%d nodes, window %s: %.0f echoes/s (%.0f answered), %.2f trains/s, %.0f bytes/s on the wire (budget %.0f), prober CPU %.1f%% of a core, RSS %s, oldest latency %s, oldest bandwidth %s, %d of %d nodes with bandwidth",
		nodes, window, float64(c1.EchoesSent-c0.EchoesSent)/secs, float64(c1.EchoesAnswered-c0.EchoesAnswered)/secs,
		float64(c1.Trains-c0.Trains)/secs, bytes, budget, 100*(cpu1-cpu0).Seconds()/secs, rss(t),
		snap.OldestEcho.Round(time.Millisecond), snap.OldestBandwidth.Round(time.Millisecond), withBandwidth(snap), len(snap.Nodes))
	if len(snap.Nodes) != nodes {
		t.Errorf("%d nodes measured, want %d", len(snap.Nodes), nodes)
	}
	if snap.OldestEcho > window {
		t.Errorf("a node went %s without a resolved echo, want within the window %s", snap.OldestEcho, window)
	}
	// The bucket allows one train's worth above the rate over any span.
	if limit := budget + trainWireBytes(80)/secs; bytes > limit {
		t.Errorf("probing cost %.0f bytes/s, want at most %.0f", bytes, limit)
	}
}

func withBandwidth(s Snapshot) int {
	n := 0
	for _, m := range s.Nodes {
		if m.BandwidthMbps != nil {
			n++
		}
	}
	return n
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is the process's resident memory, from /proc.
func rss(t *testing.T) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
