// Package cmd is `kubectl kns3`: explain (why a pod is where it is) and
// status (the scheduler pods, each profile's breaker and fallbacks, the
// simulator, the last placements). Flags are kubectl's own (cli-runtime):
// --kubeconfig, --context, -n, --request-timeout, -o json|yaml.
package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/kubectl-kns3/pkg/safetext"
)

// options are the flags and streams every subcommand shares.
type options struct {
	config  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	// connect returns the namespace and a clientset: from the kubeconfig
	// flags, or a test's fake.
	connect func() (string, kubernetes.Interface, error)
	// now is the clock ages are told by.
	now func() time.Time
}

// defaultRequestTimeout bounds each request to the API server unless
// --request-timeout says otherwise: a stalled connection must not hang the
// command.
const defaultRequestTimeout = 30 * time.Second

// NewCommand is `kubectl kns3` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams, now: time.Now}
	o.connect = o.fromKubeconfig
	return newCommand(o)
}

func newCommand(o *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-kns3",
		Short: "Explain the KNS-3 scheduler's placements",
		Long: `kubectl kns3 explains where the KNS-3 scheduler put a pod and why, and shows the scheduler's state.

It reads everything through the API server: the pods, nodes and events, and the status the
KNS-3 scheduler publishes in the ConfigMap kns-3-status of its namespace. It never connects
to a pod.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kns3"},
	}
	o.config.AddFlags(root.PersistentFlags())
	root.AddCommand(newExplainCommand(o), newStatusCommand(o))
	return root
}

// fromKubeconfig is the namespace (-n or the context's) and a clientset
// from kubectl's flags.
func (o *options) fromKubeconfig() (string, kubernetes.Interface, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return "", nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultRequestTimeout
	}
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	return ns, client, nil
}

// warn writes a warning line; its text may come from the cluster.
func (o *options) warn(format string, args ...any) {
	fmt.Fprintf(o.streams.ErrOut, "Warning: %s\n", safetext.Line(fmt.Sprintf(format, args...)))
}

// warnOther names the install Find did not choose, when it saw both.
func (o *options) warnOther(in *installclient.Install) {
	if in.Other != nil {
		o.warn("also found the %s install in namespace %s; showing the %s install in namespace %s", in.Other.Kind, in.Other.Namespace, in.Kind, in.Namespace)
	}
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
