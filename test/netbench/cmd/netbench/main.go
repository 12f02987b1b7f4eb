// Command netbench is the kind suite's and the value benchmark's workload:
// `netbench server` serves objects and small calls, `netbench client`
// measures them, from that server or from Redis, and prints one line of
// JSON, `netbench burn` uses every
// CPU it gets, and `netbench forge` sends a probe agent one echo request
// with a forged source address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
	"kns3.dev/kns3/test/netbench"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "netbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: netbench server|client|burn|forge [flags]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fs := flag.NewFlagSet("netbench "+args[0], flag.ExitOnError)
	switch args[0] {
	case "server":
		listen := fs.String("listen", ":8080", "address to serve on")
		_ = fs.Parse(args[1:])
		srv := &http.Server{Addr: *listen, Handler: netbench.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			<-ctx.Done()
			_ = srv.Close()
		}()
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case "client":
		var c netbench.Client
		server := fs.String("server", "", "the netbench server's base URL")
		redisAddr := fs.String("redis", "", "a Redis server's host:port, instead of --server")
		fs.IntVar(&c.ObjectBytes, "object-bytes", 256<<10, "size of each object fetched")
		fs.Float64Var(&c.ObjectsPerSecond, "objects-per-second", 4, "objects fetched per second, one at a time")
		fs.DurationVar(&c.PingInterval, "ping-interval", 100*time.Millisecond, "how often a small call is made")
		fs.DurationVar(&c.PingTimeout, "ping-timeout", 5*time.Second, "a small call taking longer fails")
		fs.DurationVar(&c.Duration, "duration", 30*time.Second, "how long the client runs")
		fs.StringVar(&c.Barrier, "barrier", "", "a barrier on the server to wait at before starting, with --barrier-size clients")
		fs.IntVar(&c.BarrierSize, "barrier-size", 0, "how many clients wait at --barrier")
		barrierTimeout := fs.Duration("barrier-timeout", 5*time.Minute, "how long to wait at --barrier")
		node := fs.String("node", os.Getenv("NODE_NAME"), "the node the client runs on, reported")
		_ = fs.Parse(args[1:])
		switch {
		case (*server == "") == (*redisAddr == ""):
			return errors.New("client: one of --server and --redis is required")
		case c.ObjectBytes < 0 || c.ObjectBytes > netbench.MaxObjectBytes:
			return fmt.Errorf("client: --object-bytes=%d, want 0 to %d", c.ObjectBytes, netbench.MaxObjectBytes)
		case c.ObjectsPerSecond <= 0 || c.PingInterval <= 0 || c.PingTimeout <= 0 || c.Duration <= 0:
			return errors.New("client: --objects-per-second, --ping-interval, --ping-timeout and --duration must be positive")
		case c.Barrier != "" && (c.BarrierSize < 1 || c.BarrierSize > netbench.MaxBarrierSize):
			return fmt.Errorf("client: --barrier-size=%d, want 1 to %d with --barrier", c.BarrierSize, netbench.MaxBarrierSize)
		}
		if *server != "" {
			c.Service = netbench.NewHTTP(*server)
		} else {
			c.Service = netbench.NewRedis(*redisAddr)
		}
		defer c.Service.Close()
		waitCtx, cancel := context.WithTimeout(ctx, *barrierTimeout)
		err := c.Ready(waitCtx)
		cancel()
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		return c.Run(ctx, *node).Print(os.Stdout)
	case "burn":
		workers := fs.Int("workers", runtime.NumCPU(), "goroutines to keep busy")
		_ = fs.Parse(args[1:])
		netbench.Burn(*workers, ctx.Done())
		return nil
	case "forge":
		from := fs.String("from", "", "the forged source, IP:port")
		to := fs.String("to", "", "the agent, IP:port")
		_ = fs.Parse(args[1:])
		src, err := netip.ParseAddrPort(*from)
		if err != nil {
			return fmt.Errorf("forge: --from: %w", err)
		}
		dst, err := netip.ParseAddrPort(*to)
		if err != nil {
			return fmt.Errorf("forge: --to: %w", err)
		}
		if err := netbench.Forge(src, dst, wire.EchoRequest(rand.Uint64())); err != nil {
			return err
		}
		fmt.Printf("forged one echo request %s → %s\n", src, dst)
		// Stay up, so the pod's exit says nothing went wrong.
		<-ctx.Done()
		return nil
	}
	return fmt.Errorf("unknown command %q: want server, client, burn or forge", args[0])
}
