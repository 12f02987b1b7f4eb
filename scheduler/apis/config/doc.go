// Package config holds the internal (unversioned) types of the KNS-3
// plugins' args: what the scheduler's codec converts the versioned args in a
// profile's pluginConfig into, and what the plugins receive.
//
// +k8s:deepcopy-gen=package
// +groupName=kubescheduler.config.k8s.io
package config
