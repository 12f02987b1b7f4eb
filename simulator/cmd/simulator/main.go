// Command simulator is the KNS-3 network simulator stub and its probe
// agent (see package app).
package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/app"
)

func main() {
	o, err := app.ParseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		err = app.Run(ctx, o)
		stop()
	}
	if err != nil {
		klog.ErrorS(err, "Simulator failed")
		klog.Flush()
		os.Exit(1)
	}
}
