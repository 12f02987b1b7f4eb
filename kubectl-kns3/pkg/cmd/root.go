// Package cmd is `kubectl kns3`: explain (why a pod is where it is) and
// status (the scheduler pod, its breaker and fallbacks, the simulator, the
// last placements). Flags are kubectl's own (cli-runtime): --kubeconfig,
// --context, -n, -o json|yaml.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kns3.dev/kns3/kubectl-kns3/pkg/schedulerpod"
	"kns3.dev/kns3/simulator/api"
)

// options are the flags and streams every subcommand shares.
type options struct {
	config  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	// timeout bounds each request to the scheduler pod.
	timeout time.Duration
	// connect returns the namespace and a clientset and sets pod: from
	// the kubeconfig flags, or a test's fakes.
	connect func() (string, kubernetes.Interface, error)
	pod     podAccess
}

// podAccess is how the commands reach into the KNS-3 pod: the simulator's
// GET /simulate and the scheduler's own endpoints.
type podAccess interface {
	simulate(ctx context.Context, pod *v1.Pod, timeout time.Duration) (int, *api.SimulationResponse, error)
	schedulerGet(ctx context.Context, pod *v1.Pod, path string) ([]byte, error)
}

// portForward is podAccess through port-forwards (schedulerpod).
type portForward struct {
	cfg    *rest.Config
	client kubernetes.Interface
}

func (p portForward) simulate(ctx context.Context, pod *v1.Pod, timeout time.Duration) (int, *api.SimulationResponse, error) {
	return schedulerpod.Simulate(ctx, p.cfg, p.client, pod, timeout)
}

func (p portForward) schedulerGet(ctx context.Context, pod *v1.Pod, path string) ([]byte, error) {
	return schedulerpod.SchedulerGet(ctx, p.cfg, p.client, pod, path)
}

// NewCommand is `kubectl kns3` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams}
	o.connect = o.fromKubeconfig
	return newCommand(o)
}

func newCommand(o *options) *cobra.Command {
	root := &cobra.Command{
		Use:           "kubectl-kns3",
		Short:         "Explain the KNS-3 scheduler's placements",
		Long:          "kubectl kns3 explains where the KNS-3 scheduler put a pod and why, and shows the scheduler's state.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kns3"},
	}
	o.config.AddFlags(root.PersistentFlags())
	root.PersistentFlags().DurationVar(&o.timeout, "simulator-timeout", 5*time.Second, "how long to wait for the simulator and the scheduler's endpoints")
	root.AddCommand(newExplainCommand(o), newStatusCommand(o))
	return root
}

// fromKubeconfig is the namespace (-n or the context's) and a clientset
// from kubectl's flags, reaching the KNS-3 pod through port-forwards.
func (o *options) fromKubeconfig() (string, kubernetes.Interface, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return "", nil, err
	}
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	o.pod = portForward{cfg: cfg, client: client}
	return ns, client, nil
}

// readProfiles asks the scheduler pod which profiles run KNS-3's plugins.
func (o *options) readProfiles(ctx context.Context, p *v1.Pod) (map[string]profile, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	body, err := o.pod.schedulerGet(ctx, p, "/configz")
	if err != nil {
		return nil, err
	}
	return parseProfiles(body)
}

// outputFlags is -o: empty for the table, or one of kubectl's JSON and
// YAML formats.
type outputFlags struct {
	format string
	flags  *genericclioptions.JSONYamlPrintFlags
}

func newOutputFlags() *outputFlags {
	return &outputFlags{flags: genericclioptions.NewJSONYamlPrintFlags()}
}

func (f *outputFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.format, "output", "o", "", fmt.Sprintf("Output format. One of: (%s).", strings.Join(f.flags.AllowedFormats(), ", ")))
}

// validate fails on an unknown -o before anything is asked of the cluster.
func (f *outputFlags) validate() error {
	if f.format == "" {
		return nil
	}
	_, err := f.flags.ToPrinter(f.format)
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return fmt.Errorf("--output %q: want one of %s", f.format, strings.Join(f.flags.AllowedFormats(), ", "))
	}
	return err
}

// print prints obj as -o asks; false when -o is empty (the table).
func (f *outputFlags) print(obj runtime.Object, o *options) (bool, error) {
	if f.format == "" {
		return false, nil
	}
	printer, err := f.flags.ToPrinter(f.format)
	if err != nil {
		return true, err
	}
	return true, printer.PrintObj(obj, o.streams.Out)
}

// simulatorDown says why the simulator gave no simulation.
func simulatorDown(ns, name string, status int, err error) string {
	var netErr interface{ Timeout() bool }
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("the simulator in pod %s/%s does not answer (timed out)", ns, name)
	case err != nil:
		return fmt.Sprintf("the simulator in pod %s/%s cannot be reached: %v", ns, name, err)
	default:
		return fmt.Sprintf("the simulator in pod %s/%s answered HTTP %d", ns, name, status)
	}
}
