package schedulerpod

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kns3.dev/kns3/simulator/api"
)

// maxBody bounds what is read from the pod.
const maxBody = 16 << 20

// Simulate asks the pod's simulator for GET /simulate through a
// port-forward, as the scheduler does on the pod's loopback address. It
// returns the HTTP status and, for a 200 answer, the decoded body (nil for
// any other status). timeout bounds the request: a simulator that accepts
// and never answers gives a net.Error whose Timeout() is true.
func Simulate(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, pod *v1.Pod, timeout time.Duration) (int, *api.SimulationResponse, error) {
	port, stop, err := Forward(cfg, client, pod.Namespace, pod.Name, SimulatorPortOf(pod))
	if err != nil {
		return 0, nil, err
	}
	defer close(stop)
	return GetSimulate(ctx, fmt.Sprintf("http://127.0.0.1:%d", port), timeout)
}

// GetSimulate is GET base/simulate, bounded by timeout.
func GetSimulate(ctx context.Context, base string, timeout time.Duration) (int, *api.SimulationResponse, error) {
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
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&body); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("decoding GET /simulate: %w", err)
	}
	return resp.StatusCode, &body, nil
}

// SchedulerGet reads path (/metrics, /configz) from the scheduler's secure
// port through a port-forward, authenticated with cfg's own credentials
// (client certificate, token or exec plugin), as an operator's Prometheus
// is with its own: the scheduler authorizes the request through the API
// server. The scheduler's serving certificate is self-signed; the
// port-forward already ties the connection to its pod.
func SchedulerGet(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, pod *v1.Pod, path string) ([]byte, error) {
	port, stop, err := Forward(cfg, client, pod.Namespace, pod.Name, SecurePort)
	if err != nil {
		return nil, err
	}
	defer close(stop)
	local := rest.CopyConfig(cfg)
	local.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	local.APIPath = ""
	local.TLSClientConfig.Insecure = true
	local.TLSClientConfig.CAData, local.TLSClientConfig.CAFile = nil, ""
	local.TLSClientConfig.ServerName = ""
	local.Timeout = 10 * time.Second
	httpClient, err := rest.HTTPClientFor(local)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, local.Host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s from %s/%s: %w", path, pod.Namespace, pod.Name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s from %s/%s: %s: %.200s", path, pod.Namespace, pod.Name, resp.Status, body)
	}
	return body, nil
}
