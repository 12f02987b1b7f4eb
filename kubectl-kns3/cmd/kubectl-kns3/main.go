// Command kubectl-kns3 is the kubectl plugin `kubectl kns3`: on the PATH,
// kubectl runs it for `kubectl kns3 explain POD` and `kubectl kns3 status`.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"kns3.dev/kns3/kubectl-kns3/pkg/cmd"
	"kns3.dev/kns3/kubectl-kns3/pkg/safetext"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := cmd.NewCommand(streams).ExecuteContext(context.Background()); err != nil {
		// Errors may quote the cluster (API errors, names): escaped, as all
		// the tool prints.
		fmt.Fprintf(os.Stderr, "error: %s\n", safetext.Line(err.Error()))
		os.Exit(1)
	}
}
