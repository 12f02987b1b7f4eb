package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/customscore/internal/schedconfig"
)

const testNamespace = "kns-3-system"

// testPublisher publishes doc (a copy each time) into a fake cluster
// holding the empty status ConfigMap, on a clock the test moves.
func testPublisher(doc *status.ProfileStatus, leading *bool) (*Publisher, *fake.Clientset, *time.Time) {
	client := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: status.ConfigMapName, Namespace: testNamespace}})
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	return &Publisher{
		client:       client,
		namespace:    testNamespace,
		key:          status.Key(doc.Profile),
		fieldManager: "test",
		interval:     time.Second,
		heartbeat:    time.Minute,
		maxBytes:     maxBytes,
		now:          func() time.Time { return now },
		snapshot:     func() status.ProfileStatus { return *doc },
		leading:      func(context.Context) (bool, error) { return *leading, nil },
	}, client, &now
}

func published(t *testing.T, client *fake.Clientset, profile string) (status.ProfileStatus, bool) {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(testNamespace).Get(context.Background(), status.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := cm.Data[status.Key(profile)]
	if !ok {
		return status.ProfileStatus{}, false
	}
	var doc status.ProfileStatus
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("published %q: %v", raw, err)
	}
	return doc, true
}

// The leader publishes when its state changes and at each heartbeat; a
// standby never does.
func TestPublishWhenLeadingAndChanged(t *testing.T) {
	doc := &status.ProfileStatus{Profile: plainProfile, ScoredCycles: 1, Fallbacks: map[string]int64{}}
	leading := false
	p, client, now := testPublisher(doc, &leading)
	ctx := context.Background()
	step := func(what string, wantWrite bool) {
		t.Helper()
		before := len(client.Actions())
		if _, _, err := p.publish(ctx, nil, time.Time{}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wrote := false
		for _, a := range client.Actions()[before:] {
			wrote = wrote || a.GetVerb() == "patch"
		}
		if wrote != wantWrite {
			t.Errorf("%s: wrote %t, want %t", what, wrote, wantWrite)
		}
	}
	step("standby", false)
	if _, ok := published(t, client, doc.Profile); ok {
		t.Fatal("a standby published")
	}

	leading = true
	last, at, err := p.publish(ctx, nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := published(t, client, doc.Profile)
	if !ok {
		t.Fatal("the leader did not publish")
	}
	if got.APIVersion != status.APIVersion || got.Kind != status.Kind || got.ScoredCycles != 1 || !got.Published.Equal(*now) {
		t.Errorf("published %+v", got)
	}
	if got.IntervalSeconds != 1 || got.HeartbeatSeconds != 60 {
		t.Errorf("interval %ds, heartbeat %ds, want 1s, 60s", got.IntervalSeconds, got.HeartbeatSeconds)
	}

	// Unchanged: nothing until the heartbeat.
	*now = now.Add(10 * time.Second)
	before := len(client.Actions())
	if body, _, err := p.publish(ctx, last, at); err != nil || body != nil {
		t.Errorf("unchanged state: wrote %q, %v; want nothing", body, err)
	}
	for _, a := range client.Actions()[before:] {
		if a.GetVerb() == "patch" {
			t.Error("unchanged state was written before the heartbeat")
		}
	}
	*now = now.Add(time.Minute)
	if body, _, err := p.publish(ctx, last, at); err != nil || body == nil {
		t.Errorf("heartbeat: wrote nothing (%v)", err)
	}
	if got, _ := published(t, client, doc.Profile); !got.Published.Equal(*now) {
		t.Errorf("heartbeat published at %s, want %s", got.Published, *now)
	}

	// Changed: at once.
	doc.ScoredCycles = 2
	if body, _, err := p.publish(ctx, last, *now); err != nil || body == nil {
		t.Errorf("changed state: wrote nothing (%v)", err)
	}
	if got, _ := published(t, client, doc.Profile); got.ScoredCycles != 2 {
		t.Errorf("scored cycles %d, want 2", got.ScoredCycles)
	}
}

const plainProfile = "kns-3-scheduler"

// Each profile owns its key: publishing one leaves the other's.
func TestPublishProfilesApart(t *testing.T) {
	leading := true
	a := &status.ProfileStatus{Profile: "a", ScoredCycles: 1}
	p, client, _ := testPublisher(a, &leading)
	b := &status.ProfileStatus{Profile: "b", ScoredCycles: 2}
	q := *p
	q.key, q.fieldManager, q.snapshot = status.Key("b"), "test-b", func() status.ProfileStatus { return *b }
	for _, pub := range []*Publisher{p, &q, p} {
		if _, _, err := pub.publish(context.Background(), nil, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []*status.ProfileStatus{a, b} {
		got, ok := published(t, client, want.Profile)
		if !ok || got.ScoredCycles != want.ScoredCycles {
			t.Errorf("profile %s: published %t, %+v", want.Profile, ok, got)
		}
	}
}

// Until the scheduler runs, there is nothing to publish and nothing to
// complain of; other errors are reported.
func TestPublishErrors(t *testing.T) {
	doc := &status.ProfileStatus{Profile: plainProfile}
	leading := true
	p, _, _ := testPublisher(doc, &leading)
	p.leading = func(context.Context) (bool, error) { return false, schedconfig.ErrNotRegistered }
	if body, _, err := p.publish(context.Background(), nil, time.Time{}); body != nil || err != nil {
		t.Errorf("before the scheduler runs: %q, %v; want nothing", body, err)
	}
	p.leading = func(context.Context) (bool, error) { return false, errors.New("lease: forbidden") }
	if _, _, err := p.publish(context.Background(), nil, time.Time{}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("lease error: %v", err)
	}
	// Without the RBAC: the error says which grant is missing.
	p, client, _ := testPublisher(doc, &leading)
	client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource("configmaps"), status.ConfigMapName, errors.New("no"))
	})
	if _, _, err := p.publish(context.Background(), nil, time.Time{}); err == nil || !strings.Contains(err.Error(), "may not patch ConfigMap kns-3-system/kns-3-status") {
		t.Errorf("forbidden: %v", err)
	}
}

// A document over the bound keeps the best-scored nodes and says how many
// it left out.
func TestEncodeBounded(t *testing.T) {
	scores := map[string]int64{}
	for i := range 5000 {
		scores[fmt.Sprintf("node-%04d.zone-a.example.internal", i)] = int64(i)
	}
	doc := &status.ProfileStatus{Profile: plainProfile, Simulator: status.Simulator{Simulation: &status.Simulation{MilliScores: scores}}}
	const bound = 64 << 10
	body, err := encodeBounded(doc, bound)
	if err != nil {
		t.Fatal(err)
	}
	// Stamped as the publisher stamps it, it still fits.
	var got status.ProfileStatus
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	got.Published = time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	stamped, err := json.Marshal(&got)
	if err != nil {
		t.Fatal(err)
	}
	if len(stamped) > bound {
		t.Errorf("stamped document is %d bytes, over %d", len(stamped), bound)
	}
	sim := got.Simulator.Simulation
	kept := len(sim.MilliScores)
	if kept == 0 || kept+sim.Omitted != 5000 {
		t.Fatalf("kept %d, omitted %d, want 5000 in all", kept, sim.Omitted)
	}
	if len(stamped) < bound*9/10 {
		t.Errorf("kept %d nodes in %d bytes: the bound (%d) is badly used", kept, len(stamped), bound)
	}
	for i := 5000 - kept; i < 5000; i++ {
		if _, ok := sim.MilliScores[fmt.Sprintf("node-%04d.zone-a.example.internal", i)]; !ok {
			t.Fatalf("node %d (among the %d best) left out", i, kept)
		}
	}
	// Under the bound, nothing is left out.
	small := &status.ProfileStatus{Simulator: status.Simulator{Simulation: &status.Simulation{MilliScores: map[string]int64{"a": 1}}}}
	body, err = encodeBounded(small, bound)
	if err != nil || !strings.Contains(string(body), `"milliScores":{"a":1}`) || strings.Contains(string(body), "omitted") {
		t.Errorf("small document: %s, %v", body, err)
	}
}

func TestLeaderCheck(t *testing.T) {
	lease := func(holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "kns-3-scheduler", Namespace: testNamespace},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)},
		}
	}
	elect := schedconfig.LeaderElection{LeaderElect: ptr.To(true), ResourceName: "kns-3-scheduler", ResourceNamespace: testNamespace}
	tests := map[string]struct {
		config  schedconfig.LeaderElection
		err     error
		lease   *coordinationv1.Lease
		want    bool
		wantErr string
	}{
		"leader election off":   {config: schedconfig.LeaderElection{LeaderElect: ptr.To(false)}, want: true},
		"holding the lease":     {config: elect, lease: lease("pod-a_0f1e"), want: true},
		"another holds it":      {config: elect, lease: lease("pod-b_0f1e")},
		"a longer name":         {config: elect, lease: lease("pod-a-2_0f1e")},
		"no lease yet":          {config: elect, wantErr: "not found"},
		"no configuration yet":  {err: schedconfig.ErrNotRegistered, wantErr: schedconfig.ErrNotRegistered.Error()},
		"released (empty name)": {config: elect, lease: lease("")},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset()
			if tt.lease != nil {
				client = fake.NewClientset(tt.lease)
			}
			lc := &leaderCheck{client: client, hostname: "pod-a", config: func() (schedconfig.LeaderElection, error) { return tt.config, tt.err }}
			got, err := lc.leading(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("leading() = %t, %v; want %t", got, err, tt.want)
			}
		})
	}
}

