package kindenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/simulator/api"
)

// defaultSimulatorPort is the simulator's port on the pod's loopback
// address when its container does not say otherwise (--listen).
const defaultSimulatorPort = 80

// maxSimulateBody bounds what Simulate reads.
const maxSimulateBody = 16 << 20

// forwardTimeout bounds setting up a port-forward: a stalled upgrade must
// not hang a test.
const forwardTimeout = 30 * time.Second

// SimulatorPortOf is the port the pod's simulator listens on, from its
// --listen flag: the control-plane install shares the node's network and
// cannot take port 80.
func SimulatorPortOf(pod *v1.Pod) int {
	for _, c := range pod.Spec.Containers {
		if c.Name != installclient.SimulatorContainer {
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
	return defaultSimulatorPort
}

// Forward forwards a loopback port to port in the pod's network namespace,
// which reaches the simulator on the pod's 127.0.0.1: the suites look at
// the simulator itself, as the cluster's administrator may. Close the
// returned channel to stop.
func Forward(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, namespace, pod string, port int) (uint16, chan struct{}, error) {
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	url := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop := make(chan struct{})
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	errCh := make(chan error, 1)
	go func() { errCh <- fw.ForwardPorts() }()
	timer := time.NewTimer(forwardTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case err := <-errCh:
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: %w", namespace, pod, port, err)
	case <-ctx.Done():
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: %w", namespace, pod, port, ctx.Err())
	case <-timer.C:
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: not ready after %s", namespace, pod, port, forwardTimeout)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to %s/%s:%d: no local port (%v)", namespace, pod, port, err)
	}
	return ports[0].Local, stop, nil
}

// Simulate asks the simulator in the running KNS-3 pod for GET /simulate,
// through a port-forward to the pod's loopback address, as the scheduler
// does. It returns the HTTP status and, for a 200 answer, the decoded body.
// timeout bounds the request: a simulator that accepts and never answers
// gives a net.Error whose Timeout() is true.
func Simulate(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, timeout time.Duration) (int, *api.SimulationResponse, error) {
	pod, err := SchedulerPod(ctx, client)
	if err != nil {
		return 0, nil, err
	}
	port, stop, err := Forward(ctx, cfg, client, pod.Namespace, pod.Name, SimulatorPortOf(pod))
	if err != nil {
		return 0, nil, err
	}
	defer close(stop)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/simulate", port), nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, nil
	}
	var body api.SimulationResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSimulateBody)).Decode(&body); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("decoding GET /simulate: %w", err)
	}
	return resp.StatusCode, &body, nil
}
