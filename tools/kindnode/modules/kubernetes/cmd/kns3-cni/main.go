// Command kns3-cni is the kind node image's pod network: on every node it
// writes a ptp + host-local CNI configuration for the node's pod CIDR and
// routes every other node's pod CIDR via that node's InternalIP. The nodes
// share one Docker network, so no encapsulation is needed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

const confPath = "/etc/cni/net.d/10-kns3.conflist"

func main() {
	node := os.Getenv("NODE_NAME")
	if node == "" {
		klog.Fatal("NODE_NAME is not set")
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
			err = reconcile(node, all)
		}
		if err != nil {
			klog.ErrorS(err, "Reconciling the pod network failed; retrying")
			time.AfterFunc(5*time.Second, func() { poke(nil) })
		}
	}
}

func reconcile(self string, nodes []*v1.Node) error {
	for _, n := range nodes {
		if n.Spec.PodCIDR == "" {
			continue
		}
		if n.Name == self {
			if err := writeConfig(n.Spec.PodCIDR); err != nil {
				return err
			}
			continue
		}
		if err := route(n); err != nil {
			return err
		}
	}
	return nil
}

func writeConfig(podCIDR string) error {
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "kns3",
		"plugins": []any{
			map[string]any{
				"type": "ptp", "ipMasq": false, "mtu": 1500,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": [][]map[string]string{{{"subnet": podCIDR}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
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

func route(n *v1.Node) error {
	var gw net.IP
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			if ip := net.ParseIP(a.Address); ip != nil && ip.To4() != nil {
				gw = ip
			}
		}
	}
	if gw == nil {
		return nil
	}
	_, dst, err := net.ParseCIDR(n.Spec.PodCIDR)
	if err != nil {
		return fmt.Errorf("node %s: pod CIDR %q: %w", n.Name, n.Spec.PodCIDR, err)
	}
	if err := netlink.RouteReplace(&netlink.Route{Dst: dst, Gw: gw}); err != nil {
		return fmt.Errorf("route %s via %s (node %s): %w", dst, gw, n.Name, err)
	}
	klog.V(2).InfoS("Routed pod CIDR", "node", n.Name, "podCIDR", dst, "via", gw)
	return nil
}
