package peers

import (
	"math"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// client is a pod of namespace default declaring annotations.
func client(name string, annotations map[string]string) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").UID(name).Obj()
	p.Annotations = annotations
	return p
}

func peersOf(selector string) map[string]string {
	return map[string]string{PeersAnnotation: selector}
}

func TestFromAnnotations(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		// matches and misses are label sets the declaration must and must
		// not match.
		matches, misses []labels.Set
		wantMbps        float64
		wantNone        bool
		wantErr         string
	}{{
		name:        "one selector",
		annotations: peersOf("app=cart"),
		matches:     []labels.Set{{"app": "cart"}, {"app": "cart", "tier": "web"}},
		misses:      []labels.Set{{"app": "shop"}, {}},
	}, {
		name:        "several selectors: any of them",
		annotations: peersOf("app=cart; tier in (db, cache),!canary ;"),
		matches:     []labels.Set{{"app": "cart"}, {"tier": "db"}, {"tier": "cache"}},
		misses:      []labels.Set{{"tier": "db", "canary": "yes"}, {"tier": "web"}},
	}, {
		name:        "traffic in bits per second",
		annotations: map[string]string{PeersAnnotation: "app=cart", PeerTrafficAnnotation: "50M"},
		matches:     []labels.Set{{"app": "cart"}},
		wantMbps:    50,
	}, {
		name:        "a binary suffix",
		annotations: map[string]string{PeersAnnotation: "app=cart", PeerTrafficAnnotation: "30Mi"},
		matches:     []labels.Set{{"app": "cart"}},
		wantMbps:    30 * 1024 * 1024 / 1e6,
	}, {
		name:     "no annotation",
		wantNone: true,
	}, {
		name:        "a selector that does not parse",
		annotations: peersOf("app=cart;app in (x"),
		wantErr:     `annotation kns-3-scheduler/peers: selector 2 ("app in (x")`,
	}, {
		name:        "no selector",
		annotations: peersOf(" ; "),
		wantErr:     "no label selector",
	}, {
		name:        "too many selectors",
		annotations: peersOf(strings.Repeat("a=b;", maxSelectors+1)),
		wantErr:     "at most 8",
	}, {
		name:        "a traffic that is no quantity",
		annotations: map[string]string{PeersAnnotation: "app=cart", PeerTrafficAnnotation: "50 Mbit/s"},
		wantErr:     `annotation kns-3-scheduler/peer-traffic: "50 Mbit/s" is no quantity`,
	}, {
		name:        "no traffic",
		annotations: map[string]string{PeersAnnotation: "app=cart", PeerTrafficAnnotation: "0"},
		wantErr:     "want a traffic above 0",
	}, {
		name:        "a negative traffic",
		annotations: map[string]string{PeersAnnotation: "app=cart", PeerTrafficAnnotation: "-5M"},
		wantErr:     "want a traffic above 0",
	}, {
		name:        "traffic without peers",
		annotations: map[string]string{PeerTrafficAnnotation: "5M"},
		wantErr:     "traffic to no peers",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := FromAnnotations(client("p", tc.annotations))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (d == nil) != tc.wantNone {
				t.Fatalf("declaration %+v, want none: %t", d, tc.wantNone)
			}
			if d == nil {
				return
			}
			if len(d.Groups) != 1 {
				t.Fatalf("%d groups, want the annotation's one", len(d.Groups))
			}
			g := d.Groups[0]
			for _, l := range tc.matches {
				if !g.Matches(l) {
					t.Errorf("does not match %v", l)
				}
			}
			for _, l := range tc.misses {
				if g.Matches(l) {
					t.Errorf("matches %v", l)
				}
			}
			if math.Abs(g.TrafficMbps-tc.wantMbps) > 1e-9 {
				t.Errorf("traffic %g Mbit/s, want %g", g.TrafficMbps, tc.wantMbps)
			}
		})
	}
}

func TestDeclares(t *testing.T) {
	for _, tc := range []struct {
		annotations, labels map[string]string
		want                bool
	}{
		{want: false},
		{annotations: map[string]string{"other": "x"}, labels: map[string]string{"app": "x"}, want: false},
		{annotations: peersOf("app=x"), want: true},
		{annotations: map[string]string{PeerTrafficAnnotation: "1M"}, want: true},
		{labels: map[string]string{AppGroupLabel: "shop"}, want: true},
	} {
		p := client("p", tc.annotations)
		p.Labels = tc.labels
		if got := Declares(p); got != tc.want {
			t.Errorf("Declares(annotations %v, labels %v) = %t, want %t", tc.annotations, tc.labels, got, tc.want)
		}
	}
}
