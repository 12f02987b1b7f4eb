package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"kns3.dev/kns3/build/image/reproducible"
)

// nonRoot is the uid and gid the binary runs as, the usual "nonroot" of
// distroless images.
const nonRoot = 65532

// spec describes an image holding one static binary.
type spec struct {
	binary  string // path of the binary on disk
	name    string // the binary's name in the image: /<name>
	version string
	labels  map[string]string
}

// build assembles the image: a single layer with the binary, a passwd entry
// for the non-root user and a writable /tmp. Timestamps are fixed so equal
// inputs give equal digests.
func build(s spec) (v1.Image, error) {
	bin, err := os.ReadFile(s.binary)
	if err != nil {
		return nil, fmt.Errorf("reading binary: %w", err)
	}
	layerTar, err := layerTar(s.name, bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("making layer: %w", err)
	}
	img, err := reproducible.Image([]v1.Layer{layer}, func(c *v1.Config) {
		c.Entrypoint = []string{"/" + s.name}
		c.User = fmt.Sprintf("%d:%d", nonRoot, nonRoot)
		c.WorkingDir = "/"
		c.Env = []string{"PATH=/"}
		c.Labels = map[string]string{
			"org.opencontainers.image.title":   s.name,
			"org.opencontainers.image.version": s.version,
		}
		for k, v := range s.labels {
			c.Labels[k] = v
		}
	})
	if err != nil {
		return nil, fmt.Errorf("assembling image: %w", err)
	}
	return img, nil
}

func layerTar(name string, bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonRoot, nonRoot)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonRoot)
	entries := []struct {
		hdr  tar.Header
		data []byte
	}{
		{tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}, nil},
		{tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644}, []byte(passwd)},
		{tar.Header{Name: "etc/group", Typeflag: tar.TypeReg, Mode: 0o644}, []byte(group)},
		{tar.Header{Name: "home/", Typeflag: tar.TypeDir, Mode: 0o755}, nil},
		{tar.Header{Name: "home/nonroot/", Typeflag: tar.TypeDir, Mode: 0o700, Uid: nonRoot, Gid: nonRoot}, nil},
		{tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}, nil},
		{tar.Header{Name: path.Clean(name), Typeflag: tar.TypeReg, Mode: 0o755}, bin},
	}
	for _, e := range entries {
		h := e.hdr
		h.Size = int64(len(e.data))
		h.ModTime = epoch
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			return nil, fmt.Errorf("writing %s: %w", h.Name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("writing %s: %w", h.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
