package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"

	v1 "k8s.io/api/core/v1"
)

// nodeName is the node this instance runs on, from NODE_NAME (the
// DaemonSet sets it from spec.nodeName).
func nodeName(getenv func(string) string) (string, error) {
	node := getenv("NODE_NAME")
	if node == "" {
		return "", errors.New("NODE_NAME is not set")
	}
	return node, nil
}

// network is what reconcile changes on the host.
type network interface {
	// writeConfig makes the CNI configuration the one for podCIDR.
	writeConfig(podCIDR string) error
	// replaceRoute routes dst, node's pod CIDR, via gw.
	replaceRoute(node string, dst *net.IPNet, gw net.IP) error
}

// reconcile brings host in line with the cluster's nodes: the CNI
// configuration for self's pod CIDR, and a route to every other node's pod
// CIDR. Nodes without a pod CIDR are skipped; the first error stops it, and
// the caller retries the whole list.
func reconcile(self string, nodes []*v1.Node, host network) error {
	for _, n := range nodes {
		if n.Spec.PodCIDR == "" {
			continue
		}
		if n.Name == self {
			if err := host.writeConfig(n.Spec.PodCIDR); err != nil {
				return err
			}
			continue
		}
		dst, gw, err := podRoute(n)
		if err != nil {
			return err
		}
		if dst == nil {
			continue
		}
		if err := host.replaceRoute(n.Name, dst, gw); err != nil {
			return err
		}
	}
	return nil
}

// podRoute is the route to n's pods: its pod CIDR via its (last) IPv4
// InternalIP. A node without one gets no route (nil dst), whatever its pod
// CIDR says.
func podRoute(n *v1.Node) (dst *net.IPNet, gw net.IP, err error) {
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			if ip := net.ParseIP(a.Address); ip != nil && ip.To4() != nil {
				gw = ip
			}
		}
	}
	if gw == nil {
		return nil, nil, nil
	}
	_, dst, err = net.ParseCIDR(n.Spec.PodCIDR)
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: pod CIDR %q: %w", n.Name, n.Spec.PodCIDR, err)
	}
	return dst, gw, nil
}

// cniConfig is the CNI configuration list for a node whose pods take their
// addresses from podCIDR: ptp links with host-local addresses and a default
// route, no masquerading, and portmap for hostPorts.
func cniConfig(podCIDR string) ([]byte, error) {
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
	return json.MarshalIndent(conf, "", "  ")
}
