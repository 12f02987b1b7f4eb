package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"kns3.dev/kns3/installclient"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/kubectl-kns3/pkg/status"
)

// maxLast bounds --last: the placements are kept in memory while every
// page of events is read.
const maxLast = 1000

func newStatusCommand(o *options) *cobra.Command {
	out := newOutputFlags()
	last := 5
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the KNS-3 scheduler pods, each profile's breaker and fallbacks, the simulator, and the last placements",
		Long: `The scheduler pods the KNS-3 install made and their containers' readiness; for each KNS-3
profile, as its scheduler last published it: the refresh mode, the simulator circuit breaker's
state, the scheduling cycles scored with and without the simulator since the scheduler
started, and what the simulator last answered; the newest placement events in every namespace.`,
		Example: "  kubectl kns3 status\n  kubectl kns3 status -o yaml --last 20",
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if last < 0 || last > maxLast {
				return fmt.Errorf("--last %d: want a number of events from 0 to %d", last, maxLast)
			}
			return out.validate()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.status(cmd.Context(), last)
			if err != nil {
				return err
			}
			if done, err := out.print(s.SetKind(), o); done || err != nil {
				return err
			}
			return status.Print(o.streams.Out, s, o.now())
		},
	}
	cmd.Flags().IntVar(&last, "last", last, fmt.Sprintf("how many placement events to show (0 to %d)", maxLast))
	out.addFlags(cmd)
	return cmd
}

func (o *options) status(ctx context.Context, last int) (*output.Status, error) {
	_, client, err := o.connect()
	if err != nil {
		return nil, err
	}
	in, err := installclient.Find(ctx, client)
	if err != nil {
		return nil, err
	}
	o.warnOther(in)
	for _, name := range in.Ignored {
		o.warn("ignoring pod %s: it wears the KNS-3 label, but the install did not make it", name)
	}
	events, err := installclient.Placements(ctx, client, in.ProfileNames(), last, o.now())
	if err != nil {
		return nil, err
	}
	return status.Build(in, events, o.now()), nil
}
