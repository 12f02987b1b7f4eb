package app

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/api/ties"
	"kns3.dev/kns3/simulator/livescore"
	"kns3.dev/kns3/simulator/probe"
	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
)

// Options are the command's flags. One process runs one of four modes:
// the simulator (the default), the probe agent (--agent), or a one-shot
// check (--probe, --agent-check).
type Options struct {
	Listen      string
	Scenario    string
	Reload      time.Duration
	ShowVersion bool
	// ProbeURL, when set, GETs it and exits: an exec probe.
	ProbeURL string

	// Agents, when set, makes the simulator measure the nodes itself.
	Agents     string
	Window     time.Duration
	Timeout    time.Duration
	BudgetMbps float64
	// Probers is how many simulators probe the same agents, each with its
	// share of the budget.
	Probers         int
	EchoesPerNode   float64
	BandwidthMaxAge time.Duration
	// PairsPerNode and PairEchoes say how many of its nearest nodes each
	// node of interest has measured directly, and at what echo rate.
	PairsPerNode int
	PairEchoes   int
	Rules        livescore.Rules
	// KeyFile holds the probe key the prober and the agents share.
	KeyFile string

	// Agent runs the probe agent instead, answering for Node on
	// AgentListen; with Peers, it measures the other agents too.
	Agent       bool
	AgentListen string
	Node        string
	Peers       string
	// NodeSysfs, when set, is the node's /sys as the agent sees it; the
	// agent then reads NodeLink's byte counters there, or, for
	// agent.AutoLink, those of the interface PickLink finds from
	// NodeRoutes and HostIP.
	NodeSysfs  string
	NodeLink   string
	NodeRoutes string
	HostIP     netip.Addr
	// AgentCheck, when set, sends a hello there and exits: the agent's
	// liveness probe.
	AgentCheck string
}

