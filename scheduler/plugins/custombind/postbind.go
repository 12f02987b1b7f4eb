// Package custombind implements CustomBindPlugin, which records each binding
// made by the kns-3-scheduler profile in the scheduler's log.
package custombind

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the name of the plugin used in the plugin registry and configurations.
const Name = "CustomBindPlugin"

// Message is the log message written for every bound pod.
const Message = "KNS-3 bound pod to node"

// CustomBind is the CustomBindPlugin. Binding itself is left to DefaultBinder.
type CustomBind struct{}

var _ fwk.PostBindPlugin = &CustomBind{}

// New initializes the plugin. It takes no arguments.
func New(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return &CustomBind{}, nil
}

// Name returns the name of the plugin.
func (pl *CustomBind) Name() string { return Name }

// PostBind logs the binding at verbosity 1, structured with pod and node.
func (pl *CustomBind) PostBind(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) {
	klog.FromContext(ctx).V(1).Info(Message, "pod", klog.KObj(pod), "node", nodeName)
}
