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

	"kns3.dev/kns3/simulator/api"
)

// SimulatorPort is the simulator's port on the KNS-3 pod's loopback address
// when its container does not say otherwise (--listen).
const SimulatorPort = 80

// Simulate asks the simulator in the running KNS-3 pod for GET /simulate,
// through a port-forward to the pod's loopback address, as the scheduler
// does. It returns the HTTP status and, for a 200 answer, the decoded body
// (nil for any other status).
//
// timeout bounds the request: a simulator that accepts and never answers
// gives an error that is a net.Error whose Timeout() is true.
func Simulate(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, timeout time.Duration) (int, *api.SimulationResponse, error) {
	pod, err := SchedulerPod(ctx, client)
	if err != nil {
		return 0, nil, err
	}
	port, stop, err := Forward(cfg, client, pod.Namespace, pod.Name, simulatorPort(pod))
	if err != nil {
		return 0, nil, err
	}
	defer close(stop)
	return getSimulate(ctx, fmt.Sprintf("http://127.0.0.1:%d", port), timeout)
}

// getSimulate is GET base/simulate, bounded by timeout.
func getSimulate(ctx context.Context, base string, timeout time.Duration) (int, *api.SimulationResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/simulate", nil)
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
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&body); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("decoding GET /simulate: %w", err)
	}
	return resp.StatusCode, &body, nil
}

// simulatorPort is the port the pod's simulator container listens on, from
// its --listen flag: the control-plane install shares the node's network
// and cannot take port 80.
func simulatorPort(pod *v1.Pod) int {
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
