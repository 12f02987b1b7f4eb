package capstrip

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want Invocation
	}{
		{"create with bundle", []string{"--root", "/run/r", "--log", "l.json", "create", "--bundle", "/b", "id"},
			Invocation{Command: "create", Bundle: "/b"}},
		{"bundle with equals", []string{"create", "--bundle=/b", "id"}, Invocation{Command: "create", Bundle: "/b"}},
		{"short bundle", []string{"run", "-b", "/b", "id"}, Invocation{Command: "run", Bundle: "/b"}},
		{"exec process", []string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"},
			Invocation{Command: "exec", Process: "/tmp/p.json"}},
		{"no document", []string{"--root", "/r", "state", "id"}, Invocation{Command: "state"}},
		{"no command", []string{"--version"}, Invocation{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseArgs(tt.args)); diff != "" {
				t.Errorf("ParseArgs(%v) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestStrip(t *testing.T) {
	all := `{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE"],"permitted":["CAP_CHOWN"]}`
	tests := []struct {
		name      string
		doc       string
		inProcess bool
		wantCaps  map[string][]string
		changed   bool
	}{
		{"bundle config", `{"ociVersion":"1.0.2","process":{"cwd":"/","capabilities":` + all + `}}`, true,
			map[string][]string{"bounding": {"CAP_CHOWN"}, "effective": {}, "permitted": {"CAP_CHOWN"}}, true},
		{"exec process", `{"cwd":"/","capabilities":` + all + `}`, false,
			map[string][]string{"bounding": {"CAP_CHOWN"}, "effective": {}, "permitted": {"CAP_CHOWN"}}, true},
		{"nothing to drop", `{"process":{"cwd":"/","capabilities":{"bounding":["CAP_CHOWN"]}}}`, true,
			map[string][]string{"bounding": {"CAP_CHOWN"}}, false},
		{"no capabilities", `{"process":{"cwd":"/"}}`, true, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := Strip([]byte(tt.doc), Drop, tt.inProcess)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.changed {
				t.Errorf("changed = %v, want %v", changed, tt.changed)
			}
			var doc struct {
				Cwd          string              `json:"cwd"`
				Capabilities map[string][]string `json:"capabilities"`
				Process      struct {
					Cwd          string              `json:"cwd"`
					Capabilities map[string][]string `json:"capabilities"`
				} `json:"process"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			caps, cwd := doc.Capabilities, doc.Cwd
			if tt.inProcess {
				caps, cwd = doc.Process.Capabilities, doc.Process.Cwd
			}
			if diff := cmp.Diff(tt.wantCaps, caps); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
			if tt.wantCaps != nil && cwd != "/" {
				t.Errorf("cwd = %q, other fields must be kept", cwd)
			}
		})
	}
}

func TestStripRejectsBadJSON(t *testing.T) {
	if _, _, err := Strip([]byte("{"), Drop, true); err == nil {
		t.Fatal("want an error for a truncated document")
	}
}
