// Command kns3-cni is the kind node image's pod network: on every node it
// writes a ptp + host-local CNI configuration for the node's pod CIDR and
// routes every other node's pod CIDR via that node's InternalIP. The nodes
// share one Docker network, so no encapsulation is needed.
//
// network.go holds what it decides (pure functions, unit-tested); this file
// holds what touches the cluster and the host.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

const confPath = "/etc/cni/net.d/10-kns3.conflist"

func main() {
	node, err := nodeName(os.Getenv)
	if err != nil {
		klog.Fatal(err)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		klog.Fatalf("in-cluster config: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	nodes := factory.Core().V1().Nodes()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, n any) { poke(n) }, DeleteFunc: poke,
	}); err != nil {
		klog.Fatal(err)
	}
	ctx := context.Background()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for range changed {
		all, err := nodes.Lister().List(labels.Everything())
		if err == nil {
			err = reconcile(node, all, hostNetwork{})
		}
		if err != nil {
			klog.ErrorS(err, "Reconciling the pod network failed; retrying")
			time.AfterFunc(5*time.Second, func() { poke(nil) })
		}
	}
}

// hostNetwork is the node's network: its CNI configuration file and its
// routing table.
type hostNetwork struct{}

func (hostNetwork) writeConfig(podCIDR string) error {
	data, err := cniConfig(podCIDR)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(confPath); err == nil && string(old) == string(data) {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(confPath), ".10-kns3.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	klog.InfoS("Writing CNI configuration", "path", confPath, "podCIDR", podCIDR)
	return os.Rename(tmp, confPath)
}

func (hostNetwork) replaceRoute(node string, dst *net.IPNet, gw net.IP) error {
	if err := netlink.RouteReplace(&netlink.Route{Dst: dst, Gw: gw}); err != nil {
		return fmt.Errorf("route %s via %s (node %s): %w", dst, gw, node, err)
	}
	klog.V(2).InfoS("Routed pod CIDR", "node", node, "podCIDR", dst, "via", gw)
	return nil
}
