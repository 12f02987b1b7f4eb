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
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3"
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

func run() error {
	fs := flag.NewFlagSet("simulator", flag.ExitOnError)
	listen := fs.String("listen", ":80", "address to serve the simulator API on")
	scenarioPath := fs.String("scenario", "", "scenario file (YAML or JSON); empty serves empty results")
	reload := fs.Duration("reload-interval", 2*time.Second, "how often the scenario file is checked for changes")
	showVersion := fs.Bool("version", false, "print the version and exit")
	probe := fs.String("probe", "", "GET this URL, exit 0 on 200 OK and 1 otherwise (an exec probe for a simulator listening on loopback)")
	klog.InitFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *showVersion {
		fmt.Printf("kns-3-simulator %s\n", kns3.Version)
		return nil
	}
	if *probe != "" {
		return probeURL(*probe)
	}
	if *reload <= 0 {
		return fmt.Errorf("--reload-interval must be positive, got %s", *reload)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)

	srv := server.New()
	if *scenarioPath == "" {
		logger.Info("No --scenario given: /simulate serves empty results")
	} else {
		// A scenario that is bad from the start fails start-up; a later bad
		// version is logged and the last good one is kept. A reloaded
		// scenario with fault.exit_code ends the process with that code; the
		// one read at start-up does not, so a restarted container serves.
		onLoad := scenario.ExitOnReload(logger, os.Exit, srv.SetScenario)
		if err := scenario.Watch(ctx, *scenarioPath, *reload, onLoad); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *listen, err)
	}
	httpServer := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second}
	logger.Info("Simulator serving", "version", kns3.Version, "address", ln.Addr().String(), "scenario", *scenarioPath)
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
