package config

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the group of the scheduler's configuration, which the KNS-3
// plugins' args share with the in-tree plugins' args.
const GroupName = "kubescheduler.config.k8s.io"

// SchemeGroupVersion is the internal version of GroupName.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

var (
	// SchemeBuilder registers the internal types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the internal types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&CustomScorePluginArgs{},
		&NetworkCapacityArgs{},
		&NetworkPeersArgs{},
	)
	return nil
}
