package kindenv

import (
	"fmt"
	"io"
	"net/http"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// Forward forwards a loopback port to port in the pod's network namespace,
// which reaches the simulator on the pod's 127.0.0.1. Close the returned
// channel to stop.
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