// TestEncodeBoundedMetricsFirst checks the metrics are what goes first: a
// document whose scores fit without them keeps every score.
func TestEncodeBoundedMetricsFirst(t *testing.T) {
	scores, metrics := map[string]int64{}, map[string]status.NodeMetrics{}
	for i := range 500 {
		node := fmt.Sprintf("node-%04d", i)
		l, b, p := 0.2, 950.5, 0.001
		scores[node], metrics[node] = int64(i), status.NodeMetrics{LatencyMs: &l, BandwidthMbps: &b, PacketLoss: &p}
	}
	newDoc := func() *status.ProfileStatus {
		return &status.ProfileStatus{Simulator: status.Simulator{Simulation: &status.Simulation{MilliScores: scores, Metrics: metrics}}}
	}
	doc := newDoc()
	full, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	body, err := encodeBounded(doc, len(full)/2)
	if err != nil {
		t.Fatal(err)
	}
	var got status.ProfileStatus
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if sim := got.Simulator.Simulation; sim.Metrics != nil || !sim.MetricsOmitted || len(sim.MilliScores) != 500 || sim.Omitted != 0 {
		t.Errorf("metrics %d (omitted %v), scores %d (omitted %d); want the metrics out and every score in", len(sim.Metrics), sim.MetricsOmitted, len(sim.MilliScores), sim.Omitted)
	}
	// The bound is on the stamped document: room for the stamp.
	if body, _ := encodeBounded(newDoc(), len(full)+stampRoom); !strings.Contains(string(body), `"bandwidthMbps":950.5`) {
		t.Error("a document within the bound lost its metrics")
	}
}

