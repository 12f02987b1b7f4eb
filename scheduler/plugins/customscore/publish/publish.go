// Package publish writes a profile's status (scheduler/apis/status) into
// the status ConfigMap of the scheduler pod's namespace, while this
// scheduler leads. It only reads: the document comes from a snapshot
// function the plugin gives it, so it knows nothing of the plugin and
// never asks the simulator.
package publish

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/customscore/internal/schedconfig"
	"kns3.dev/kns3/scheduler/plugins/internal/text"
)

const (
	// Interval is the shortest pause between two publications while the
	// state changes; heartbeat the longest while it does not, so readers
	// can tell a live scheduler from a stopped one.
	Interval  = 5 * time.Second
	heartbeat = time.Minute
	// maxBytes bounds one profile's document: a ConfigMap holds at most 1
	// MiB, shared by the profiles. At 30 bytes a node, 8000 nodes' scores
	// fit; the best-scored are kept.
	maxBytes = 256 << 10
	// maxText bounds the free-text fields taken from the simulator.
	maxText = 512
	// maxFieldManager is the API server's bound on a field manager's name.
	maxFieldManager = 128
)

// Publisher writes a profile's status (status.ProfileStatus) into the
// status ConfigMap of the scheduler pod's namespace, with a server-side
// apply that owns only the profile's own key: profiles and successive
// leaders never conflict, and the RBAC needed is patch on that one object.
type Publisher struct {
	client       kubernetes.Interface
	namespace    string
	key          string
	fieldManager string
	interval     time.Duration
	heartbeat    time.Duration
	maxBytes     int
	now          func() time.Time
	// snapshot is the state to publish, without Published.
	snapshot func() status.ProfileStatus
	// leading reports whether this scheduler schedules (and so publishes).
	leading func(context.Context) (bool, error)

	// What Tick published last (without the publication time) and when,
	// and its last error, which it logs once.
	last    []byte
	lastAt  time.Time
	lastErr string
}

// New returns the publisher of profile's status, taken from snapshot, into
// namespace's status ConfigMap through client.
func New(client kubernetes.Interface, namespace, profile string, snapshot func() status.ProfileStatus) *Publisher {
	hostname, _ := os.Hostname()
	key := status.Key(profile)
	lc := &leaderCheck{client: client, hostname: hostname, config: runningLeaderElection}
	return &Publisher{
		client:       client,
		namespace:    namespace,
		key:          key,
		fieldManager: text.Truncate("kns-3-scheduler/"+key, maxFieldManager),
		interval:     Interval,
		heartbeat:    heartbeat,
		maxBytes:     maxBytes,
		now:          time.Now,
		snapshot:     snapshot,
		leading:      lc.leading,
	}
}

// Run publishes every interval until ctx ends.
func (p *Publisher) Run(ctx context.Context) {
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		p.Tick(ctx)
	}
}

// Tick is one of Run's ticks: it publishes when this scheduler leads and
// the state changed since the last publication, or the heartbeat is due,
// and logs a failure once, until publishing works again. Run calls it
// from one goroutine; it is not safe for concurrent use.
func (p *Publisher) Tick(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("configMap", klog.KRef(p.namespace, status.ConfigMapName), "key", p.key)
	body, at, err := p.publish(ctx, p.last, p.lastAt)
	switch {
	case err != nil && err.Error() != p.lastErr:
		// Said once, not every tick: the cause rarely changes by itself.
		logger.Info("Publishing the plugin's status failed", "err", err)
	case err == nil && p.lastErr != "":
		logger.Info("Publishing the plugin's status works again")
	}
	if err != nil {
		p.lastErr = err.Error()
		return
	}
	p.lastErr = ""
	if body != nil {
		p.last, p.lastAt = body, at
	}
}

