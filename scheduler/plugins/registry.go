// Package plugins registers the KNS-3 plugins with the upstream kube-scheduler.
package plugins

import (
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/customfilter"
	"kns3.dev/kns3/scheduler/plugins/customscore"
)

// ProfileName is the scheduler name of the KNS-3 profile.
const ProfileName = "kns-3-scheduler"

// Options returns the out-of-tree registry options that add the three KNS-3
// plugins to kube-scheduler, for app.NewSchedulerCommand or app.Setup.
func Options() []app.Option {
	return []app.Option{
		app.WithPlugin(customfilter.Name, customfilter.New),
		app.WithPlugin(customscore.Name, customscore.New),
		app.WithPlugin(custombind.Name, custombind.New),
	}
}
