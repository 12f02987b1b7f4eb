// Package scheme registers the KNS-3 plugins' args types (internal and v1)
// with the scheduler's own schemes, so the scheduler's strict codec decodes,
// defaults and converts them like the in-tree plugins' args. Import it for
// its side effects.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	kubeschedulerconfigv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"

	"kns3.dev/kns3/scheduler/apis/config"
	configv1 "kns3.dev/kns3/scheduler/apis/config/v1"
)

// Scheme is the scheduler's scheme: the one its configuration file is
// decoded with.
var Scheme = kubeschedulerscheme.Scheme

func init() {
	// The scheduler's scheme creates the versioned args when decoding a
	// profile's pluginConfig and encodes them back (--write-config-to).
	AddToScheme(Scheme)
	// Defaulting and conversion of the args (and the default args of a
	// profile that enables a plugin without pluginConfig) go through this
	// second scheme.
	AddToScheme(kubeschedulerconfigv1.GetPluginArgConversionScheme())
}

// AddToScheme adds the internal and v1 args types, their defaults and their
// conversions to scheme.
func AddToScheme(scheme *runtime.Scheme) {
	utilruntime.Must(config.AddToScheme(scheme))
	utilruntime.Must(configv1.AddToScheme(scheme))
}
