package agent

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// AutoLink is --node-link's value that has the agent find its node's
// uplink itself (PickLink).
const AutoLink = "auto"

// PickLink names the node's interface whose counters are its link's use:
//
//  1. the interface of the node's most specific directly connected route
//     to hostIP, its status.hostIP, in routes, the node's IPv4 routing
//     table (/proc/1/net/route of the node, mounted read-only);
//  2. else the interface of the node's default route there;
//  3. else the node's only interface on a device (not virtual) under
//     sysfs's class/net.
//
// It says which rule chose, and fails, naming what it lacked, when none
// does: --node-link then names the interface.
func PickLink(sysfs, routes string, hostIP netip.Addr) (link, how string, err error) {
	var tried []string
	if routes != "" {
		table, err := readRoutes(routes)
		switch {
		case err != nil:
			tried = append(tried, err.Error())
		case hostIP.Is4():
			if r, ok := table.connected(hostIP); ok {
				return r.iface, fmt.Sprintf("its route to the node's address %s", hostIP), nil
			}
			tried = append(tried, fmt.Sprintf("no route in %s reaches the node's address %s directly", routes, hostIP))
			fallthrough
		default:
			if !hostIP.Is4() {
				tried = append(tried, fmt.Sprintf("the node's address %q is not an IPv4 address", hostIP))
			}
			if r, ok := table.defaultRoute(); ok {
				return r.iface, "the node's default route", nil
			}
			tried = append(tried, "no default route in "+routes)
		}
	}
	devices, err := physicalLinks(sysfs)
	if err != nil {
		tried = append(tried, err.Error())
	} else if len(devices) == 1 {
		return devices[0], "the node's only interface on a device", nil
	} else {
		tried = append(tried, fmt.Sprintf("%d interfaces on a device under %s (%s)", len(devices), sysfs, strings.Join(devices, ", ")))
	}
	return "", "", fmt.Errorf("finding the node's uplink: %s; name it with --node-link", strings.Join(tried, "; "))
}

// route is one line of an IPv4 routing table as /proc/net/route has it.
type route struct {
	iface               string
	dest, gateway, mask uint32
}

type routeTable []route

// readRoutes reads /proc/net/route's format: a header, then one route a
// line, addresses in hex in the kernel's byte order (little-endian on
// every platform Kubernetes runs on).
func readRoutes(path string) (routeTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the node's routes: %w", err)
	}
	defer f.Close()
	var table routeTable
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if first {
			first = false
			if len(fields) < 8 || fields[0] != "Iface" {
				return nil, fmt.Errorf("%s is not a routing table (/proc/net/route)", path)
			}
			continue
		}
		if len(fields) < 8 {
			continue
		}
		r := route{iface: fields[0]}
		var ok [3]bool
		r.dest, ok[0] = hexAddr(fields[1])
		r.gateway, ok[1] = hexAddr(fields[2])
		r.mask, ok[2] = hexAddr(fields[7])
		if ok == [3]bool{true, true, true} && ValidLinkName(r.iface) == nil {
			table = append(table, r)
		}
	}
	return table, sc.Err()
}

// hexAddr reads an address as /proc/net/route writes it: the address's
// four bytes, in network order, printed as one host-order number.
func hexAddr(s string) (uint32, bool) {
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err == nil && len(s) == 8
}

// connected returns the most specific route without a gateway whose
// network holds ip.
func (t routeTable) connected(ip netip.Addr) (route, bool) {
	a := ip.As4()
	v := binary.LittleEndian.Uint32(a[:])
	var best route
	found := false
	for _, r := range t {
		if r.gateway != 0 || v&r.mask != r.dest {
			continue
		}
		if !found || prefixLen(r.mask) > prefixLen(best.mask) {
			best, found = r, true
		}
	}
	return best, found
}

func (t routeTable) defaultRoute() (route, bool) {
	for _, r := range t {
		if r.dest == 0 && r.mask == 0 {
			return r, true
		}
	}
	return route{}, false
}

// prefixLen is how many bits of a mask are set.
func prefixLen(mask uint32) int {
	n := 0
	for ; mask != 0; mask &= mask - 1 {
		n++
	}
	return n
}

// physicalLinks lists the interfaces under sysfs's class/net that sit on
// a device: their link does not lead into /devices/virtual.
func physicalLinks(sysfs string) ([]string, error) {
	dir := filepath.Join(sysfs, "class", "net")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing the node's interfaces: %w", err)
	}
	var out []string
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrInvalid) {
			// Not a link: a directory of its own (a test's tree, some
			// kernels' class dirs); its device link tells.
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "device")); err == nil {
				out = append(out, e.Name())
			}
			continue
		}
		if err == nil && !strings.Contains(target, "/devices/virtual/") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
