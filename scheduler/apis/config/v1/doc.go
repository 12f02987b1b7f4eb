// Package v1 holds the versioned (kubescheduler.config.k8s.io/v1) types of
// the KNS-3 plugins' args, as a profile's pluginConfig spells them, with
// their defaults and their conversion to the internal types.
//
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=kns3.dev/kns3/scheduler/apis/config
// +k8s:defaulter-gen=TypeMeta
// +groupName=kubescheduler.config.k8s.io
package v1
