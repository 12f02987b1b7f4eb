package controlplane_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The files under test, relative to the package directory: go test runs
// here, and Bazel runs go_test in the package's runfiles directory.
const (
	scriptFile   = "install.sh"
	manifestFile = "kube-scheduler.yaml"
	configFile   = "scheduler-config.yaml"
)

const (
	schedulerImage = "kns-3-scheduler:v0.1.0"
	simulatorImage = "kns-3-simulator:v0.1.0"
	readyURL       = "https://127.0.0.1:10259/readyz"
)

// kubeadmManifest stands for the kube-scheduler.yaml kubeadm writes.
const kubeadmManifest = `apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-scheduler
    tier: control-plane
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-scheduler
    image: kube-scheduler:v1.37.2
  hostNetwork: true
`

// fakeCrictl plays the node's container runtime and, for the pods the
// kubelet runs, the kubelet. $FAKE_STATE holds its behaviour: images (one
// image a line, for inspecti), pod (none: no ready KNS-3 sandbox; current:
// a ready one from the manifest in place; stale: a ready one with another
// hash). Every call records what the manifests directory holds.
const fakeCrictl = `#!/bin/sh
s=$FAKE_STATE
{ ls -A "$KNS3_MANIFESTS_DIR"; echo --; } >>"$s/manifests.log"
echo "crictl $*" >>"$s/calls.log"
pod=$(cat "$s/pod" 2>/dev/null || echo none)
case $1 in
inspecti)
  if grep -qxF "$2" "$s/images" 2>/dev/null; then
    echo '{"status":{"id":"sha256:0123"}}'
    exit 0
  fi
  echo "FATA[0000] no such image \"$2\" present" >&2
  exit 1 ;;
pods)
  case " $* " in
  *" --namespace kube-system "*) ;;
  *) exit 0 ;;
  esac
  case " $* " in
  *" --label app.kubernetes.io/name=kns-3-scheduler "*) ;;
  *) exit 0 ;;
  esac
  case " $* " in
  *" --state ready "*) ;;
  *) exit 0 ;;
  esac
  [ "$pod" = none ] || echo 9f8e7d6c5b4a
  exit 0 ;;
inspectp)
  [ "$2" = 9f8e7d6c5b4a ] || { echo "FATA[0000] pod $2 not found" >&2; exit 1; }
  hash=stale
  if [ "$pod" = current ]; then
    hash=$(sed -n 's/^ *kns3\.dev\/config-hash: *"*\([^"]*\)"*$/\1/p' "$KNS3_MANIFESTS_DIR/kube-scheduler.yaml")
  fi
  printf '{\n  "status": {\n    "annotations": {\n      "kns3.dev/config-hash": "%s"\n    }\n  }\n}\n' "$hash"
  exit 0 ;;
esac
echo "fake crictl: unexpected $*" >&2
exit 2
`

// fakeProbe plays curl or wget against the scheduler's readyz: it fails
// $FAKE_STATE/readyz-after times (never: always), then answers ok.
const fakeProbe = `#!/bin/sh
s=$FAKE_STATE
{ ls -A "$KNS3_MANIFESTS_DIR"; echo --; } >>"$s/manifests.log"
echo "$(basename "$0") $*" >>"$s/calls.log"
for url; do :; done
if [ "$url" != "` + readyURL + `" ]; then
  echo "fake probe: unexpected URL $url" >&2
  exit 2
fi
n=$(( $(cat "$s/probes" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$s/probes"
after=$(cat "$s/readyz-after" 2>/dev/null || echo never)
if [ "$after" != never ] && [ "$n" -gt "$after" ]; then
  echo ok
  exit 0
fi
echo "curl: (7) Failed to connect to 127.0.0.1 port 10259: Connection refused" >&2
exit 7
`