// ParseFlags parses the command line, klog's flags included.
func ParseFlags(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("simulator", flag.ContinueOnError)
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:80", "address to serve the simulator API on (\":80\" for every interface)")
	fs.StringVar(&o.Scenario, "scenario", "", "scenario file (YAML or JSON); empty serves empty results")
	fs.DurationVar(&o.Reload, "reload-interval", 2*time.Second, "how often the scenario file is checked for changes")
	fs.BoolVar(&o.ShowVersion, "version", false, "print the version and exit")
	fs.StringVar(&o.ProbeURL, "probe", "", "GET this URL, exit 0 on 200 OK and 1 otherwise (an exec probe for a simulator listening on loopback)")
	fs.StringVar(&o.Agents, "agents", "", "measure the nodes through these probe agents: dns:NAME:PORT (a headless Service's name; a trailing dot makes it absolute) or a comma-separated list of HOST:PORT; empty serves the scenario alone")
	fs.DurationVar(&o.Window, "window", 30*time.Second, "with --agents: the window latency and loss summarise, and within which every node's are refreshed")
	fs.DurationVar(&o.Timeout, "probe-timeout", time.Second, "with --agents: how long an echo's round trip on the network may take before the echo counts as lost (an answer that waited in a busy agent is late, not lost)")
	fs.Float64Var(&o.BudgetMbps, "probe-budget-mbps", 10, "with --agents: what probing may send and receive together, in Mbit/s (10 is 1% of a 1 Gbit/s link), all --probers together")
	fs.IntVar(&o.Probers, "probers", 1, "with --agents: how many simulators probe the same agents (one per control-plane node in the one-scheduler install); each takes its share of --probe-budget-mbps")
	fs.StringVar(&o.KeyFile, "probe-key-file", "", "with --agents, --agent or --agent-check: the file holding the probe key the simulator and the agents share (a mounted Secret); every probe is signed with it")
	fs.Float64Var(&o.EchoesPerNode, "echoes-per-node", 10, "with --agents: echoes per node per second while the budget allows; more echoes tell smaller losses apart")
	fs.DurationVar(&o.BandwidthMaxAge, "bandwidth-max-age", 0, fmt.Sprintf("with --agents: how long a node's bandwidth sample stays its bandwidth; older, it is unknown (default %d windows, at least twice the time the budget needs to send every node a train)", probe.DefaultBandwidthMaxAgeWindows))
	fs.IntVar(&o.PairsPerNode, "pairs-per-node", probe.DefaultPairsPerNode, fmt.Sprintf("with --agents: how many of its nearest nodes by network coordinates each node PUT /pairs/interest names has measured directly (0 to %d; 0 measures no pair)", wire.MaxPairPeers))
	fs.IntVar(&o.PairEchoes, "pair-echoes", probe.DefaultPairEchoesPerSecond, "with --agents: echoes a second between the two agents of each pair measured directly")
	o.Rules = livescore.DefaultRules()
	fs.Float64Var(&o.Rules.BandwidthMbps, "bandwidth-target-mbps", livescore.DefaultBandwidthMbps, "with --agents: the bandwidth at and above which a node scores fully on bandwidth, in Mbit/s")
	fs.Float64Var(&o.Rules.LatencyMs, "latency-target-ms", livescore.DefaultLatencyMs, "with --agents: the round trip at and below which a node scores fully on latency, in ms")
	fs.Float64Var(&o.Rules.PacketLoss, "loss-target", livescore.DefaultPacketLoss, "with --agents: the packet loss at and below which a node scores fully on loss, a share")
	fs.Float64Var(&o.Rules.Differences.BandwidthRatio, "bandwidth-difference", ties.DefaultBandwidthRatio, "with --agents: the smallest difference in bandwidth that ranks two nodes, a share of the faster one's")
	fs.Float64Var(&o.Rules.Differences.LatencyRatio, "latency-difference", ties.DefaultLatencyRatio, "with --agents: the smallest difference in round trip that ranks two nodes, a share of the shorter one's (or --latency-difference-ms, whichever is larger)")
	fs.Float64Var(&o.Rules.Differences.LatencyMs, "latency-difference-ms", ties.DefaultLatencyMs, "with --agents: the smallest difference in round trip that ranks two nodes, in ms (or --latency-difference, whichever is larger)")
	fs.Float64Var(&o.Rules.Differences.Loss, "loss-difference", ties.DefaultLoss, "with --agents: the smallest difference in packet loss that ranks two nodes, a share")
	fs.Float64Var(&o.Rules.Quorum, "warm-up-quorum", livescore.DefaultQuorum, "with --agents: the share of the nodes found that must be measured in full before scores rank; until then every node scores 0 and the answer says it is warming up")
	fs.BoolVar(&o.Agent, "agent", false, "run the probe agent of one node instead of the simulator")
	fs.StringVar(&o.AgentListen, "agent-listen", ":10271", "with --agent: the UDP address to answer probes on; bandwidth trains arrive on the port after it")
	fs.StringVar(&o.Node, "node-name", os.Getenv("NODE_NAME"), "with --agent: the node the agent answers for")
	fs.StringVar(&o.Peers, "peers", "", "with --agent: measure the other agents too, found as --agents finds them: dns:NAME:PORT (the agents' headless Service) or HOST:PORT,...; about one echo a second to a random one for the network coordinates, and the pairs the simulator asks for. Empty measures none")
	fs.StringVar(&o.NodeSysfs, "node-sysfs", "", "with --agent: the node's /sys, mounted read-only in the agent (as /host/sys); the agent then reads --node-link's byte counters there and reports the traffic on the node's link. Empty reads none")
	fs.StringVar(&o.NodeLink, "node-link", agent.AutoLink, "with --agent and --node-sysfs: the node's interface whose byte counters are its link's use; \"auto\": the one that carries --host-ip by --node-routes, else the default route's, else the node's only interface on a device")
	fs.StringVar(&o.NodeRoutes, "node-routes", "", "with --agent and --node-link=auto: the node's IPv4 routing table, its /proc/1/net/route mounted read-only")
	fs.Func("host-ip", "with --agent and --node-link=auto: the node's address (status.hostIP; default $HOST_IP)", func(s string) error {
		a, err := netip.ParseAddr(s)
		o.HostIP = a
		return err
	})
	fs.StringVar(&o.AgentCheck, "agent-check", "", "send a hello to the agent at this UDP address, exit 0 when it answers (the agent's liveness probe)")
	klog.InitFlags(fs)
	if env := os.Getenv("HOST_IP"); env != "" {
		if err := fs.Set("host-ip", env); err != nil {
			return o, fmt.Errorf("$HOST_IP: %w", err)
		}
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.validate()
}

// validate says what is wrong with o, naming the flag. The probing flags
// are checked by the prober's own validation when it starts.
func (o Options) validate() error {
	if o.Reload <= 0 {
		return fmt.Errorf("--reload-interval must be positive, got %s", o.Reload)
	}
	if o.NodeLink != agent.AutoLink {
		if err := agent.ValidLinkName(o.NodeLink); err != nil {
			return fmt.Errorf("--node-link: %w", err)
		}
	}
	if (o.Agents != "" || o.Agent || o.AgentCheck != "") && o.KeyFile == "" {
		return errors.New("--probe-key-file: the probe key is needed to measure (--agents), to answer probes (--agent) and to check an agent (--agent-check)")
	}
	if o.Peers != "" {
		if _, err := agentsOf("peers", o.Peers); err != nil {
			return err
		}
	}
	if o.Agents != "" {
		if _, err := agentsOf("agents", o.Agents); err != nil {
			return err
		}
		if o.Probers < 1 {
			return fmt.Errorf("--probers: %d, want at least 1", o.Probers)
		}
		if o.PairsPerNode < 0 || o.PairsPerNode > wire.MaxPairPeers {
			return fmt.Errorf("--pairs-per-node: %d, want 0 to %d", o.PairsPerNode, wire.MaxPairPeers)
		}
		if o.PairEchoes < 1 || o.PairEchoes > probe.MaxPairEchoesPerSecond {
			return fmt.Errorf("--pair-echoes: %d, want 1 to %d", o.PairEchoes, probe.MaxPairEchoesPerSecond)
		}
		if err := o.Rules.Targets.Validate(); err != nil {
			return fmt.Errorf("--bandwidth-target-mbps, --latency-target-ms, --loss-target: %w", err)
		}
		if err := o.Rules.Differences.Validate(); err != nil {
			return fmt.Errorf("--bandwidth-difference, --latency-difference, --latency-difference-ms, --loss-difference: %w", err)
		}
		if err := o.Rules.Validate(); err != nil {
			return fmt.Errorf("--warm-up-quorum: %w", err)
		}
	}
	return nil
}

// probeConfig is the prober's configuration from o.
func (o Options) probeConfig() (probe.Config, error) {
	find, err := agentsOf("agents", o.Agents)
	if err != nil {
		return probe.Config{}, err
	}
	key, err := wire.ReadKey(o.KeyFile)
	if err != nil {
		return probe.Config{}, err
	}
	return probe.Config{
		Agents: find, Window: o.Window, Timeout: o.Timeout, Key: key,
		BudgetBytesPerSecond:   o.BudgetMbps * 1e6 / 8 / float64(o.Probers),
		EchoesPerNodePerSecond: o.EchoesPerNode,
		BandwidthMaxAge:        o.BandwidthMaxAge,
		PairsPerNode:           o.PairsPerNode,
		PairEchoesPerSecond:    o.PairEchoes,
	}, nil
}