// TestEncodeBoundedEscapedNames: names that JSON escapes (HTML
// characters, control characters, invalid UTF-8) grow up to sixfold when
// encoded; the stamped document still fits, and says how many it left
// out.
func TestEncodeBoundedEscapedNames(t *testing.T) {
	scores := map[string]int64{}
	for i := range 5000 {
		scores[fmt.Sprintf("n%04d<&>\x01\xff", i)] = int64(i)
	}
	doc := &status.ProfileStatus{Profile: plainProfile, Simulator: status.Simulator{Simulation: &status.Simulation{MilliScores: scores}}}
	const bound = 64 << 10
	body, err := encodeBounded(doc, bound)
	if err != nil {
		t.Fatal(err)
	}
	var got status.ProfileStatus
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	got.Published = time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	stamped, err := json.Marshal(&got)
	if err != nil {
		t.Fatal(err)
	}
	if len(stamped) > bound {
		t.Errorf("stamped document is %d bytes, over %d", len(stamped), bound)
	}
	if sim := got.Simulator.Simulation; len(sim.MilliScores) == 0 || len(sim.MilliScores)+sim.Omitted != 5000 {
		t.Errorf("kept %d, omitted %d, want 5000 in all", len(sim.MilliScores), sim.Omitted)
	}
}