// fakeKubectl plays the API server, read with the node's scheduler.conf:
// the lease's holder is $FAKE_STATE/lease-holder (none: no lease), the
// app.kubernetes.io/name label of a node's kube-scheduler pod
// $FAKE_STATE/holder-app.
const fakeKubectl = `#!/bin/sh
s=$FAKE_STATE
echo "kubectl $*" >>"$s/calls.log"
case " $* " in
*" get nodes -l node-role.kubernetes.io/control-plane -o name "*)
  if [ -f "$s/control-plane-nodes" ]; then
    cat "$s/control-plane-nodes"
    exit 0
  fi
  echo 'error: the server is unreachable' >&2
  exit 1 ;;
*" -n kube-system get lease kube-scheduler "*)
  if [ -f "$s/lease-holder" ]; then
    cat "$s/lease-holder"
    exit 0
  fi
  echo 'Error from server (NotFound): leases.coordination.k8s.io "kube-scheduler" not found' >&2
  exit 1 ;;
*" -n kube-system get pod kube-scheduler-"*)
  cat "$s/holder-app" 2>/dev/null
  exit 0 ;;
esac
echo "fake kubectl: unexpected $*" >&2
exit 2
`

// spy runs a command after recording what the manifests directory holds:
// install.sh renames its temporary into place with mv, so a temporary the
// kubelet would run shows.
const spy = `#!/bin/sh
{ ls -A "$KNS3_MANIFESTS_DIR"; echo --; } >>"$FAKE_STATE/manifests.log"
exec %q "$@"
`

// spied are the tools run through spy.
var spied = []string{"cp", "chmod", "mv"}

// tools are the commands install.sh and the fakes may run: the only ones
// on the script's PATH, so that crictl, curl and wget are the fakes or
// missing whatever the machine has.
var tools = []string{
	"sh", "basename", "cat", "chmod", "chown", "cp", "cut", "date", "grep", "install",
	"ls", "mkdir", "mv", "rm", "sed", "sha256sum", "sleep", "tr", "wc",
}

// node is a control-plane node's directories, here temporary ones, with
// its runtime and probe faked.
type node struct {
	t         *testing.T
	etc       string // KNS3_ETC_DIR
	manifests string // KNS3_MANIFESTS_DIR
	state     string // the fakes' behaviour and logs
	bin       string // the script's PATH
	src       string // install.sh's inputs
	timeout   string // KNS3_READY_TIMEOUT
}

type nodeOptions struct {
	noCrictl bool
	probe    string // "curl" (default), "wget" or "none"
	kubectl  bool   // a kubectl on the PATH (fakeKubectl)
}

func newNode(t *testing.T, o nodeOptions) *node {
	t.Helper()
	root := t.TempDir()
	n := &node{
		t:         t,
		etc:       filepath.Join(root, "etc"),
		state:     filepath.Join(root, "state"),
		bin:       filepath.Join(root, "bin"),
		src:       filepath.Join(root, "src"),
		timeout:   "10", // a ready install ends at once
		manifests: filepath.Join(root, "etc", "manifests"),
	}
	for _, d := range []string{n.manifests, n.state, n.bin, n.src} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is needed to run install.sh: %v", tool, err)
		}
		if slices.Contains(spied, tool) {
			n.write(filepath.Join(n.bin, tool), fmt.Sprintf(spy, path), 0o755)
		} else if err := os.Symlink(path, filepath.Join(n.bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	if !o.noCrictl {
		n.write(filepath.Join(n.bin, "crictl"), fakeCrictl, 0o755)
	}
	if o.kubectl {
		n.write(filepath.Join(n.bin, "kubectl"), fakeKubectl, 0o755)
	}
	switch o.probe {
	case "", "curl":
		n.write(filepath.Join(n.bin, "curl"), fakeProbe, 0o755)
	case "wget":
		n.write(filepath.Join(n.bin, "wget"), fakeProbe, 0o755)
	}
	n.write(n.current(), kubeadmManifest, 0o600)
	n.images(schedulerImage, simulatorImage)
	n.set("pod", "current")
	n.set("readyz-after", "0")
	return n
}

func (n *node) write(path, data string, mode os.FileMode) string {
	n.t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		n.t.Fatal(err)
	}
	return path
}

func (n *node) read(path string) string {
	n.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		n.t.Fatal(err)
	}
	return string(data)
}

