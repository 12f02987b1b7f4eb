package customscore

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
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
)

const (
	// publishInterval is the shortest pause between two publications while
	// the state changes; publishHeartbeat the longest while it does not,
	// so readers can tell a live scheduler from a stopped one.
	publishInterval  = 5 * time.Second
	publishHeartbeat = time.Minute
	// maxStatusBytes bounds one profile's document: a ConfigMap holds at
	// most 1 MiB, shared by the profiles. At 30 bytes a node, 8000 nodes'
	// scores fit; the best-scored are kept.
	maxStatusBytes = 256 << 10
	// maxStatusText bounds the free-text fields taken from the simulator.
	maxStatusText = 512
)

// publisher writes the plugin's status (status.ProfileStatus) into the
// status ConfigMap of the scheduler pod's namespace, with a server-side
// apply that owns only the profile's own key: profiles and successive
// leaders never conflict, and the RBAC needed is patch on that one object.
type publisher struct {
	client       kubernetes.Interface
	namespace    string
	key          string
	fieldManager string
	interval     time.Duration
	heartbeat    time.Duration
	maxBytes     int
	now          func() time.Time
	// refresh, when set, brings the newest simulation up to date first;
	// snapshot is the state to publish, without Published.
	refresh  func(ctx context.Context, maxAge time.Duration)
	snapshot func() status.ProfileStatus
	// leading reports whether this scheduler schedules (and so publishes).
	leading func(context.Context) (bool, error)
}

// newPublisher returns the profile's publisher, or nil when the plugin
// runs without a cluster client or outside a pod that knows its
// namespace (a test, a scheduler run from a laptop).
func newPublisher(h fwk.Handle, profile, namespace string, refresh func(context.Context, time.Duration), snapshot func() status.ProfileStatus) *publisher {
	if h == nil || namespace == "" || h.ClientSet() == nil {
		return nil
	}
	hostname, _ := os.Hostname()
	key := status.Key(profile)
	lc := &leaderCheck{client: h.ClientSet(), hostname: hostname, config: runningLeaderElection}
	return &publisher{
		client:       h.ClientSet(),
		namespace:    namespace,
		key:          key,
		fieldManager: truncate("kns-3-scheduler/"+key, 128),
		interval:     publishInterval,
		heartbeat:    publishHeartbeat,
		maxBytes:     maxStatusBytes,
		now:          time.Now,
		refresh:      refresh,
		snapshot:     snapshot,
		leading:      lc.leading,
	}
}

func (p *publisher) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("configMap", klog.KRef(p.namespace, status.ConfigMapName), "key", p.key)
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	var last []byte
	var lastAt time.Time
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		body, at, err := p.publish(ctx, last, lastAt)
		switch {
		case err != nil && err.Error() != lastErr:
			// Said once, not every tick: the cause rarely changes by itself.
			logger.Info("Publishing the plugin's status failed", "err", err)
		case err == nil && lastErr != "":
			logger.Info("Publishing the plugin's status works again")
		}
		if err != nil {
			lastErr = err.Error()
			continue
		}
		lastErr = ""
		if body != nil {
			last, lastAt = body, at
		}
	}
}

// publish writes the status when this scheduler leads and the state
// changed since last (published at lastAt), or the heartbeat is due. It
// returns what it wrote (nil when nothing) without the publication time.
func (p *publisher) publish(ctx context.Context, last []byte, lastAt time.Time) ([]byte, time.Time, error) {
	leading, err := p.leading(ctx)
	if errors.Is(err, errNoComponentConfig) {
		return nil, time.Time{}, nil // not running yet: nothing to say
	}
	if err != nil || !leading {
		return nil, time.Time{}, err
	}
	if p.refresh != nil {
		p.refresh(ctx, p.interval)
	}
	doc := p.snapshot()
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

// encodeBounded encodes doc (Published unset) in at most maxBytes,
// leaving out the metrics, then the lowest-scored nodes, when they do not
// fit.
func encodeBounded(doc *status.ProfileStatus, maxBytes int) ([]byte, error) {
	body, err := json.Marshal(doc)
	if err != nil || len(body) <= maxBytes || doc.Simulator.Simulation == nil {
		return body, err
	}
	sim := doc.Simulator.Simulation
	if sim.Metrics != nil {
		sim.Metrics, sim.MetricsOmitted = nil, true
		if body, err = json.Marshal(doc); err != nil || len(body) <= maxBytes {
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
	all := sim.MilliScores
	sim.MilliScores = map[string]int64{}
	empty, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	// Room for the stamp Published adds, then each entry as it encodes:
	// "node":score, (node names need no escaping).
	room := maxBytes - len(empty) - len(`"published":"2006-01-02T15:04:05.999999999Z07:00",`)
	kept := map[string]int64{}
	for _, e := range entries {
		size := len(e.node) + len(strconv.FormatInt(e.score, 10)) + 4
		if size > room {
			break
		}
		room -= size
		kept[e.node] = e.score
	}
	sim.MilliScores, sim.Omitted = kept, len(all)-len(kept)
	return json.Marshal(doc)
}

// statusSource returns the plugin's status as the publisher writes it.
// It is called from the publisher's goroutine only.
func (pl *CustomScore) statusSource(profile string) func() status.ProfileStatus {
	started := time.Now()
	hostname, _ := os.Hostname()
	var described *simclient.Simulation
	var meta simclient.Meta
	var metrics map[string]status.NodeMetrics
	return func() status.ProfileStatus {
		scored, fallbacks := pl.metrics.counts()
		doc := status.ProfileStatus{
			Profile:       profile,
			Instance:      hostname,
			Started:       started,
			RefreshMode:   string(pl.args.RefreshMode),
			Normalization: string(pl.args.Normalization),
			Breaker:       pl.source.breaker(),
			ScoredCycles:  scored,
			Fallbacks:     fallbacks,
		}
		seen := pl.client.Observed()
		doc.Simulator = status.Simulator{URL: pl.shownURL, LastSuccess: seen.LastSuccess, LastFailure: seen.LastFailure, LastError: truncate(seen.LastError, maxStatusText)}
		if newest := seen.Newest; newest != nil {
			if newest != described {
				// Read once per answer, off the cycle.
				described, meta = newest, simclient.MetaOf(newest.Body)
				metrics = nil
				for node, m := range simclient.MetricsOf(newest.Body) {
					if metrics == nil {
						metrics = map[string]status.NodeMetrics{}
					}
					metrics[node] = status.NodeMetrics{LatencyMs: m.LatencyMs, BandwidthMbps: m.BandwidthMbps, PacketLoss: m.PacketLoss}
				}
			}
			doc.Simulator.Simulation = &status.Simulation{
				Received:      seen.LastSuccess,
				Source:        truncate(meta.Source, maxStatusText),
				Timestamp:     meta.Timestamp,
				WindowSeconds: meta.WindowSeconds,
				MilliScores:   newest.Scores,
				Unscored:      len(newest.Invalid),
				Metrics:       metrics,
			}
		}
		if pl.drift != nil {
			doc.Drift, doc.DriftOmitted = pl.drift.update(seen.Newest, meta, seen.LastSuccess)
			pl.metrics.driftedPods(len(doc.Drift) + doc.DriftOmitted)
		}
		return doc
	}
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
