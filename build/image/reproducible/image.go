// Package reproducible builds container images whose digest depends only on
// their inputs: the KNS-3 images and the kind node image share it.
package reproducible

import (
	"embed"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Source is this package's code, for image recipes whose name hashes
// everything that shapes the image.
//
//go:embed *.go
var Source embed.FS

// Image stacks layers into a linux/amd64 image created at the Unix epoch and
// lets set fill in the run configuration.
func Image(layers []v1.Layer, set func(*v1.Config)) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	set(&cfg.Config)
	return mutate.ConfigFile(img, cfg)
}
