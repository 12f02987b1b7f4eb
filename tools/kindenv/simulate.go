package kindenv

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kns3.dev/kns3/kubectl-kns3/pkg/schedulerpod"
	"kns3.dev/kns3/simulator/api"
)

// Forward forwards a loopback port to port in the pod's network namespace,
// which reaches the simulator on the pod's 127.0.0.1. Close the returned
// channel to stop.
func Forward(cfg *rest.Config, client kubernetes.Interface, namespace, pod string, port int) (uint16, chan struct{}, error) {
	return schedulerpod.Forward(cfg, client, namespace, pod, port)
}

// Simulate asks the simulator in the running KNS-3 pod for GET /simulate,
// through a port-forward to the pod's loopback address, as the scheduler
// does (schedulerpod.Simulate).
func Simulate(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, timeout time.Duration) (int, *api.SimulationResponse, error) {
	pod, err := SchedulerPod(ctx, client)
	if err != nil {
		return 0, nil, err
	}
	return schedulerpod.Simulate(ctx, cfg, client, pod, timeout)
}
