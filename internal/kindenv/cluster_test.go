package kindenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFreezerDirs(t *testing.T) {
	tests := []struct {
		name, procCgroup string
		want             []string
	}{
		{"cgroup v1", "12:pids:/docker/abc\n6:freezer:/docker/abc\n1:name=systemd:/docker/abc\n",
			[]string{"/sys/fs/cgroup/freezer/docker/abc"}},
		{"cgroup v2", "0::/system.slice/docker-abc.scope\n", []string{"/sys/fs/cgroup/system.slice/docker-abc.scope"}},
		{"garbage", "not a cgroup line\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := freezerDirs(strings.NewReader(tt.procCgroup), "/sys/fs/cgroup")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("freezerDirs (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestThawTree(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"freezer.state":                     "THAWED\n",
		"kubelet.slice/freezer.state":       "THAWED\n",
		"kubelet.slice/pod/freezer.state":   "FROZEN\n",
		"kubelet.slice/other/freezer.state": "FREEZING\n",
		"v2/cgroup.freeze":                  "1\n",
		"v2/thawed/cgroup.freeze":           "0\n",
		"kubelet.slice/pod/cgroup.procs":    "2865\n",
	}
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := thawTree(root)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("thawed %d cgroups, want 3", n)
	}
	want := map[string]string{
		"freezer.state":                     "THAWED\n",
		"kubelet.slice/pod/freezer.state":   "THAWED",
		"kubelet.slice/other/freezer.state": "THAWED",
		"v2/cgroup.freeze":                  "0",
		"v2/thawed/cgroup.freeze":           "0\n",
		"kubelet.slice/pod/cgroup.procs":    "2865\n",
	}
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	if n, err := thawTree(filepath.Join(root, "missing")); err != nil || n != 0 {
		t.Errorf("thawTree on a vanished cgroup = %d, %v; want 0, nil", n, err)
	}
}
