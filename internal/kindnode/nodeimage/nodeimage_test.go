package nodeimage

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMirrorFromLine(t *testing.T) {
	tests := []struct{ line, want string }{
		{"URIs: http://mirror.example/debian", "http://mirror.example/debian"},
		{"URIs: http://mirror.example/debian-security", ""},
		{"deb http://mirror.example/debian bookworm main", "http://mirror.example/debian"},
		{"deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main", "http://mirror.example/debian"},
		{"# deb http://mirror.example/debian bookworm main", ""},
		{"Suites: bookworm", ""},
	}
	for _, tt := range tests {
		if got := mirrorFromLine(tt.line); got != tt.want {
			t.Errorf("mirrorFromLine(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestVersionFlagsStampBothPackages(t *testing.T) {
	flags := versionFlags("v1.37.2")
	for _, want := range []string{
		"k8s.io/component-base/version.gitVersion=v1.37.2",
		"k8s.io/client-go/pkg/version.gitVersion=v1.37.2",
		"k8s.io/component-base/version.gitMajor=1",
		"k8s.io/component-base/version.gitMinor=37",
		"k8s.io/client-go/pkg/version.gitMinor=37",
	} {
		if !strings.Contains(flags, want) {
			t.Errorf("versionFlags() = %q lacks %q", flags, want)
		}
	}
}

// The image name must change with any input file and only then.
func TestHashFollowsInputs(t *testing.T) {
	modules, kind := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(modules, "kubernetes/go.mod", "module a\n")
	write(kind, "images/base/files/usr/local/bin/entrypoint", "#!/bin/sh\n")
	o := &Options{ModulesDir: modules, KindDir: kind}
	hash := func() string {
		t.Helper()
		h, err := inputsHash(o, "go1.26.8")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := hash()
	if again := hash(); again != first {
		t.Fatalf("same inputs, different hashes: %s %s", first, again)
	}
	write(modules, "BUILD.bazel", "filegroup()\n")
	if h := hash(); h != first {
		t.Errorf("a BUILD.bazel file changed the hash")
	}
	write(modules, "kubernetes/go.mod", "module b\n")
	second := hash()
	if second == first {
		t.Errorf("changing a module file kept the hash")
	}
	write(kind, "images/base/files/usr/local/bin/entrypoint", "#!/bin/bash\n")
	if h := hash(); h == second {
		t.Errorf("changing a kind base file kept the hash")
	}
	if h, _ := inputsHash(o, "go1.27.0"); h == hash() {
		t.Errorf("a different Go version kept the hash")
	}

	// The same tree seen through symlinks (Bazel's runfiles) hashes the same.
	links := t.TempDir()
	if err := os.MkdirAll(filepath.Join(links, "kubernetes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubernetes/go.mod", "BUILD.bazel"} {
		if err := os.Symlink(filepath.Join(modules, name), filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	viaLinks := &Options{ModulesDir: links, KindDir: kind}
	if h, _ := inputsHash(viaLinks, "go1.26.8"); h != hash() {
		t.Errorf("the modules seen through symlinks hash differently")
	}
}

func TestWriteLayerIsReproducible(t *testing.T) {
	tmp := t.TempDir()
	entries := []entry{dir("etc"), file("etc/a", []byte("x")), symlink("etc/b", "/etc/a"), script("etc/c", []byte("#!"))}
	sum := func(name string) [32]byte {
		p := filepath.Join(tmp, name)
		if err := writeLayer(p, entries); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(data)
	}
	if sum("1.tar") != sum("2.tar") {
		t.Error("the same entries gave different layers")
	}
}

func TestRecipeHashIgnoresTests(t *testing.T) {
	fsys := fstest.MapFS{
		"build.go":      {Data: []byte("package nodeimage")},
		"build_test.go": {Data: []byte("package nodeimage // v1")},
	}
	sum := func() string {
		h := sha256.New()
		if err := hashFS(h, "recipe", fsys, "."); err != nil {
			t.Fatal(err)
		}
		return string(h.Sum(nil))
	}
	first := sum()
	fsys["build_test.go"] = &fstest.MapFile{Data: []byte("package nodeimage // v2")}
	if sum() != first {
		t.Error("a test file changed the recipe hash")
	}
	fsys["build.go"] = &fstest.MapFile{Data: []byte("package nodeimage // changed")}
	if sum() == first {
		t.Error("a recipe change kept the hash")
	}
}
