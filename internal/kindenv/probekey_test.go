package kindenv

import (
	"context"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// An install whose pods mount the probe key gets one before it is applied;
// the others do not.
func TestNeedsProbeKey(t *testing.T) {
	for dir, want := range map[string]bool{
		deployDir(t):                        false,
		filepath.Join(deployDir(t), "ha"):   false,
		filepath.Join(deployDir(t), "live"): true,
		filepath.Join(deployDir(t), "live", "control-plane", "agents"): true,
	} {
		objs, err := Render(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := needsProbeKey(objs); got != want {
			t.Errorf("%s: needs the probe key %v, want %v", dir, got, want)
		}
	}
}

// EnsureProbeKey makes one key in both namespaces, keeps one that exists,
// and refuses two that differ.
func TestEnsureProbeKey(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	key, err := EnsureProbeKey(ctx, client)
	if err != nil || len(key) < 32 {
		t.Fatalf("first key %q, %v: want a random one", key, err)
	}
	for _, ns := range []string{Namespace, AgentNamespace} {
		s, err := client.CoreV1().Secrets(ns).Get(ctx, ProbeKeySecret, metav1.GetOptions{})
		if err != nil || string(s.Data[ProbeKeyKey]) != string(key) {
			t.Errorf("%s: %v, %v; want the key", ns, s, err)
		}
	}
	again, err := EnsureProbeKey(ctx, client)
	if err != nil || string(again) != string(key) {
		t.Errorf("again: %q, %v; want the same key kept", again, err)
	}

	client = fake.NewClientset(&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ProbeKeySecret, Namespace: AgentNamespace},
		Data: map[string][]byte{ProbeKeyKey: []byte("the agents' existing key, 32 b")}})
	if key, err := EnsureProbeKey(ctx, client); err != nil || string(key) != "the agents' existing key, 32 b" {
		t.Errorf("with the agents' key only: %q, %v; want it copied to the simulator's namespace", key, err)
	}
	client = fake.NewClientset(
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ProbeKeySecret, Namespace: AgentNamespace}, Data: map[string][]byte{ProbeKeyKey: []byte("one")}},
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ProbeKeySecret, Namespace: Namespace}, Data: map[string][]byte{ProbeKeyKey: []byte("two")}})
	if _, err := EnsureProbeKey(ctx, client); err == nil {
		t.Error("two different keys: no error")
	}
}
