package main

import (
	"fmt"
	"strings"
)

// peersHeading starts the peers' section of performance.md.
const peersHeading = "## 7. Pods with peers (scheduler_perf)"

// peersGoal is the least ratio of the live profile's throughput to the
// same profile's without NetworkPeers, for pods that declare no peers:
// the plugin may cost them at most 5 %.
const peersGoal = 0.95

// peersSection is section 7: what NetworkPeers costs pods without peers
// (the live profile with and without it, SchedulingBasic), and pods with
// 1, 10 and 100 peers at 5000 nodes beside upstream's preferred pod
// affinity on kubernetes.io/hostname.
func (r *report) peersSection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", peersHeading)
	p("**Pods without peers.** SchedulingBasic on the live install's profile as shipped (`with`) and without\n")
	p("NetworkPeers (`without`), in the rounds of section 1. Each ratio is that of the rounds' own, with its 95 %%\n")
	p("interval; CPU time per pod compared the other way (without / with), so that both goals read as at least.\n\n")
	p("| nodes | with (pods/s) | without (pods/s) | with / without (goal ≥ %.2f) | verdict | CPU per pod, without / with | verdict | runs |\n", peersGoal)
	p("|---|---|---|---|---|---|---|---|\n")
	for _, n := range nodeCounts {
		with := workload("ProfileOverhead_KNS3Live", n)
		without := workload("ProfileOverhead_KNS3LiveNoPeers", n)
		w, nw := r.throughput(with)
		wo, nwo := r.throughput(without)
		tr := r.ratio(throughputKey(with), throughputKey(without))
		cr := r.ratio(cpuKey(without), cpuKey(with))
		p("| %d | %s | %s | %s | %s | %s | %s | %d / %d |\n", n, cell(w, nw, "%.1f"), cell(wo, nwo, "%.1f"),
			tr.format(2), intervalVerdict(tr, peersGoal, true), cr.format(2), intervalVerdict(cr, peersGoal, true), nw, nwo)
	}
	p("\n**Pods with peers.** 5000 nodes, each with a network coordinate in the stub's answer; 1, 10 or 100 server\n")
	p("pods placed first, then 1000 clients that declare them as peers (`kns-3-scheduler/peers`, which NetworkPeers\n")
	p("ranks by the round trip to the servers' nodes) or, beside it, prefer them with upstream's pod affinity on\n")
	p("`kubernetes.io/hostname` (weight 100, which InterPodAffinity ranks by how many servers a node holds), both on the\n")
	p("live install's profile. PreScore is the extension point's p99 over all its plugins, in ms.\n\n")
	p("| peers | NetworkPeers (pods/s) | preferred affinity (pods/s) | NetworkPeers / affinity | PreScore p99, NetworkPeers | PreScore p99, affinity | runs |\n")
	p("|---|---|---|---|---|---|---|\n")
	for _, peers := range []string{"1Peer", "10Peers", "100Peers"} {
		ours := "Peers/5000Nodes_" + peers
		theirs := "PeersPreferredAffinity/5000Nodes_" + peers
		o, no := r.throughput(ours)
		t, nt := r.throughput(theirs)
		rat := r.ratio(throughputKey(ours), throughputKey(theirs)).format(2)
		op, _ := r.extensionPoint(ours, "PreScore", "Perc99")
		tp, _ := r.extensionPoint(theirs, "PreScore", "Perc99")
		p("| %s | %s | %s | %s | %s | %s | %d / %d |\n", strings.TrimSuffix(strings.TrimSuffix(peers, "s"), "Peer"),
			cell(o, no, "%.1f"), cell(t, nt, "%.1f"), rat, cell(op, no, "%.2f"), cell(tp, nt, "%.2f"), no, nt)
	}
	return b.String()
}