func (n *node) current() string   { return filepath.Join(n.manifests, "kube-scheduler.yaml") }
func (n *node) saved() string     { return filepath.Join(n.etc, "kube-scheduler.yaml.kubeadm") }
func (n *node) configDir() string { return filepath.Join(n.etc, "kns-3") }

// set writes one of the fakes' behaviour files.
func (n *node) set(name, value string) { n.write(filepath.Join(n.state, name), value+"\n", 0o644) }

// images are the images the fake runtime holds.
func (n *node) images(images ...string) { n.set("images", strings.Join(images, "\n")) }

// inputs writes install.sh's three arguments.
func (n *node) inputs(manifest, config, scenario string) []string {
	return []string{
		n.write(filepath.Join(n.src, "kube-scheduler.yaml"), manifest, 0o644),
		n.write(filepath.Join(n.src, "scheduler-config.yaml"), config, 0o644),
		n.write(filepath.Join(n.src, "scenario.yaml"), scenario, 0o644),
	}
}

// run runs install.sh as the node's root would, then checks the manifests
// directory never held a file the kubelet would run besides the manifest.
func (n *node) run(args ...string) (string, error) {
	n.t.Helper()
	script, err := filepath.Abs(scriptFile)
	if err != nil {
		n.t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(n.state, "probes")); err != nil && !os.IsNotExist(err) {
		n.t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Env = []string{
		"PATH=" + n.bin,
		"KNS3_MANIFESTS_DIR=" + n.manifests,
		"KNS3_ETC_DIR=" + n.etc,
		"KNS3_READY_TIMEOUT=" + n.timeout,
		"KNS3_READY_INTERVAL=0.1",
		"KNS3_SIMULATOR_UID=" + strconv.Itoa(os.Getuid()),
		"FAKE_STATE=" + n.state,
	}
	out, err := cmd.CombinedOutput()
	n.checkManifestsDir()
	return string(out), err
}

// checkManifestsDir: the kubelet runs every file of the manifests
// directory but dot-files, so only the manifest may be there (no
// temporary such as older install.sh's kube-scheduler.yaml.tmp), now and
// whenever the fakes looked during the run.
func (n *node) checkManifestsDir() {
	n.t.Helper()
	entries, err := os.ReadDir(n.manifests)
	if err != nil {
		n.t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "kube-scheduler.yaml" {
			n.t.Errorf("the manifests directory holds %s after the run", e.Name())
		}
	}
	log, err := os.ReadFile(filepath.Join(n.state, "manifests.log"))
	if err != nil && !os.IsNotExist(err) {
		n.t.Fatal(err)
	}
	for _, name := range strings.Fields(string(log)) {
		if name != "--" && name != "kube-scheduler.yaml" && !strings.HasPrefix(name, ".") {
			n.t.Errorf("the manifests directory held %s during the run", name)
		}
	}
	n.write(filepath.Join(n.state, "manifests.log"), "", 0o644)
}

// tree is every file under etc (manifests included), by path.
func (n *node) tree() map[string]string {
	n.t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(n.etc, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(n.etc, path)
		files[rel] = n.read(path)
		return nil
	})
	if err != nil {
		n.t.Fatal(err)
	}
	return files
}