// liveDoc is a live profile's document at n nodes: every node scored,
// with its metrics and link as NetworkCapacity counts it, its
// eight-dimensional network coordinate at full precision, and the pairs
// between the first measured nodes measured directly.
func liveDoc(n, measured int) *status.ProfileStatus {
	scores, metrics := map[string]int64{}, map[string]status.NodeMetrics{}
	pairs := &status.Pairs{Coordinates: map[string]status.Coordinate{}}
	name := func(i int) string { return fmt.Sprintf("kns-3-worker-%04d", i) }
	for i := range n {
		l, b, p, u := 0.2+float64(i)/1e4, 950.5, 0.001, 12.25
		scores[name(i)] = int64(900_000 - i)
		metrics[name(i)] = status.NodeMetrics{LatencyMs: &l, BandwidthMbps: &b, PacketLoss: &p, LinkUseMbps: &u,
			Capacity: &status.LinkCapacity{RankedBandwidthMbps: b, CountedMbps: 20, CountedPods: 2, CountedSince: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), FreeMbps: 918.25}}
		vec := make([]float64, 8)
		for d := range vec {
			vec[d] = float64((i*(d+7))%997) / 3.7e6
		}
		pairs.Coordinates[name(i)] = status.Coordinate{Vec: vec, Error: 0.123456789, Adjustment: -1.23456789e-6, Height: 1.0123456789e-5}
	}
	for i := range measured {
		for j := i + 1; j < measured; j++ {
			e := &status.PairEstimate{Value: 0.412345, Low: 0.38912, High: 0.43456}
			pairs.Measured = append(pairs.Measured, status.MeasuredPair{From: name(i), To: name(j), LatencyMs: e, PacketLoss: &status.PairEstimate{}})
		}
	}
	return &status.ProfileStatus{Profile: "kns-3-scheduler", Scoring: []status.ScorePlugin{{Name: status.NetworkPeers, Weight: 20}},
		Simulator: status.Simulator{Simulation: &status.Simulation{MilliScores: scores, Metrics: metrics, Pairs: pairs}}}
}

// TestEncodeBoundedPairsFirst: the pairs go before the metrics and the
// scores. A small cluster's document holds them all; at 5000 nodes (3.5
// MB in full) the document stays within the bound, a quarter of what a
// ConfigMap holds, says the pairs were left out, and keeps every score; a document whose metrics fit without the pairs keeps its
// metrics.
func TestEncodeBoundedPairsFirst(t *testing.T) {
	decode := func(body []byte) *status.Simulation {
		t.Helper()
		var got status.ProfileStatus
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		return got.Simulator.Simulation
	}
	body, err := encodeBounded(liveDoc(50, 10), maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	if sim := decode(body); sim.PairsOmitted || sim.Pairs == nil || len(sim.Pairs.Coordinates) != 50 || len(sim.Pairs.Measured) != 45 || sim.MetricsOmitted {
		t.Errorf("50 nodes: pairs omitted %t, %d coordinates; want all 50 and 45 measured pairs, with the metrics", sim.PairsOmitted, len(sim.Pairs.Coordinates))
	}
	full, err := json.Marshal(liveDoc(5000, 100))
	if err != nil {
		t.Fatal(err)
	}
	body, err = encodeBounded(liveDoc(5000, 100), maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("5000 nodes: %d bytes in full, %d bounded", len(full), len(body))
	if len(body)+stampRoom > maxBytes {
		t.Errorf("5000 nodes: %d bytes stamped, over the bound %d", len(body)+stampRoom, maxBytes)
	}
	if sim := decode(body); sim.Pairs != nil || !sim.PairsOmitted || len(sim.MilliScores) != 5000 {
		t.Errorf("5000 nodes: pairs %v (omitted %t), %d scores; want the pairs left out, and said so, and every score in", sim.Pairs != nil, sim.PairsOmitted, len(sim.MilliScores))
	}
	// Room for the metrics without the pairs: the metrics stay.
	doc := liveDoc(300, 0)
	doc.Simulator.Simulation.Pairs = nil
	withoutPairs, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	body, err = encodeBounded(liveDoc(300, 0), len(withoutPairs)+len(`,"pairsOmitted":true`)+stampRoom)
	if err != nil {
		t.Fatal(err)
	}
	if sim := decode(body); !sim.PairsOmitted || sim.MetricsOmitted || len(sim.Metrics) != 300 {
		t.Errorf("pairs omitted %t, metrics omitted %t (%d); want the pairs out and the metrics in", sim.PairsOmitted, sim.MetricsOmitted, len(sim.Metrics))
	}
}
