// Package schedulerpod reaches the running KNS-3 pod (kns-3-scheduler and
// its simulator) through the API server: it finds the pod, forwards a
// loopback port into it, and asks the simulator for GET /simulate and the
// scheduler for /metrics and /configz. The simulator is never exposed
// outside the pod: a port-forward reaches it on the pod's 127.0.0.1.
package schedulerpod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

const (
	// AppLabel names the KNS-3 pod, in the Deployment (namespace
	// kns-3-system) and in the control plane's static pod (kube-system).
	AppLabel = "app.kubernetes.io/name"
	// AppName is AppLabel's value.
	AppName = "kns-3-scheduler"
	// SchedulerContainer and SimulatorContainer are the pod's containers.
	SchedulerContainer = "kns-3-scheduler"
	SimulatorContainer = "simulator"
	// SimulatorPort is the simulator's port on the pod's loopback address
	// when its container does not say otherwise (--listen).
	SimulatorPort = 80
	// SecurePort is kube-scheduler's HTTPS port (/metrics, /configz).
	SecurePort = 10259
)

// ErrNotInstalled is returned when no pod is labeled as the KNS-3 pod.
var ErrNotInstalled = errors.New("KNS-3 is not installed: no pod labeled " + AppLabel + "=" + AppName + " in any namespace")

// Pods lists the KNS-3 pods in every namespace, ready ones first, then
// newest first. It returns ErrNotInstalled when there is none.
func Pods(ctx context.Context, client kubernetes.Interface) ([]v1.Pod, error) {
	list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: AppLabel + "=" + AppName})
	if err != nil {
		return nil, fmt.Errorf("listing the KNS-3 pods: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, ErrNotInstalled
	}
	pods := list.Items
	sort.SliceStable(pods, func(i, j int) bool {
		if ri, rj := Ready(&pods[i]), Ready(&pods[j]); ri != rj {
			return ri
		}
		return pods[j].CreationTimestamp.Before(&pods[i].CreationTimestamp)
	})
	return pods, nil
}

// Find is the running, ready KNS-3 pod.
func Find(ctx context.Context, client kubernetes.Interface) (*v1.Pod, error) {
	pods, err := Pods(ctx, client)
	if err != nil {
		return nil, err
	}
	if p := &pods[0]; Ready(p) {
		return p, nil
	}
	return nil, fmt.Errorf("no ready KNS-3 pod among %d labeled %s=%s (first: %s/%s, phase %s)",
		len(pods), AppLabel, AppName, pods[0].Namespace, pods[0].Name, pods[0].Status.Phase)
}

// Ready reports whether the pod runs, is not being deleted and is Ready.
func Ready(p *v1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// SimulatorPortOf is the port the pod's simulator listens on, from its
// --listen flag: the control-plane install shares the node's network and
// cannot take port 80.
func SimulatorPortOf(pod *v1.Pod) int {
	for _, c := range pod.Spec.Containers {
		if c.Name != SimulatorContainer {
			continue
		}
		for _, a := range c.Args {
			addr, ok := strings.CutPrefix(a, "--listen=")
			if !ok {
				continue
			}
			if _, p, err := net.SplitHostPort(addr); err == nil {
				if n, err := strconv.Atoi(p); err == nil {
					return n
				}
			}
		}
	}
	return SimulatorPort
}

// Forward forwards a loopback port to port in the pod's network namespace.
// Close the returned channel to stop.
func Forward(cfg *rest.Config, client kubernetes.Interface, namespace, pod string, port int) (local uint16, stop chan struct{}, err error) {
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	url := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop = make(chan struct{})
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	errCh := make(chan error, 1)
	go func() { errCh <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errCh:
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: %w", namespace, pod, port, err)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: no local port (%v)", namespace, pod, port, err)
	}
	return ports[0].Local, stop, nil
}
