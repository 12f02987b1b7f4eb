// Command kns-3-scheduler is kube-scheduler with the KNS-3 plugins registered.
// Every upstream flag works unchanged; --version prints the KNS-3 release.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"kns3.dev/kns3"
	"kns3.dev/kns3/scheduler/plugins"
)

func main() {
	command := app.NewSchedulerCommand(plugins.Options()...)
	command.Use = "kns-3-scheduler"
	command.Short = "kube-scheduler with the KNS-3 network-aware plugins"
	upstreamRun := command.RunE
	command.RunE = func(cmd *cobra.Command, args []string) error {
		// Upstream would print the Kubernetes version; answer with ours first.
		if f := cmd.Flags().Lookup("version"); f != nil && f.Changed && f.Value.String() != "false" {
			fmt.Printf("kns-3-scheduler %s (kube-scheduler %s)\n", kns3.Version, kubeVersion())
			return nil
		}
		return upstreamRun(cmd, args)
	}
	os.Exit(cli.Run(command))
}

// kubeVersion is the Kubernetes release compiled in: the linker's version
// stamp when the build set one, else the k8s.io/kubernetes module version.
func kubeVersion() string {
	v := version.Get().GitVersion
	if !strings.HasPrefix(v, "v0.0.0") {
		return v
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	return v
}
