package agent

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kindRoutes is a kind worker's routing table as its agent reads it: the
// node's eth0 holds 172.18.0.5/16, each pod has a /32 through its veth.
const kindRoutes = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth0	00000000	010012AC	0003	0	0	0	00000000	0	0	0
eth0	0000F40A	020012AC	0003	0	0	0	00FFFFFF	0	0	0
veth93906832	0202F40A	00000000	0005	0	0	0	FFFFFFFF	0	0	0
eth0	000012AC	00000000	0001	0	0	0	0000FFFF	0	0	0
`

// cloudRoutes is a VM's: ens5 holds 10.0.1.23/24, a bridge of its own.
const cloudRoutes = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
ens5	00000000	0101000A	0003	0	0	0	00000000	0	0	0
ens5	0001000A	00000000	0001	0	0	0	00FFFFFF	0	0	0
cni0	0000F40A	00000000	0001	0	0	0	0000FFFF	0	0	0
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeNetClass makes a sysfs tree whose class/net has the named links,
// those in devices on a device, the others virtual.
func fakeNetClass(t *testing.T, virtual, devices []string) string {
	t.Helper()
	root := t.TempDir()
	for _, name := range virtual {
		writeFile(t, root, filepath.Join("devices", "virtual", "net", name, "statistics", "rx_bytes"), "0\n")
	}
	for _, name := range devices {
		writeFile(t, root, filepath.Join("devices", "pci0000:00", "net", name, "statistics", "rx_bytes"), "0\n")
	}
	class := filepath.Join(root, "class", "net")
	if err := os.MkdirAll(class, 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(name, under string) {
		if err := os.Symlink(filepath.Join("..", "..", "devices", under, "net", name), filepath.Join(class, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range virtual {
		link(name, "virtual")
	}
	for _, name := range devices {
		link(name, "pci0000:00")
	}
	return root
}

// TestPickLink: the interface that carries the node's address, by its
// routes; else the default route's; else the only one on a device; else
// an error that says what to set.
func TestPickLink(t *testing.T) {
	dir := t.TempDir()
	kind := writeFile(t, dir, "kind", kindRoutes)
	cloud := writeFile(t, dir, "cloud", cloudRoutes)
	noConnected := writeFile(t, dir, "gw-only", strings.SplitN(cloudRoutes, "\n", 3)[0]+"\n"+strings.SplitN(cloudRoutes, "\n", 3)[1]+"\n")
	garbage := writeFile(t, dir, "garbage", "not a table\n")
	kindSys := fakeNetClass(t, []string{"eth0", "lo", "veth93906832"}, nil)
	cloudSys := fakeNetClass(t, []string{"lo", "cni0", "veth1"}, []string{"ens5"})
	twoNICs := fakeNetClass(t, []string{"lo"}, []string{"ens5", "ens6"})
	for _, tc := range []struct {
		name, sysfs, routes, hostIP string
		want, how                   string // want "" expects an error
	}{
		{"kind: eth0 carries the node's address", kindSys, kind, "172.18.0.5", "eth0", "route to the node's address"},
		{"cloud: ens5, not the bridge", cloudSys, cloud, "10.0.1.23", "ens5", "route to the node's address"},
		{"an address no route reaches: the default route", cloudSys, cloud, "192.168.7.7", "ens5", "default route"},
		{"an IPv6 address: the default route", cloudSys, cloud, "fd00::5", "ens5", "default route"},
		{"no connected route: the default route", cloudSys, noConnected, "10.0.1.23", "ens5", "default route"},
		{"no routes mounted: the only device", cloudSys, "", "10.0.1.23", "ens5", "only interface on a device"},
		{"a file that is not a table: the only device", cloudSys, garbage, "10.0.1.23", "ens5", "only interface on a device"},
		{"no routes, all virtual", kindSys, "", "172.18.0.5", "", ""},
		{"no routes, two devices", twoNICs, "", "10.0.1.23", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link, how, err := PickLink(tc.sysfs, tc.routes, netip.MustParseAddr(tc.hostIP))
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), "--node-link") {
					t.Errorf("PickLink = %q (%s), %v; want an error naming --node-link", link, how, err)
				}
				return
			}
			if err != nil || link != tc.want || !strings.Contains(how, tc.how) {
				t.Errorf("PickLink = %q (%s), %v; want %q by %q", link, how, err, tc.want, tc.how)
			}
		})
	}
}
