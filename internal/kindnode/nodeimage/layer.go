package nodeimage

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// entry is one file, directory or symlink of a layer written by this package.
type entry struct {
	name   string // path without the leading slash; directories end in /
	mode   int64
	data   []byte // regular files
	from   string // regular files: read from this path instead of data
	target string // symlinks
}

func dir(name string) entry                 { return entry{name: strings.TrimSuffix(name, "/") + "/", mode: 0o755} }
func file(name string, data []byte) entry   { return entry{name: name, mode: 0o644, data: data} }
func program(name, from string) entry       { return entry{name: name, mode: 0o755, from: from} }
func symlink(name, target string) entry     { return entry{name: name, target: target} }
func script(name string, data []byte) entry { return entry{name: name, mode: 0o755, data: data} }

// writeLayer writes entries as an uncompressed tar file, owned by root, with
// a fixed time so equal inputs give equal layers.
func writeLayer(path string, entries []entry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	epoch := time.Unix(0, 0)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX}
		data := e.data
		switch {
		case e.target != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.target, 0o777
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag = tar.TypeReg
			if e.from != "" {
				if data, err = os.ReadFile(e.from); err != nil {
					f.Close()
					return err
				}
			}
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", e.name, err)
		}
		if _, err := tw.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// systemPath is the PATH of the node and of its component images.
const systemPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// layerFromFile wraps a tar file; gzip at the fastest level, since the layers
// only travel to the local Docker and containerd.
func layerFromFile(path string) (v1.Layer, error) {
	return tarball.LayerFromFile(path, tarball.WithCompressionLevel(gzip.BestSpeed))
}
