// Command simulator is the KNS-3 network simulator stub: it serves the
// simulator API from a scenario file, reloading it when it changes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"kns3.dev/kns3"
	"kns3.dev/kns3/simulator/probe"
	"kns3.dev/kns3/simulator/scenario"
	"kns3.dev/kns3/simulator/server"
)

func main() {
	if err := run(); err != nil {
		klog.ErrorS(err, "Simulator failed")
		klog.Flush()
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	listen      string
	scenario    string
	reload      time.Duration
	showVersion bool
	probe       string

	// agents, when set, makes the simulator measure the nodes itself.
	agents        string
	window        time.Duration
	budgetMbps    float64
	echoesPerNode float64

	// agent runs the probe agent instead, answering for node on agentListen.
	agent       bool
	agentListen string
	node        string
	agentCheck  string
}

// parseFlags parses the command line, klog's flags included.
func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("simulator", flag.ExitOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:80", "address to serve the simulator API on (\":80\" for every interface)")
	fs.StringVar(&o.scenario, "scenario", "", "scenario file (YAML or JSON); empty serves empty results")
	fs.DurationVar(&o.reload, "reload-interval", 2*time.Second, "how often the scenario file is checked for changes")
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	fs.StringVar(&o.probe, "probe", "", "GET this URL, exit 0 on 200 OK and 1 otherwise (an exec probe for a simulator listening on loopback)")
	fs.StringVar(&o.agents, "agents", "", "measure the nodes through these probe agents: dns:NAME:PORT (a headless Service's name) or a comma-separated list of HOST:PORT; empty serves the scenario alone")
	fs.DurationVar(&o.window, "window", 30*time.Second, "with --agents: the window latency and loss summarise, and within which every node's are refreshed")
	fs.Float64Var(&o.budgetMbps, "probe-budget-mbps", 10, "with --agents: what probing may send and receive together, in Mbit/s (10 is 1% of a 1 Gbit/s link)")
	fs.Float64Var(&o.echoesPerNode, "echoes-per-node", 10, "with --agents: echoes per node per second while the budget allows")
	fs.BoolVar(&o.agent, "agent", false, "run the probe agent of one node instead of the simulator")
	fs.StringVar(&o.agentListen, "agent-listen", ":10271", "with --agent: the UDP address to answer probes on")
	fs.StringVar(&o.node, "node-name", os.Getenv("NODE_NAME"), "with --agent: the node the agent answers for")
	fs.StringVar(&o.agentCheck, "agent-check", "", "send a hello to the agent at this UDP address, exit 0 when it answers (the agent's liveness probe)")
	klog.InitFlags(fs)
	err := fs.Parse(args)
	return o, err
}

// agentsOf parses --agents.
func agentsOf(spec string) (func(context.Context) ([]string, error), error) {
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("--agents=%s: want dns:NAME:PORT: %w", spec, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--agents=%s: port %q is not 1 to 65535", spec, port)
		}
		if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 {
			return nil, fmt.Errorf("--agents=%s: %q: %s", spec, host, strings.Join(msgs, "; "))
		}
		return probe.DNSAgents(host, n), nil
	}
	addrs := strings.Split(spec, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("--agents=%s: %q: %w", spec, a, err)
		}
	}
	return probe.StaticAgents(addrs), nil
}

// measured adapts the prober's snapshot to the server's live source.
func measured(p *probe.Prober) func() (uint64, scenario.Measured) {
	return func() (uint64, scenario.Measured) {
		snap := p.Snapshot()
		m := scenario.Measured{At: snap.At, WindowSeconds: int(snap.Window / time.Second), Nodes: map[string]scenario.Node{}}
		for name, n := range snap.Nodes {
			m.Nodes[name] = scenario.Node{LatencyMs: n.LatencyMs, BandwidthMbps: n.BandwidthMbps, PacketLoss: n.PacketLoss}
		}
		return snap.Seq, m
	}
}

// runAgent answers probes until ctx ends.
func runAgent(ctx context.Context, o options) error {
	a, err := probe.Listen(o.agentListen, o.node)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Probe agent serving", "version", kns3.Version, "address", a.Addr().String(), "node", o.node)
	return a.Serve(ctx)
}

func run() error {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		return err
	}
	if o.showVersion {
		fmt.Printf("kns-3-simulator %s\n", kns3.Version)
		return nil
	}
	if o.probe != "" {
		return probeURL(o.probe)
	}
	if o.agentCheck != "" {
		_, err := probe.Check(o.agentCheck, 2*time.Second)
		return err
	}
	if o.reload <= 0 {
		return fmt.Errorf("--reload-interval must be positive, got %s", o.reload)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)
	if o.agent {
		return runAgent(ctx, o)
	}

	srv := server.New()
	if o.agents != "" {
		find, err := agentsOf(o.agents)
		if err != nil {
			return err
		}
		p, err := probe.NewProber(probe.Config{
			Agents: find, Window: o.window,
			BudgetBytesPerSecond:   o.budgetMbps * 1e6 / 8,
			EchoesPerNodePerSecond: o.echoesPerNode,
		})
		if err != nil {
			return err
		}
		go p.Run(ctx)
		srv.SetLive(measured(p))
		logger.Info("Measuring the nodes", "agents", o.agents, "window", o.window, "budgetMbps", o.budgetMbps)
	}
	if o.scenario == "" {
		logger.Info("No --scenario given: /simulate serves what is measured, if anything")
	} else {
		// A scenario that is bad from the start fails start-up; a later bad
		// version is logged and the last good one is kept. A reloaded
		// scenario with fault.exit_code ends the process with that code; the
		// one read at start-up does not, so a restarted container serves.
		onLoad := scenario.ExitOnReload(logger, os.Exit, srv.SetScenario)
		if err := scenario.Watch(ctx, o.scenario, o.reload, onLoad); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.listen, err)
	}
	httpServer := newHTTPServer(srv.Handler())
	logger.Info("Simulator serving", "version", kns3.Version, "address", ln.Addr().String(), "scenario", o.scenario)
	errCh := make(chan error, 1)
	go func() { errCh <- httpServer.Serve(ln) }()
	select {
	case err := <-errCh:
		return err
	case <-ctx.Done():
	}
	// Release the requests held by fault.hang or fault.delay_ms first:
	// Shutdown waits for every handler.
	srv.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHTTPServer returns the http.Server that serves h. Its timeouts reap
// slow request headers and idle keep-alive connections, and never end a
// request in progress, which a fault may hold on purpose: a hung /simulate
// request lasts until its client gives up. So there is no WriteTimeout: its
// deadline runs from the moment the request's header is read, so it would
// count fault.delay_ms and drop the delayed answer, and one above the longest
// delay (scenario.MaxDelayMs, 10 minutes) would reap nothing in time. No
// handler reads a request body, so ReadHeaderTimeout bounds the reading.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       90 * time.Second,
	}
}

// probeURL is a health check from inside the pod, where the simulator's
// loopback address is reachable and the kubelet's HTTP probes are not.
func probeURL(url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: %s answered %s", url, resp.Status)
	}
	return nil
}
