package placement

import (
	"fmt"
	"slices"
	"strings"

	fwk "k8s.io/kube-scheduler/framework"
)

// Points are what a KNS-3 score plugin's NormalizeScore made of a cycle's
// nodes: the final list, on 0–MaxNodeScore, before the profile's weight.
// The plugin leaves them in the cycle state under PointsKey(its name) as
// new data each time (WritePoints), and nothing changes them after:
// upstream's batching re-scores a node on a clone of the cycle's state,
// whose points are the clone's alone.
type Points struct {
	Scores fwk.NodeScoreList
}

// Clone returns p itself: never written after WritePoints.
func (p *Points) Clone() fwk.StateData { return p }

// PointsKey is where plugin leaves its Points.
func PointsKey(plugin string) fwk.StateKey { return fwk.StateKey(plugin + "/points") }

// WritePoints leaves a copy of scores, as NormalizeScore made them, in
// state under key (PointsKey of the plugin): the framework owns the list.
func WritePoints(state fwk.CycleState, key fwk.StateKey, scores fwk.NodeScoreList) {
	state.Write(key, &Points{Scores: slices.Clone(scores)})
}

// ReadPoints returns the normalized scores plugin left in state, by node;
// false when it left none (it did not score in this cycle).
func ReadPoints(state fwk.CycleState, plugin string) (map[string]int64, bool) {
	if state == nil {
		return nil, false
	}
	data, err := state.Read(PointsKey(plugin))
	if err != nil {
		return nil, false
	}
	p, ok := data.(*Points)
	if !ok {
		return nil, false
	}
	scores := make(map[string]int64, len(p.Scores))
	for _, s := range p.Scores {
		scores[s.Name] = s.Score
	}
	return scores, true
}

// PluginPoints are one KNS-3 plugin's normalized scores of a cycle's
// nodes, by node, with its weight in the profile.
type PluginPoints struct {
	Plugin string
	Weight int64
	Scores map[string]int64
}

// Decision is what KNS-3's plugins' points say of a placement on Node:
// the runner-up (the other node with the most of their points, the first
// name among equals), what each plugin gave both, and which plugin
// decided.
type Decision struct {
	Node, RunnerUp string
	// Plugins are each plugin's points, weight × normalized score, for
	// Node and RunnerUp, in the profile's order.
	Plugins []PluginMargin
	// DecidedBy is the plugin whose points put Node ahead of RunnerUp by
	// the most, when their points together put it ahead; "" when they put
	// it level or behind, and the profile's other plugins, or the
	// scheduler's pick among equals, chose it.
	DecidedBy string
}

// PluginMargin is one plugin's points for a Decision's two nodes.
type PluginMargin struct {
	Plugin         string
	Weight         int64
	Node, RunnerUp int64
}

// Margin is how many more points, of all the plugins', Node has than
// RunnerUp.
func (d Decision) Margin() int64 {
	var m int64
	for _, p := range d.Plugins {
		m += p.Node - p.RunnerUp
	}
	return m
}

// Decide works out, from the plugins' points over the same nodes, the
// Decision for a placement on node; false when no plugin scored node, or
// no other node. A node a plugin did not score gets 0 of its points.
func Decide(points []PluginPoints, node string) (Decision, bool) {
	total := map[string]int64{}
	scored := false
	for _, p := range points {
		for n, s := range p.Scores {
			total[n] += p.Weight * s
		}
		_, ok := p.Scores[node]
		scored = scored || ok
	}
	if !scored {
		return Decision{}, false
	}
	d := Decision{Node: node}
	found := false
	for n, t := range total {
		if n == node {
			continue
		}
		if !found || t > total[d.RunnerUp] || (t == total[d.RunnerUp] && n < d.RunnerUp) {
			d.RunnerUp, found = n, true
		}
	}
	if !found {
		return Decision{}, false
	}
	var best int64
	for _, p := range points {
		m := PluginMargin{Plugin: p.Plugin, Weight: p.Weight, Node: p.Weight * p.Scores[node], RunnerUp: p.Weight * p.Scores[d.RunnerUp]}
		d.Plugins = append(d.Plugins, m)
		if ahead := m.Node - m.RunnerUp; ahead > best {
			best, d.DecidedBy = ahead, p.Plugin
		}
	}
	if d.Margin() <= 0 {
		d.DecidedBy = ""
	}
	return d, true
}

// The clause a Decision makes in the placement event begins with one of
// these, so that a reader (kubectl kns3 explain) finds who decided.
const (
	decidedByPrefix = "decided by "
	// DecidedByNone begins the clause of a placement KNS-3's plugins did
	// not decide.
	DecidedByNone = decidedByPrefix + "none of KNS-3's plugins"
)

// Clause is the decision as the placement event says it, e.g.
// "decided by NetworkCapacity: 1200 points ahead of runner-up b; points
// here and on b (weight × normalized score): CustomScorePlugin 0 and 0,
// NetworkCapacity 2000 and 800".
func (d Decision) Clause() string {
	parts := make([]string, len(d.Plugins))
	for i, p := range d.Plugins {
		parts[i] = fmt.Sprintf("%s %d and %d", p.Plugin, p.Node, p.RunnerUp)
	}
	detail := fmt.Sprintf("; points here and on %s (weight × normalized score): %s", d.RunnerUp, strings.Join(parts, ", "))
	switch m := d.Margin(); {
	case d.DecidedBy != "":
		return fmt.Sprintf("%s%s: %d points ahead of runner-up %s%s", decidedByPrefix, d.DecidedBy, m, d.RunnerUp, detail)
	case m == 0:
		return fmt.Sprintf("%s: level with runner-up %s%s", DecidedByNone, d.RunnerUp, detail)
	default:
		return fmt.Sprintf("%s: %d points behind runner-up %s%s", DecidedByNone, -m, d.RunnerUp, detail)
	}
}

// DecidedBy reads who decided from a placement event's message: the
// plugin's name, "" when none of KNS-3's plugins did; found is false when
// the message says neither (a placement without points, or an event of
// an earlier version). The message is untrusted text: the caller checks
// the name against the plugins it knows.
func DecidedBy(message string) (plugin string, found bool) {
	for clause := range strings.SplitSeq(message, "; ") {
		rest, ok := strings.CutPrefix(clause, decidedByPrefix)
		if !ok {
			continue
		}
		if strings.HasPrefix(clause, DecidedByNone+":") {
			return "", true
		}
		name, _, ok := strings.Cut(rest, ":")
		if ok && name != "" && !strings.ContainsAny(name, " ,()") {
			return name, true
		}
	}
	return "", false
}
