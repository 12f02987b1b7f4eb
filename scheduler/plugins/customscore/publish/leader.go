package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/configz"
)

// errNoComponentConfig: the scheduler has not registered its configuration
// yet (it does so first thing when it runs, after the plugins are made).
var errNoComponentConfig = errors.New("the scheduler's configuration is not registered yet")

// leaderElection is the part of the running scheduler's configuration that
// says whether, and on which lease, it elects a leader.
type leaderElection struct {
	LeaderElect       *bool  `json:"leaderElect"`
	ResourceName      string `json:"resourceName"`
	ResourceNamespace string `json:"resourceNamespace"`
}

// runningLeaderElection reads the leader election settings of the scheduler
// this process runs, as its /configz serves them: a plugin is not given
// its scheduler's configuration, and flags may override the file's.
func runningLeaderElection() (leaderElection, error) {
	var m handlerOnly
	configz.InstallHandler(&m)
	w := &bufferWriter{header: http.Header{}}
	m.h.ServeHTTP(w, &http.Request{Method: http.MethodGet})
	var all struct {
		ComponentConfig *struct {
			LeaderElection leaderElection `json:"leaderElection"`
		} `json:"componentconfig"`
	}
	if err := json.Unmarshal(w.buf.Bytes(), &all); err != nil {
		return leaderElection{}, fmt.Errorf("decoding the scheduler's configuration: %w", err)
	}
	if all.ComponentConfig == nil || all.ComponentConfig.LeaderElection.LeaderElect == nil {
		return leaderElection{}, errNoComponentConfig
	}
	return all.ComponentConfig.LeaderElection, nil
}

// handlerOnly keeps the one handler it is given.
type handlerOnly struct{ h http.Handler }

func (m *handlerOnly) Handle(_ string, h http.Handler) { m.h = h }

// bufferWriter is an http.ResponseWriter into memory.
type bufferWriter struct {
	header http.Header
	buf    bytes.Buffer
}

func (w *bufferWriter) Header() http.Header         { return w.header }
func (w *bufferWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }
func (w *bufferWriter) WriteHeader(int)             {}

// leaderCheck tells whether this scheduler is the one scheduling: always
// without leader election, else when it holds the lease. A standby's
// plugin exists (plugins are made before the election) but schedules
// nothing, and must not publish over the leader's status.
type leaderCheck struct {
	client kubernetes.Interface
	// hostname starts the scheduler's identity on the lease
	// ("<hostname>_<uuid>").
	hostname string
	config   func() (leaderElection, error)
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
