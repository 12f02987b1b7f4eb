// Command coredns is CoreDNS cut down to the plugins kubeadm's Corefile
// uses, with "forward" and "loop" replaced by plugins that accept their
// configuration and do nothing: names outside the cluster get SERVFAIL and
// no query ever leaves the cluster.
package main

import (
	"github.com/coredns/caddy"
	"github.com/coredns/coredns/coremain"
	"github.com/coredns/coredns/plugin"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func init() {
	for _, name := range []string{"forward", "loop"} {
		plugin.Register(name, ignore)
	}
}

// ignore consumes a directive and its block without adding a handler.
func ignore(c *caddy.Controller) error {
	for c.Next() {
		for c.NextBlock() {
			c.RemainingArgs()
		}
	}
	return nil
}

func main() {
	coremain.Run()
}
