package publish

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kns3.dev/kns3/scheduler/plugins/customscore/internal/schedconfig"
)

// runningLeaderElection is the running scheduler's leader election
// settings (schedconfig.ErrNotRegistered before it runs).
func runningLeaderElection() (schedconfig.LeaderElection, error) {
	cfg, err := schedconfig.Running()
	return cfg.LeaderElection, err
}

// leaderCheck tells whether this scheduler is the one scheduling: always
// without leader election, else when it holds the lease. A standby's
// plugin exists (plugins are made before the election) but schedules
// nothing, and must not publish over the leader's status.
type leaderCheck struct {
	client kubernetes.Interface
	// hostname starts the scheduler's identity on the lease
	// ("<hostname>_<uuid>").
	hostname string
	config   func() (schedconfig.LeaderElection, error)
}

func (l *leaderCheck) leading(ctx context.Context) (bool, error) {
	le, err := l.config()
	if err != nil {
		return false, err
	}
	if !*le.LeaderElect {
		return true, nil
	}
	lease, err := l.client.CoordinationV1().Leases(le.ResourceNamespace).Get(ctx, le.ResourceName, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading the leader election lease %s/%s: %w", le.ResourceNamespace, le.ResourceName, err)
	}
	holder := lease.Spec.HolderIdentity
	return holder != nil && strings.HasPrefix(*holder, l.hostname+"_"), nil
}
