package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestRunWritesALoadableImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, staticELF(), 0o755); err != nil {
		t.Fatal(err)
	}
	version := filepath.Join(dir, "VERSION")
	if err := os.WriteFile(version, []byte("1.2.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	if err := run([]string{"--binary", bin, "--name", "kns-3-thing", "--version-file", version, "--output", out}); err != nil {
		t.Fatal(err)
	}

	// docker load reads manifest.json's RepoTags.
	manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(out) })
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 || manifest[0].RepoTags[0] != "kns-3-thing:v1.2.3" {
		t.Fatalf("RepoTags = %+v, want [kns-3-thing:v1.2.3]", manifest)
	}

	tag, _ := name.NewTag("kns-3-thing:v1.2.3")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want non-root 65532:65532", cfg.Config.User)
	}
	if got := cfg.Config.Labels["org.opencontainers.image.version"]; got != "v1.2.3" {
		t.Errorf("version label %q", got)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/kns-3-thing" {
		t.Errorf("entrypoint %v", cfg.Config.Entrypoint)
	}

	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, err %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
	}
	if h := files["kns-3-thing"]; h == nil || h.Mode != 0o755 || h.Size != int64(len(staticELF())) {
		t.Errorf("binary entry %+v", h)
	}
	if files["etc/passwd"] == nil || files["tmp/"] == nil {
		t.Errorf("missing passwd or /tmp: %v", files)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(bin, []byte("same"), 0o755); err != nil {
		t.Fatal(err)
	}
	digest := func() string {
		img, err := build(spec{binary: bin, name: "p", version: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("digests differ: %s %s", a, b)
	}
}

func TestRunRequiresFlags(t *testing.T) {
	if err := run([]string{"--name", "x"}); err == nil {
		t.Error("want an error for missing flags")
	}
}
