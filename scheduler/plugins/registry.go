// Package plugins registers the KNS-3 plugins with the upstream kube-scheduler.
package plugins

import (
	"sort"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/customfilter"
	"kns3.dev/kns3/scheduler/plugins/customscore"
	"kns3.dev/kns3/scheduler/plugins/networkcapacity"
	"kns3.dev/kns3/scheduler/plugins/networkpeers"
)

// ProfileName is the scheduler name of the KNS-3 profile.
const ProfileName = config.ProfileName

// Registry returns the KNS-3 plugins by name: the out-of-tree registry the
// kns-3-scheduler binary adds to kube-scheduler's (see Options), and the one
// harnesses that take a registry (scheduler_perf) are given.
func Registry() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		customfilter.Name:    customfilter.New,
		customscore.Name:     customscore.New,
		custombind.Name:      custombind.New,
		networkcapacity.Name: networkcapacity.New,
		networkpeers.Name:    networkpeers.New,
	}
}

// Options returns the out-of-tree registry options that add the KNS-3
// plugins of Registry to kube-scheduler, for app.NewSchedulerCommand or
// app.Setup.
func Options() []app.Option {
	registry := Registry()
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	sort.Strings(names)
	options := make([]app.Option, 0, len(names))
	for _, name := range names {
		options = append(options, app.WithPlugin(name, registry[name]))
	}
	return options
}
