// Package app is the simulator command: the simulator stub serving the
// simulator API from a scenario file and, with --agents, from its own
// measurements; the probe agent (--agent); and two exec probes. The
// command's main only parses the flags and calls Run.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3"
	"kns3.dev/kns3/simulator/probe"
	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
	"kns3.dev/kns3/simulator/scenario"
	"kns3.dev/kns3/simulator/server"
)

// Run runs the mode o selects until ctx ends.
func Run(ctx context.Context, o Options) error {
	switch {
	case o.ShowVersion:
		fmt.Printf("kns-3-simulator %s\n", kns3.Version)
		return nil
	case o.ProbeURL != "":
		return probeURL(o.ProbeURL)
	case o.AgentCheck != "":
		key, err := wire.ReadKey(o.KeyFile)
		if err != nil {
			return err
		}
		_, err = agent.Check(o.AgentCheck, 2*time.Second, key)
		return err
	case o.Agent:
		return runAgent(ctx, o)
	}
	return serve(ctx, o)
}

// runAgent answers probes until ctx ends.
func runAgent(ctx context.Context, o Options) error {
	logger := klog.FromContext(ctx)
	key, err := wire.ReadKey(o.KeyFile)
	if err != nil {
		return err
	}
	var opts []agent.Option
	if o.Peers != "" {
		find, err := agentsOf("peers", o.Peers)
		if err != nil {
			return err
		}
		opts = append(opts, agent.WithPeers(find))
	}
	a, err := agent.Listen(o.AgentListen, o.Node, key, opts...)
	if err != nil {
		return err
	}
	link := o.NodeLink
	if o.NodeSysfs != "" {
		if link == agent.AutoLink {
			picked, how, err := agent.PickLink(o.NodeSysfs, o.NodeRoutes, o.HostIP)
			if err != nil {
				// The agent measures all the rest; the node's link use is unknown.
				logger.Error(err, "The node's link use is not read")
			} else {
				logger.Info("Reading the node's link use", "link", picked, "chosenBy", how)
			}
			link = picked
		}
		if link != "" {
			if err := a.ReadLinkCounters(o.NodeSysfs, link); err != nil {
				return err
			}
		}
	}
	logger.Info("Probe agent serving", "version", kns3.Version, "address", a.Addr().String(), "node", o.Node,
		"nodeSysfs", o.NodeSysfs, "nodeLink", link, "peers", o.Peers)
	return a.Serve(ctx)
}

// serve runs the simulator stub until ctx ends.
func serve(ctx context.Context, o Options) error {
	logger := klog.FromContext(ctx)
	srv := server.New()
	if o.Agents != "" {
		cfg, err := o.probeConfig()
		if err != nil {
			return err
		}
		p, err := probe.NewProber(cfg)
		if err != nil {
			return err
		}
		go p.Run(ctx)
		srv.SetLive(measured(p, o.Rules))
		srv.SetPairInterest(p.SetInterest)
		d := o.Rules.Differences
		logger.Info("Measuring the nodes", "agents", o.Agents, "window", o.Window, "timeout", cfg.Timeout,
			"budgetMbps", o.BudgetMbps, "probers", o.Probers,
			"targets", fmt.Sprintf("%g Mbit/s, %g ms, %g loss", o.Rules.BandwidthMbps, o.Rules.LatencyMs, o.Rules.PacketLoss),
			"smallestDifferences", fmt.Sprintf("%g of the bandwidth, %g of the latency or %g ms, %g loss", d.BandwidthRatio, d.LatencyRatio, d.LatencyMs, d.Loss),
			"warmUpQuorum", o.Rules.Quorum, "pairsPerNode", cfg.PairsPerNode, "pairEchoes", cfg.PairEchoesPerSecond)
	}
	if o.Scenario == "" {
		logger.Info("No --scenario given: /simulate serves what is measured, if anything")
	} else {
		// A scenario that is bad from the start fails start-up; a later bad
		// version is logged and the last good one is kept. A reloaded
		// scenario with fault.exit_code ends the process with that code; the
		// one read at start-up does not, so a restarted container serves.
		onLoad := scenario.ExitOnReload(logger, os.Exit, srv.SetScenario)
		if err := scenario.Watch(ctx, o.Scenario, o.Reload, onLoad); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.Listen, err)
	}
	httpServer := newHTTPServer(srv.Handler())
	logger.Info("Simulator serving", "version", kns3.Version, "address", ln.Addr().String(), "scenario", o.Scenario)
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
// delay (scenario.MaxDelayMs, 10 minutes) would reap nothing in time. Nor
// is there a ReadTimeout: a connection's read deadline also ends the
// requests a fault holds. ReadHeaderTimeout bounds reading a request; the
// one handler that reads a body, PUT /pairs/interest, sets its own read
// deadline.
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
