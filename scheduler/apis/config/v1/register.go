package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the group of the scheduler's configuration, which the KNS-3
// plugins' args share with the in-tree plugins' args.
const GroupName = "kubescheduler.config.k8s.io"

// SchemeGroupVersion is the version of the args in a configuration file.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

var (
	// SchemeBuilder registers the versioned types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// localSchemeBuilder also registers the defaulting and conversion
	// functions: the generated files add theirs in their init.
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds the versioned types, their defaults and their
	// conversions to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// Only hand-written functions here: the generated ones register
	// themselves, so the package compiles without the generated files.
	localSchemeBuilder.Register(addDefaultingFuncs)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&CustomScorePluginArgs{},
		&NetworkCapacityArgs{},
		&NetworkPeersArgs{},
	)
	return nil
}
