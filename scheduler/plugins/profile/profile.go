// Package profile is what a plugin can learn of the profile it runs in
// from the profile's framework: whether the profile runs a plugin at an
// extension point (Runs), and the KNS-3 plugins it scores with, with
// their weights and what they declared of their scoring (Scoring). It
// lives beside the plugins and imports none;
// it reads the scheduler's own configuration types, so kubectl kns3 never
// imports it.
package profile

import (
	"fmt"
	"slices"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// Point is an extension point, named as the framework's configuration
// (config.Plugins) names its field.
type Point string

// The extension points of config.Plugins.
const (
	PreEnqueue         Point = "PreEnqueue"
	QueueSort          Point = "QueueSort"
	PreFilter          Point = "PreFilter"
	Filter             Point = "Filter"
	PostFilter         Point = "PostFilter"
	PreScore           Point = "PreScore"
	Score              Point = "Score"
	Reserve            Point = "Reserve"
	Permit             Point = "Permit"
	PreBind            Point = "PreBind"
	Bind               Point = "Bind"
	PostBind           Point = "PostBind"
	MultiPoint         Point = "MultiPoint"
	PlacementGenerate  Point = "PlacementGenerate"
	PlacementScore     Point = "PlacementScore"
	PodGroupPostFilter Point = "PodGroupPostFilter"
)

// pluginSet is ps's set at point; false for a point that is none.
func pluginSet(ps *config.Plugins, point Point) (config.PluginSet, bool) {
	switch point {
	case PreEnqueue:
		return ps.PreEnqueue, true
	case QueueSort:
		return ps.QueueSort, true
	case PreFilter:
		return ps.PreFilter, true
	case Filter:
		return ps.Filter, true
	case PostFilter:
		return ps.PostFilter, true
	case PreScore:
		return ps.PreScore, true
	case Score:
		return ps.Score, true
	case Reserve:
		return ps.Reserve, true
	case Permit:
		return ps.Permit, true
	case PreBind:
		return ps.PreBind, true
	case Bind:
		return ps.Bind, true
	case PostBind:
		return ps.PostBind, true
	case MultiPoint:
		return ps.MultiPoint, true
	case PlacementGenerate:
		return ps.PlacementGenerate, true
	case PlacementScore:
		return ps.PlacementScore, true
	case PodGroupPostFilter:
		return ps.PodGroupPostFilter, true
	}
	return config.PluginSet{}, false
}

// pluginLister is the scheduler's framework, which lists each extension
// point's plugins once it is built (after the plugins are made).
type pluginLister interface {
	ListPlugins() *config.Plugins
}

// plugins is what h's framework lists, nil when it cannot tell (a test's
// handle, or a framework not built yet).
func plugins(h fwk.Handle) *config.Plugins {
	l, ok := h.(pluginLister)
	if !ok {
		return nil
	}
	return l.ListPlugins()
}

// Runs reports whether h's profile runs plugin at point; known is false
// when h cannot tell (a test's handle). Ask from a cycle, not from New:
// the framework lists its plugins only once it has made them all. A point
// that is none is a mistake in the caller, and panics.
func Runs(h fwk.Handle, point Point, plugin string) (runs, known bool) {
	ps := plugins(h)
	if ps == nil {
		return false, false
	}
	set, ok := pluginSet(ps, point)
	if !ok {
		panic(fmt.Sprintf("profile.Runs: %q is no extension point of config.Plugins", point))
	}
	return slices.ContainsFunc(set.Enabled, func(p config.Plugin) bool { return p.Name == plugin }), true
}