// publish writes the status when this scheduler leads and the state
// changed since last (published at lastAt), or the heartbeat is due. It
// returns what it wrote (nil when nothing) without the publication time.
func (p *Publisher) publish(ctx context.Context, last []byte, lastAt time.Time) ([]byte, time.Time, error) {
	leading, err := p.leading(ctx)
	if errors.Is(err, schedconfig.ErrNotRegistered) {
		return nil, time.Time{}, nil // not running yet: nothing to say
	}
	if err != nil || !leading {
		return nil, time.Time{}, err
	}
	doc := p.snapshot()
	boundText(&doc)
	doc.APIVersion, doc.Kind = status.APIVersion, status.Kind
	doc.IntervalSeconds, doc.HeartbeatSeconds = int(p.interval/time.Second), int(p.heartbeat/time.Second)
	unstamped, err := encodeBounded(&doc, p.maxBytes)
	if err != nil {
		return nil, time.Time{}, err
	}
	now := p.now()
	if slices.Equal(unstamped, last) && now.Sub(lastAt) < p.heartbeat {
		return nil, time.Time{}, nil
	}
	doc.Published = now
	body, err := json.Marshal(&doc)
	if err != nil {
		return nil, time.Time{}, err
	}
	cm := corev1ac.ConfigMap(status.ConfigMapName, p.namespace).WithData(map[string]string{p.key: string(body)})
	_, err = p.client.CoreV1().ConfigMaps(p.namespace).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: p.fieldManager, Force: true})
	switch {
	case apierrors.IsNotFound(err):
		return nil, time.Time{}, fmt.Errorf("ConfigMap %s/%s does not exist: the install creates it (%w)", p.namespace, status.ConfigMapName, err)
	case apierrors.IsForbidden(err):
		return nil, time.Time{}, fmt.Errorf("the scheduler may not patch ConfigMap %s/%s: the install's RBAC grants it (%w)", p.namespace, status.ConfigMapName, err)
	case err != nil:
		return nil, time.Time{}, err
	}
	return unstamped, now, nil
}

// stampRoom is the most that Published adds to an encoded document.
var stampRoom = len(`"published":"2006-01-02T15:04:05.999999999+07:00",`)

// encodeBounded encodes doc (Published unset) so that, stamped, it takes at
// most maxBytes, leaving out the pairs between nodes, then the metrics,
// then the lowest-scored nodes, when they do not fit. The pairs go first:
// the largest part (a network coordinate of eight numbers for every
// node), and of use only for the pods that declare peers. Each node's
// score is sized as it encodes, escapes included, and the final encoding
// is measured.
func encodeBounded(doc *status.ProfileStatus, maxBytes int) ([]byte, error) {
	limit := maxBytes - stampRoom
	body, err := json.Marshal(doc)
	if err != nil || len(body) <= limit || doc.Simulator.Simulation == nil {
		return body, err
	}
	sim := doc.Simulator.Simulation
	if sim.Pairs != nil {
		sim.Pairs, sim.PairsOmitted = nil, true
		if body, err = json.Marshal(doc); err != nil || len(body) <= limit {
			return body, err
		}
	}
	if sim.Metrics != nil {
		sim.Metrics, sim.MetricsOmitted = nil, true
		if body, err = json.Marshal(doc); err != nil || len(body) <= limit {
			return body, err
		}
	}
	type entry struct {
		node  string
		score int64
	}
	entries := make([]entry, 0, len(sim.MilliScores))
	for n, s := range sim.MilliScores {
		entries = append(entries, entry{n, s})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.node, b.node))
	})
	// The document without scores, with the widest count of omitted ones.
	sim.MilliScores, sim.Omitted = map[string]int64{}, len(entries)
	empty, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	room, n := limit-len(empty), 0
	for _, e := range entries {
		name, err := json.Marshal(e.node)
		if err != nil {
			return nil, err
		}
		// "node":score, as the map encodes it.
		size := len(name) + 1 + len(strconv.FormatInt(e.score, 10)) + 1
		if size > room {
			break
		}
		room -= size
		n++
	}
	for {
		kept := make(map[string]int64, n)
		for _, e := range entries[:n] {
			kept[e.node] = e.score
		}
		sim.MilliScores, sim.Omitted = kept, len(entries)-n
		if body, err = json.Marshal(doc); err != nil || len(body) <= limit || n == 0 {
			return body, err
		}
		n -= max(1, n/16) // not reached while the sizes above hold
	}
}

// boundText cuts the free text the simulator wrote, or its errors quote.
func boundText(doc *status.ProfileStatus) {
	doc.Simulator.LastError = text.Truncate(doc.Simulator.LastError, maxText)
	if sim := doc.Simulator.Simulation; sim != nil {
		sim.Source = text.Truncate(sim.Source, maxText)
	}
}
