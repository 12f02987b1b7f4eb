package kns3

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// The files below restate a version that cannot be read from its source
// where they are used. Paths are relative to the repository root, where go
// test runs this package and where Bazel's runfiles put the test's data.

// schedulerBuild stamps the Kubernetes release into the Bazel-built
// scheduler (x_defs take literals only; the Makefile asks go list).
const schedulerBuild = "scheduler/cmd/kns-3-scheduler/BUILD.bazel"

// nodeModule builds the kind node's Kubernetes programs. It is a module of
// its own, so it requires the Kubernetes release again.
const nodeModule = "internal/kindnode/modules/kubernetes/go.mod"

// moduleBazel names the release for Bazel's module registry.
const moduleBazel = "MODULE.bazel"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestModuleVersion(t *testing.T) {
	const gomod = `module example.com/m

go 1.26.0

require (
	example.com/plain v1.2.3
	example.com/replaced v0.0.0
	example.com/other v1.0.0
)

require example.com/single v0.4.0 // indirect

replace (
	example.com/replaced => example.com/replaced v0.37.2
	example.com/other v0.9.0 => example.com/other v0.9.1
	example.com/local => ../local
)
`
	for _, tt := range []struct{ path, want string }{
		{"example.com/plain", "v1.2.3"},
		{"example.com/replaced", "v0.37.2"},
		{"example.com/other", "v1.0.0"}, // the replace is for another version
		{"example.com/single", "v0.4.0"},
		{"example.com/missing", ""},
	} {
		got, err := ModuleVersion([]byte(gomod), tt.path)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("ModuleVersion(%s) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}

func TestGoModVersions(t *testing.T) {
	for name, v := range map[string]string{"KubernetesVersion": KubernetesVersion, "KindVersion": KindVersion} {
		if !semver.IsValid(v) || semver.Prerelease(v) != "" {
			t.Errorf("%s = %q, want a release version from go.mod", name, v)
		}
	}
	if onDisk := readFile(t, "go.mod"); string(onDisk) != string(goMod) {
		t.Errorf("the embedded go.mod differs from go.mod")
	}
}

// majorMinor splits v1.37.2 into "1" and "37", as Kubernetes' own version
// stamp does.
func majorMinor(v string) (string, string) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return "", ""
	}
	return parts[0], parts[1]
}

// schedulerBinary is the scheduler Bazel built from schedulerBuild. Bazel
// passes it (BUILD files cannot be data of another package); go test reads
// schedulerBuild itself.
var schedulerBinary = flag.String("scheduler-binary", "", "the kns-3-scheduler binary Bazel built, to read its version stamp from")

const versionPkg = "k8s.io/component-base/version"

func TestSchedulerBuildStampsGoModKubernetes(t *testing.T) {
	var got map[string]string
	var where string
	if *schedulerBinary != "" {
		var err error
		if got, err = stampedStrings(*schedulerBinary, versionPkg+".gitVersion", versionPkg+".gitMajor", versionPkg+".gitMinor"); err != nil {
			t.Fatal(err)
		}
		where = "the scheduler Bazel built from " + schedulerBuild
	} else {
		xdef := regexp.MustCompile(`"(` + regexp.QuoteMeta(versionPkg) + `\.\w+)":\s*"([^"]*)"`)
		got = map[string]string{}
		for _, m := range xdef.FindAllStringSubmatch(string(readFile(t, schedulerBuild)), -1) {
			got[m[1]] = m[2]
		}
		where = schedulerBuild
	}
	major, minor := majorMinor(KubernetesVersion)
	for field, want := range map[string]string{"gitVersion": KubernetesVersion, "gitMajor": major, "gitMinor": minor} {
		if v := got[versionPkg+"."+field]; v != want {
			t.Errorf("%s: x_defs stamp %s.%s = %q, want %q (go.mod requires k8s.io/kubernetes %s)",
				where, versionPkg, field, v, want, KubernetesVersion)
		}
	}
}

// stampedStrings reads the string variables named (package path.name) from
// a Go executable's symbol table and data, where the linker's -X put them.
func stampedStrings(path string, names ...string) (map[string]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	read := func(addr, n uint64) ([]byte, error) {
		for _, s := range f.Sections {
			if s.Type != elf.SHT_NOBITS && s.Addr <= addr && addr+n <= s.Addr+s.Size {
				b := make([]byte, n)
				_, err := s.ReadAt(b, int64(addr-s.Addr))
				return b, err
			}
		}
		return nil, fmt.Errorf("%s: address %#x is in no section", path, addr)
	}
	word := uint64(8)
	if f.Class == elf.ELFCLASS32 {
		word = 4
	}
	integer := func(b []byte) uint64 {
		if word == 4 {
			return uint64(f.ByteOrder.Uint32(b))
		}
		return f.ByteOrder.Uint64(b)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]string{}
	for _, sym := range syms {
		if !want[sym.Name] {
			continue
		}
		// A string variable is its header: data pointer, then length.
		header, err := read(sym.Value, 2*word)
		if err != nil {
			return nil, err
		}
		data, err := read(integer(header[:word]), integer(header[word:]))
		if err != nil {
			return nil, err
		}
		out[sym.Name] = string(data)
	}
	return out, nil
}

func TestNodeModuleFollowsGoMod(t *testing.T) {
	nested := readFile(t, nodeModule)
	got, err := ModuleVersion(nested, "k8s.io/kubernetes")
	if err != nil {
		t.Fatalf("%s: %v", nodeModule, err)
	}
	if got != KubernetesVersion {
		t.Errorf("%s requires k8s.io/kubernetes %s, go.mod %s: the node would run another Kubernetes than KNS-3 is built on",
			nodeModule, got, KubernetesVersion)
	}

	// Kubernetes' staging modules (k8s.io/api, k8s.io/client-go, ...) are
	// pinned by replace directives: the node's must be go.mod's.
	replaces := func(data []byte, file string) map[string]string {
		f, err := modfile.Parse(file, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range f.Replace {
			if strings.HasPrefix(r.Old.Path, "k8s.io/") {
				m[r.Old.Path] = r.New.Path + " " + r.New.Version
			}
		}
		return m
	}
	root, node := replaces(goMod, "go.mod"), replaces(nested, nodeModule)
	for path, want := range root {
		if node[path] != want {
			t.Errorf("%s: replace %s => %q, go.mod => %q", nodeModule, path, node[path], want)
		}
	}
	for path, got := range node {
		if _, ok := root[path]; !ok {
			t.Errorf("%s: replace %s => %q, which go.mod does not replace", nodeModule, path, got)
		}
	}

	// crictl follows Kubernetes' minor releases.
	crictl, err := ModuleVersion(nested, "sigs.k8s.io/cri-tools")
	if err != nil {
		t.Fatalf("%s: %v", nodeModule, err)
	}
	if semver.MajorMinor(crictl) != semver.MajorMinor(KubernetesVersion) {
		t.Errorf("%s requires sigs.k8s.io/cri-tools %s, want %s.x for Kubernetes %s",
			nodeModule, crictl, semver.MajorMinor(KubernetesVersion), KubernetesVersion)
	}
}

// TestSharedModulesAgree holds the two modules to one version of every
// module both require. The node image's programs and KNS-3's own builds then
// compile the same packages with the same flags, so the Go build cache
// compiles Kubernetes once for both (docs/development.md, CI and caches).
func TestSharedModulesAgree(t *testing.T) {
	nested := readFile(t, nodeModule)
	f, err := modfile.Parse(nodeModule, nested, nil)
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, r := range f.Require {
		want, err := ModuleVersion(goMod, r.Mod.Path)
		if err != nil {
			continue // go.mod does not require it
		}
		shared++
		got, err := ModuleVersion(nested, r.Mod.Path)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s requires %s %s, go.mod %s: the two builds would compile it and everything above it twice",
				nodeModule, r.Mod.Path, got, want)
		}
	}
	if shared < 100 {
		t.Errorf("the modules share %d requirements; Kubernetes alone brings more: is %s still the node's module?", shared, nodeModule)
	}
}

func TestModuleBazelNamesTheRelease(t *testing.T) {
	m := regexp.MustCompile(`(?s)\bmodule\((.*?)\)`).FindSubmatch(readFile(t, moduleBazel))
	if m == nil {
		t.Fatalf("%s has no module()", moduleBazel)
	}
	v := regexp.MustCompile(`\bversion\s*=\s*"([^"]*)"`).FindSubmatch(m[1])
	if v == nil {
		t.Fatalf("%s: module() has no version", moduleBazel)
	}
	if got := "v" + string(v[1]); got != Version {
		t.Errorf("%s: module(version = %q), VERSION says %s", moduleBazel, v[1], strings.TrimPrefix(Version, "v"))
	}
}
