package kindenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

const (
	// AgentNamespace is where deploy/live's probe agents run.
	AgentNamespace = "kns-3-agents"
	// ProbeKeySecret is the Secret, in Namespace and AgentNamespace, that
	// holds the key the simulator and the agents sign probes with.
	ProbeKeySecret = "kns-3-probe-key"
	// ProbeKeyKey is the Secret's key that holds it.
	ProbeKeyKey = "key"
)

// EnsureProbeKey makes the probe key Secret in both namespaces, creating
// them when missing, with one random key, or the key one of them already
// holds, as deploy/live/probe-key.sh does; it returns the key.
func EnsureProbeKey(ctx context.Context, client kubernetes.Interface) ([]byte, error) {
	namespaces := []string{Namespace, AgentNamespace}
	var key []byte
	for _, ns := range namespaces {
		s, err := client.CoreV1().Secrets(ns).Get(ctx, ProbeKeySecret, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading the probe key in %s: %w", ns, err)
		case key != nil && !bytes.Equal(key, s.Data[ProbeKeyKey]):
			return nil, fmt.Errorf("the Secrets %s in %v hold different keys", ProbeKeySecret, namespaces)
		case len(s.Data[ProbeKeyKey]) > 0:
			key = s.Data[ProbeKeyKey]
		}
	}
	if key == nil {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		key = []byte(base64.StdEncoding.EncodeToString(raw))
	}
	for _, ns := range namespaces {
		if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("creating the namespace %s: %w", ns, err)
			}
		}
		secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ProbeKeySecret, Namespace: ns}, Data: map[string][]byte{ProbeKeyKey: key}}
		_, err := client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil // holds key: read above
		}
		if err != nil {
			return nil, fmt.Errorf("writing the probe key in %s: %w", ns, err)
		}
	}
	return key, nil
}

// needsProbeKey says whether any of objs mounts the probe key Secret.
func needsProbeKey(objs []*unstructured.Unstructured) bool {
	for _, o := range objs {
		// Without a copy: kustomize's maps hold Go ints, which the copying
		// helpers refuse.
		volumes, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "template", "spec", "volumes")
		list, _ := volumes.([]any)
		for _, v := range list {
			vm, _ := v.(map[string]any)
			secret, _, _ := unstructured.NestedFieldNoCopy(vm, "secret", "secretName")
			if secret == ProbeKeySecret {
				return true
			}
		}
	}
	return false
}
