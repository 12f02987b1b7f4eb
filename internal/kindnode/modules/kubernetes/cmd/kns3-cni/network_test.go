package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeName(t *testing.T) {
	for _, tt := range []struct {
		env, want string
		wantErr   bool
	}{
		{"kind-worker", "kind-worker", false},
		{"", "", true},
	} {
		got, err := nodeName(func(key string) string {
			if key != "NODE_NAME" {
				t.Errorf("nodeName read %s", key)
			}
			return tt.env
		})
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("nodeName with NODE_NAME=%q = %q, %v; want %q (error %v)", tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

// The file is compared byte for byte before it is rewritten: its exact form
// is part of the behaviour.
const wantConfig = `{
  "cniVersion": "0.4.0",
  "name": "kns3",
  "plugins": [
    {
      "ipMasq": false,
      "ipam": {
        "ranges": [
          [
            {
              "subnet": "10.244.1.0/24"
            }
          ]
        ],
        "routes": [
          {
            "dst": "0.0.0.0/0"
          }
        ],
        "type": "host-local"
      },
      "mtu": 1500,
      "type": "ptp"
    },
    {
      "capabilities": {
        "portMappings": true
      },
      "type": "portmap"
    }
  ]
}`

func TestCNIConfig(t *testing.T) {
	got, err := cniConfig("10.244.1.0/24")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != wantConfig {
		t.Errorf("cniConfig(10.244.1.0/24) =\n%s\nwant\n%s", got, wantConfig)
	}

	for _, cidr := range []string{"10.244.0.0/24", "10.244.2.0/24", "fd00:10:244::/64"} {
		data, err := cniConfig(cidr)
		if err != nil {
			t.Fatal(err)
		}
		var conf struct {
			CNIVersion string `json:"cniVersion"`
			Name       string `json:"name"`
			Plugins    []struct {
				Type string `json:"type"`
				IPAM struct {
					Type   string                `json:"type"`
					Ranges [][]map[string]string `json:"ranges"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(data, &conf); err != nil {
			t.Fatalf("cniConfig(%s) is not JSON: %v", cidr, err)
		}
		if len(conf.Plugins) != 2 || conf.Plugins[0].Type != "ptp" || conf.Plugins[1].Type != "portmap" {
			t.Fatalf("cniConfig(%s) plugins = %+v, want ptp then portmap", cidr, conf.Plugins)
		}
		ipam := conf.Plugins[0].IPAM
		if ipam.Type != "host-local" || len(ipam.Ranges) != 1 || len(ipam.Ranges[0]) != 1 || ipam.Ranges[0][0]["subnet"] != cidr {
			t.Errorf("cniConfig(%s) ipam = %+v, want host-local on the one subnet %s", cidr, ipam, cidr)
		}
	}
}

func node(name, podCIDR string, addrs ...v1.NodeAddress) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.NodeSpec{PodCIDR: podCIDR},
		Status:     v1.NodeStatus{Addresses: addrs},
	}
}

func internal(ip string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip} }

func TestPodRoute(t *testing.T) {
	for _, tt := range []struct {
		name      string
		node      *v1.Node
		dst, gw   string // "" for no route
		wantError string
	}{
		{name: "IPv4 InternalIP",
			node: node("w1", "10.244.1.0/24", internal("172.18.0.3")),
			dst:  "10.244.1.0/24", gw: "172.18.0.3"},
		{name: "pod CIDR given by an address inside it",
			node: node("w1", "10.244.1.7/24", internal("172.18.0.3")),
			dst:  "10.244.1.0/24", gw: "172.18.0.3"},
		{name: "the last IPv4 InternalIP wins",
			node: node("w1", "10.244.1.0/24", internal("172.18.0.3"), internal("fc00:f853::3"), internal("172.18.0.9")),
			dst:  "10.244.1.0/24", gw: "172.18.0.9"},
		{name: "other address types are ignored",
			node: node("w1", "10.244.1.0/24",
				v1.NodeAddress{Type: v1.NodeHostName, Address: "w1"},
				v1.NodeAddress{Type: v1.NodeExternalIP, Address: "203.0.113.4"},
				internal("172.18.0.3")),
			dst: "10.244.1.0/24", gw: "172.18.0.3"},
		{name: "IPv6 InternalIP only: no route",
			node: node("w1", "10.244.1.0/24", internal("fc00:f853::3"))},
		{name: "ExternalIP only: no route",
			node: node("w1", "10.244.1.0/24", v1.NodeAddress{Type: v1.NodeExternalIP, Address: "203.0.113.4"})},
		{name: "unparsable InternalIP: no route",
			node: node("w1", "10.244.1.0/24", internal("not-an-ip"))},
		{name: "no addresses: no route, even for a bad pod CIDR",
			node: node("w1", "bogus")},
		{name: "bad pod CIDR",
			node:      node("w1", "10.244.1.0", internal("172.18.0.3")),
			wantError: `node w1: pod CIDR "10.244.1.0"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst, gw, err := podRoute(tt.node)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("podRoute error = %v, want one containing %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.dst == "" {
				if dst != nil || gw != nil {
					t.Errorf("podRoute = %v via %v, want no route", dst, gw)
				}
				return
			}
			if dst == nil || dst.String() != tt.dst || !gw.Equal(net.ParseIP(tt.gw)) {
				t.Errorf("podRoute = %v via %v, want %s via %s", dst, gw, tt.dst, tt.gw)
			}
		})
	}
}

// fakeNetwork records what reconcile asks of the host.
type fakeNetwork struct {
	calls []string
	fail  map[string]error // by call
}

func (f *fakeNetwork) record(call string) error {
	f.calls = append(f.calls, call)
	return f.fail[call]
}

func (f *fakeNetwork) writeConfig(podCIDR string) error {
	return f.record("config " + podCIDR)
}

func (f *fakeNetwork) replaceRoute(node string, dst *net.IPNet, gw net.IP) error {
	return f.record(fmt.Sprintf("route %s %s via %s", node, dst, gw))
}

func TestReconcile(t *testing.T) {
	errBoom := errors.New("boom")
	cluster := []*v1.Node{
		node("cp", "10.244.0.0/24", internal("172.18.0.2")),
		node("w1", "10.244.1.0/24", internal("172.18.0.3")),
		node("new", "", internal("172.18.0.5")), // no pod CIDR yet
		node("w2", "10.244.2.0/24", internal("172.18.0.4")),
	}
	for _, tt := range []struct {
		name      string
		self      string
		nodes     []*v1.Node
		fail      map[string]error
		want      []string
		wantError string
	}{
		{name: "own configuration and routes to the others, in list order",
			self: "w1", nodes: cluster,
			want: []string{
				"route cp 10.244.0.0/24 via 172.18.0.2",
				"config 10.244.1.0/24",
				"route w2 10.244.2.0/24 via 172.18.0.4",
			}},
		{name: "own node without a pod CIDR yet: routes only",
			self: "new", nodes: cluster,
			want: []string{
				"route cp 10.244.0.0/24 via 172.18.0.2",
				"route w1 10.244.1.0/24 via 172.18.0.3",
				"route w2 10.244.2.0/24 via 172.18.0.4",
			}},
		{name: "a node without an IPv4 InternalIP is skipped",
			self: "cp",
			nodes: []*v1.Node{
				node("cp", "10.244.0.0/24", internal("172.18.0.2")),
				node("v6", "10.244.3.0/24", internal("fc00:f853::3")),
				node("w2", "10.244.2.0/24", internal("172.18.0.4")),
			},
			want: []string{"config 10.244.0.0/24", "route w2 10.244.2.0/24 via 172.18.0.4"}},
		{name: "no nodes", self: "cp"},
		{name: "a failed route stops the pass",
			self: "w1", nodes: cluster,
			fail:      map[string]error{"route cp 10.244.0.0/24 via 172.18.0.2": errBoom},
			want:      []string{"route cp 10.244.0.0/24 via 172.18.0.2"},
			wantError: "boom"},
		{name: "a failed configuration write stops the pass",
			self: "w1", nodes: cluster,
			fail:      map[string]error{"config 10.244.1.0/24": errBoom},
			want:      []string{"route cp 10.244.0.0/24 via 172.18.0.2", "config 10.244.1.0/24"},
			wantError: "boom"},
		{name: "a bad pod CIDR stops the pass after the nodes before it",
			self: "w2",
			nodes: []*v1.Node{
				node("cp", "10.244.0.0/24", internal("172.18.0.2")),
				node("bad", "10.244.9.0/33", internal("172.18.0.9")),
				node("w2", "10.244.2.0/24", internal("172.18.0.4")),
			},
			want:      []string{"route cp 10.244.0.0/24 via 172.18.0.2"},
			wantError: `node bad: pod CIDR "10.244.9.0/33"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			host := &fakeNetwork{fail: tt.fail}
			err := reconcile(tt.self, tt.nodes, host)
			if tt.wantError == "" && err != nil {
				t.Errorf("reconcile: %v", err)
			}
			if tt.wantError != "" && (err == nil || !strings.Contains(err.Error(), tt.wantError)) {
				t.Errorf("reconcile error = %v, want one containing %q", err, tt.wantError)
			}
			if strings.Join(host.calls, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("reconcile did\n  %s\nwant\n  %s", strings.Join(host.calls, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