// rendered is kube-scheduler.yaml as `kubectl kustomize deploy/control-plane`
// renders it: the images tagged.
func rendered(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(manifestFile)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^(\s*-?\s*image:\s*)(kns-3-(?:scheduler|simulator))\s*$`)
	if got := len(re.FindAllString(string(data), -1)); got != 2 {
		t.Fatalf("%s names %d untagged KNS-3 images, want 2", manifestFile, got)
	}
	out := re.ReplaceAllString(string(data), "${1}${2}:v0.1.0")
	if !strings.Contains(out, placeholder) {
		t.Fatalf("%s has no %q annotation", manifestFile, placeholder)
	}
	return out
}

const placeholder = `kns3.dev/config-hash: "unset"`

var hashRE = regexp.MustCompile(`kns3\.dev/config-hash: "([0-9a-f]{64})"`)

// installedHash checks the manifest in place is manifest with the
// placeholder filled, and returns the hash.
func (n *node) installedHash(manifest string) string {
	n.t.Helper()
	got := n.read(n.current())
	m := hashRE.FindAllStringSubmatch(got, -1)
	if len(m) != 1 {
		n.t.Fatalf("the installed manifest carries %d config hashes, want 1:\n%s", len(m), got)
	}
	want := strings.Replace(manifest, "kns3.dev/config-hash: unset", placeholder, 1)
	if back := strings.Replace(got, m[0][0], placeholder, 1); back != want {
		n.t.Errorf("the installed manifest is not the rendered one with the hash filled in:\n%s", back)
	}
	return m[0][1]
}

// checkInstalled: KNS-3's manifest in place, kubeadm's saved outside the
// manifests directory, the configuration where the pod mounts it.
func (n *node) checkInstalled(manifest, config, scenario string) string {
	n.t.Helper()
	hash := n.installedHash(manifest)
	if got := n.read(n.saved()); got != kubeadmManifest {
		n.t.Errorf("saved manifest = %q, want kubeadm's", got)
	}
	if got := n.read(filepath.Join(n.configDir(), "scheduler-config.yaml")); got != config {
		n.t.Errorf("installed configuration = %q, want %q", got, config)
	}
	if got := n.read(filepath.Join(n.configDir(), "scenario.yaml")); got != scenario {
		n.t.Errorf("installed scenario = %q, want %q", got, scenario)
	}
	return hash
}

func defaultConfig(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const scenario = "nodes: []\n"

func TestInstall(t *testing.T) {
	type outcome int
	const (
		unchanged outcome = iota // refused, or rolled back: every file as before
		installed
	)
	cases := []struct {
		name    string
		opts    nodeOptions
		prepare func(n *node, manifest *string)
		timeout string
		want    outcome
		wantOut []string
		check   func(n *node)
	}{{
		name:    "ready",
		prepare: func(n *node, _ *string) { n.set("readyz-after", "2") },
		want:    installed,
		wantOut: []string{"kns-3-scheduler is the control plane's scheduler"},
	}, {
		name:    "ready, probed with wget",
		opts:    nodeOptions{probe: "wget"},
		prepare: func(n *node, _ *string) { n.set("readyz-after", "1") },
		want:    installed,
		check: func(n *node) {
			if calls := n.read(filepath.Join(n.state, "calls.log")); !strings.Contains(calls, "wget --no-check-certificate") {
				n.t.Errorf("wget was not called without certificate checks (the scheduler's is self-signed):\n%s", calls)
			}
		},
	}, {
		// internal/kindenv renders with sigs.k8s.io/yaml, which drops the quotes.
		name: "placeholder unquoted",
		prepare: func(_ *node, m *string) {
			*m = strings.Replace(*m, placeholder, "kns3.dev/config-hash: unset", 1)
		},
		want: installed,
	}, {
		name:    "scheduler image missing",
		prepare: func(n *node, _ *string) { n.images(simulatorImage) },
		want:    unchanged,
		wantOut: []string{schedulerImage, "crictl inspecti", "kind load"},
	}, {
		name:    "simulator image missing",
		prepare: func(n *node, _ *string) { n.images(schedulerImage, "kube-scheduler:v1.37.2") },
		want:    unchanged,
		wantOut: []string{simulatorImage},
	}, {
		name:    "no crictl",
		opts:    nodeOptions{noCrictl: true},
		want:    unchanged,
		wantOut: []string{"crictl"},
	}, {
		name:    "neither curl nor wget",
		opts:    nodeOptions{probe: "none"},
		want:    unchanged,
		wantOut: []string{"curl", "wget"},
	}, {
		name: "manifest not rendered",
		prepare: func(n *node, m *string) {
			data, err := os.ReadFile(manifestFile)
			if err != nil {
				n.t.Fatal(err)
			}
			*m = string(data)
		},
		want:    unchanged,
		wantOut: []string{"kubectl kustomize"},
	}, {
		name: "manifest without the placeholder",
		prepare: func(_ *node, m *string) {
			*m = strings.Replace(*m, placeholder, "kns3.dev/other: x", 1)
		},
		want:    unchanged,
		wantOut: []string{"kns3.dev/config-hash"},
	}, {
		name:    "readyz never answers",
		prepare: func(n *node, _ *string) { n.set("readyz-after", "never") },
		timeout: "1",
		want:    unchanged,
		wantOut: []string{"Connection refused", "crictl ps -a", "crictl logs", "kube-scheduler"},
	}, {
		// The old kube-scheduler answers on the same port until the
		// kubelet stops it.
		name:    "readyz answers, no KNS-3 pod",
		prepare: func(n *node, _ *string) { n.set("pod", "none") },
		timeout: "1",
		want:    unchanged,
		wantOut: []string{"crictl ps -a"},
	}, {
		name:    "readyz answers, KNS-3 pod of another configuration",
		prepare: func(n *node, _ *string) { n.set("pod", "stale") },
		timeout: "1",
		want:    unchanged,
	}, {
		name: "KNS-3's manifest in place, kubeadm's not saved",
		prepare: func(n *node, m *string) {
			n.write(n.current(), strings.Replace(*m, "unset", strings.Repeat("ab", 32), 1), 0o600)
		},
		want:    unchanged,
		wantOut: []string{"kubeadm init phase control-plane scheduler"},
	}, {
		name:    "no manifest in place",
		prepare: func(n *node, _ *string) { os.Remove(n.current()) },
		want:    unchanged,
		wantOut: []string{"control-plane node"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNode(t, c.opts)
			if c.timeout != "" {
				n.timeout = c.timeout
			}
			manifest, config := rendered(t), defaultConfig(t)
			if c.prepare != nil {
				c.prepare(n, &manifest)
			}
			before := n.tree()
			out, err := n.run(n.inputs(manifest, config, scenario)...)
			for _, s := range c.wantOut {
				if !strings.Contains(out, s) {
					t.Errorf("output does not say %q:\n%s", s, out)
				}
			}
			switch c.want {
			case installed:
				if err != nil {
					t.Fatalf("install: %v\n%s", err, out)
				}
				n.checkInstalled(manifest, config, scenario)
			case unchanged:
				if err == nil {
					t.Errorf("install succeeded, want it refused or rolled back:\n%s", out)
				}
				if after := n.tree(); !maps.Equal(before, after) {
					t.Errorf("the node's files changed:\nbefore %s\nafter  %s\noutput:\n%s", keys(before), keys(after), out)
				}
			}
			if c.check != nil {
				c.check(n)
			}
		})
	}
}

// Installing again: the same files leave the same manifest; a new
// configuration or scenario gives the pod a new hash, so that the kubelet
// restarts it.
func TestReinstall(t *testing.T) {
	t.Parallel()
	n := newNode(t, nodeOptions{})
	manifest, config := rendered(t), defaultConfig(t)
	args := n.inputs(manifest, config, scenario)
	if out, err := n.run(args...); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	first := n.checkInstalled(manifest, config, scenario)
	if out, err := n.run(args...); err != nil {
		t.Fatalf("same install again: %v\n%s", err, out)
	}
	if again := n.checkInstalled(manifest, config, scenario); again != first {
		t.Errorf("the same files gave hash %s, then %s", first, again)
	}

	changed := config + "# percentageOfNodesToScore: 50\n"
	args = n.inputs(manifest, changed, scenario)
	if out, err := n.run(args...); err != nil {
		t.Fatalf("install with a changed configuration: %v\n%s", err, out)
	}
	second := n.checkInstalled(manifest, changed, scenario)
	if second == first {
		t.Errorf("a changed configuration kept hash %s: the kubelet would not restart the pod", first)
	}

	args = n.inputs(manifest, changed, "nodes: [{name: a}]\n")
	if out, err := n.run(args...); err != nil {
		t.Fatalf("install with a changed scenario: %v\n%s", err, out)
	}
	if third := n.checkInstalled(manifest, changed, "nodes: [{name: a}]\n"); third == second {
		t.Errorf("a changed scenario kept hash %s", second)
	}
}

// A re-install that does not become ready puts the previous KNS-3 install
// back, its configuration included: kubeadm's stays saved.
func TestReinstallRollsBack(t *testing.T) {
	t.Parallel()
	n := newNode(t, nodeOptions{})
	manifest, config := rendered(t), defaultConfig(t)
	if out, err := n.run(n.inputs(manifest, config, scenario)...); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	n.checkInstalled(manifest, config, scenario)
	before := n.tree()

	n.timeout = "1"
	n.set("readyz-after", "never")
	out, err := n.run(n.inputs(manifest, config+"# broken\n", scenario)...)
	if err == nil {
		t.Fatalf("an install that never became ready succeeded:\n%s", out)
	}
	if after := n.tree(); !maps.Equal(before, after) {
		t.Errorf("the previous install is not back:\nbefore %s\nafter  %s\noutput:\n%s", keys(before), keys(after), out)
	}
}

// --uninstall puts kubeadm's manifest back and removes KNS-3's files; with
// nothing saved it refuses.
func TestUninstall(t *testing.T) {
	t.Parallel()
	n := newNode(t, nodeOptions{})
	manifest, config := rendered(t), defaultConfig(t)
	args := n.inputs(manifest, config, scenario)
	if out, err := n.run(args[:2]...); err == nil || !strings.Contains(out, "usage") {
		t.Errorf("two arguments: %v %q, want the usage", err, out)
	}
	if out, err := n.run(args...); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if out, err := n.run("--uninstall"); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	want := map[string]string{filepath.Join("manifests", "kube-scheduler.yaml"): kubeadmManifest}
	if got := n.tree(); !maps.Equal(got, want) {
		t.Errorf("after --uninstall the node holds %s, want kubeadm's manifest only", keys(got))
	}
	if out, err := n.run("--uninstall"); err == nil {
		t.Errorf("a second --uninstall succeeded with nothing saved: %q", out)
	}
}

// keys lists a tree's files, each with its content's length, for messages.
func keys(m map[string]string) string {
	var ks []string
	for k, v := range m {
		ks = append(ks, fmt.Sprintf("%s(%d)", k, len(v)))
	}
	slices.Sort(ks)
	return strings.Join(ks, " ")
}

// With several control-plane nodes the lease may stay with another node's
// kubeadm kube-scheduler, which knows no kns-3-scheduler profile: KNS-3
// pods would wait with no event. A successful install names the holder,
// and warns when it is not a KNS-3 scheduler or cannot be read.
func TestInstallNamesTheLeaseHolder(t *testing.T) {
	const warning = "not a KNS-3 scheduler"
	for _, tc := range []struct {
		name        string
		kubectl     bool
		holder, app string
		want        []string
		wantWarn    bool
	}{
		{name: "held by a KNS-3 scheduler", kubectl: true, holder: "cp1_0f1e", app: "kns-3-scheduler",
			want: []string{"lease kube-system/kube-scheduler is held by cp1_0f1e (node cp1's kns-3-scheduler)"}},
		{name: "held by kubeadm's on another node", kubectl: true, holder: "cp2_9a8b", app: "",
			want: []string{"lease kube-system/kube-scheduler is held by cp2_9a8b", warning, "every control-plane node"}, wantWarn: true},
		{name: "no lease yet", kubectl: true,
			want: []string{"could not read the lease kube-system/kube-scheduler", "NotFound", "every control-plane node"}},
		{name: "no kubectl",
			want: []string{"kubectl not found", "every control-plane node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := newNode(t, nodeOptions{kubectl: tc.kubectl})
			if tc.holder != "" {
				n.set("lease-holder", tc.holder)
				n.set("holder-app", tc.app)
			}
			out, err := n.run(n.inputs(rendered(t), defaultConfig(t), scenario)...)
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if got := strings.Contains(out, warning); got != tc.wantWarn {
				t.Errorf("warned %t, want %t:\n%s", got, tc.wantWarn, out)
			}
		})
	}
}

// liveManifest is deploy/live/control-plane's static pod as rendered: its
// simulator signs its probes with a key file and is one of --probers.
func liveManifest(t *testing.T) string {
	t.Helper()
	m := rendered(t)
	const args = "    - --reload-interval=2s\n"
	if !strings.Contains(m, args) {
		t.Fatalf("%s: no simulator argument %q to add to", manifestFile, args)
	}
	return strings.Replace(m, args, args+"    - --probe-key-file=/etc/kubernetes/kns-3/probe-key\n    - --probers=1\n", 1)
}

// TestInstallProbeKey: a live manifest needs the probe key's file, which
// install.sh puts beside the configuration for the simulator's user
// alone; a short key, or a key for a manifest that does not probe, is
// refused before anything changes; a new key restarts the pod.
func TestInstallProbeKey(t *testing.T) {
	const key = "a probe key of 32 bytes or more!"
	live := func(t *testing.T, n *node, key string) (string, []string) {
		args := n.inputs(liveManifest(t), defaultConfig(t), scenario)
		if key != "" {
			args = append(args, n.write(filepath.Join(n.src, "probe-key"), key, 0o600))
		}
		return liveManifest(t), args
	}
	t.Run("installed for the simulator's user alone", func(t *testing.T) {
		n := newNode(t, nodeOptions{})
		manifest, args := live(t, n, key)
		if out, err := n.run(args...); err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		n.checkInstalled(manifest, defaultConfig(t), scenario)
		path := filepath.Join(n.configDir(), "probe-key")
		if got := n.read(path); got != key {
			t.Errorf("installed key %q, want %q", got, key)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o400 {
			t.Errorf("the key's mode %v (%v), want 0400", fi.Mode().Perm(), err)
		}
	})
	for _, tc := range []struct {
		name, manifest, key, want string
	}{
		{"a live manifest without a key", "live", "", "fourth argument"},
		{"a short key", "live", "short", "fewer than 16 bytes"},
		{"a key for a manifest that does not probe", "plain", key, "takes no probe key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, nodeOptions{})
			before := n.tree()
			m := liveManifest(t)
			if tc.manifest == "plain" {
				m = rendered(t)
			}
			args := n.inputs(m, defaultConfig(t), scenario)
			if tc.key != "" {
				args = append(args, n.write(filepath.Join(n.src, "probe-key"), tc.key, 0o600))
			}
			out, err := n.run(args...)
			if err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("install: %v\n%s\nwant a refusal saying %q", err, out, tc.want)
			}
			if after := n.tree(); !maps.Equal(after, before) {
				t.Errorf("a refused install changed the node's files")
			}
		})
	}
	t.Run("a new key restarts the pod", func(t *testing.T) {
		n := newNode(t, nodeOptions{})
		_, args := live(t, n, key)
		if out, err := n.run(args...); err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		first := hashRE.FindString(n.read(n.current()))
		_, args = live(t, n, key+" rotated")
		if out, err := n.run(args...); err != nil {
			t.Fatalf("reinstall: %v\n%s", err, out)
		}
		if hashRE.FindString(n.read(n.current())) == first {
			t.Error("a new probe key left the manifest's hash as it was: the kubelet would not restart the simulator")
		}
	})
}

// TestInstallSharesTheProbingBudget: each control-plane node's simulator
// is one of as many probers as there are control-plane nodes, as kubectl
// counts them; without kubectl the manifest's count stays.
func TestInstallSharesTheProbingBudget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kubectl bool
		nodes   string
		want    string
	}{
		{"three control-plane nodes", true, "node/cp-1\nnode/cp-2\nnode/cp-3", "--probers=3"},
		{"one", true, "node/cp-1", "--probers=1"},
		{"kubectl cannot reach the API server", true, "", "--probers=1"},
		{"no kubectl", false, "", "--probers=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, nodeOptions{kubectl: tc.kubectl})
			if tc.nodes != "" {
				n.set("control-plane-nodes", tc.nodes)
			}
			args := append(n.inputs(liveManifest(t), defaultConfig(t), scenario), n.write(filepath.Join(n.src, "probe-key"), "a probe key of 32 bytes or more!", 0o600))
			out, err := n.run(args...)
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			got := regexp.MustCompile(`--probers=[0-9]+`).FindAllString(n.read(n.current()), -1)
			if !slices.Equal(got, []string{tc.want}) {
				t.Errorf("installed manifest has %v, want %s\n%s", got, tc.want, out)
			}
		})
	}
}
