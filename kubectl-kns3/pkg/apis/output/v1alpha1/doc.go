// Package v1alpha1 is kubectl kns3's output: what explain and status
// print as JSON or YAML (-o json|yaml), in the group kns3.dev.
//
// +k8s:deepcopy-gen=package
// +groupName=kns3.dev
package v1alpha1
