package nodeimage

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"kns3.dev/kns3/build/image/reproducible"
)

// cniImage is the pod network's image, referenced by the CNI manifest.
const cniImage = "kns-3-node-cni:" + recipeVersion

// RedisImage is Debian's Redis server on the node's own userland, preloaded
// for the value benchmark's second workload: no registry is reachable, so a
// real application's image is made from the packages the node is made of.
const RedisImage = "kns-3-redis:" + recipeVersion

// componentImages builds every image kubeadm lists for the release, plus the
// CNI daemon's, into one tarball for containerd to import. It returns the
// tarball, and the sandbox (pause) image's name for containerd's config.
func (b *builder) componentImages(work, bin, rootfsTar string) (string, string, error) {
	out, err := output("", nil, filepath.Join(bin, "kubeadm"), "config", "images", "list",
		"--kubernetes-version", KubernetesVersion)
	if err != nil {
		return "", "", err
	}
	base, err := layerFromFile(rootfsTar)
	if err != nil {
		return "", "", err
	}
	refs := map[name.Reference]v1.Image{}
	pause := ""
	add := func(ref string, img v1.Image) error {
		r, err := name.ParseReference(ref)
		if err != nil {
			return fmt.Errorf("image name %q: %w", ref, err)
		}
		refs[r] = img
		return nil
	}
	for _, ref := range strings.Fields(out) {
		component := filepath.Base(strings.Split(ref, ":")[0])
		var img v1.Image
		switch component {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd":
			img, err = binaryImage(work, bin, component, "/usr/local/bin/"+component, nil)
		case "kube-proxy":
			// kube-proxy runs iptables, nft and conntrack: it gets the
			// node's own Debian userland underneath.
			img, err = binaryImage(work, bin, component, "/usr/local/bin/kube-proxy", base)
		case "coredns":
			img, err = binaryImage(work, bin, component, "/coredns", nil)
		case "pause":
			img, err = binaryImage(work, bin, component, "/pause", nil)
			pause = ref
		default:
			return "", "", fmt.Errorf("kubeadm lists an image this build does not know how to make: %s", ref)
		}
		if err != nil {
			return "", "", err
		}
		if err := add(ref, img); err != nil {
			return "", "", err
		}
	}
	if pause == "" {
		return "", "", fmt.Errorf("kubeadm lists no pause image:\n%s", out)
	}
	cni, err := binaryImage(work, bin, "kns3-cni", "/kns3-cni", nil)
	if err != nil {
		return "", "", err
	}
	if err := add(cniImage, cni); err != nil {
		return "", "", err
	}
	redis, err := reproducible.Image([]v1.Layer{base}, func(c *v1.Config) {
		c.Entrypoint = []string{"/usr/bin/redis-server"}
		c.Env = []string{systemPath}
	})
	if err != nil {
		return "", "", err
	}
	if err := add(RedisImage, redis); err != nil {
		return "", "", err
	}
	tarPath := filepath.Join(work, "images.tar")
	b.progress("images: writing %d images for containerd", len(refs))
	if err := tarball.MultiRefWriteToFile(tarPath, refs); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", tarPath, err)
	}
	return tarPath, pause, nil
}

// binaryImage is an image running one program at path, on top of base when
// given.
func binaryImage(work, bin, prog, path string, base v1.Layer) (v1.Image, error) {
	layerPath := filepath.Join(work, "layer-"+prog+".tar")
	entries := []entry{dir("tmp"), program(strings.TrimPrefix(path, "/"), filepath.Join(bin, prog))}
	if strings.Count(path, "/") > 1 {
		entries = []entry{dir("tmp"), dir("usr"), dir("usr/local"), dir("usr/local/bin"),
			program(strings.TrimPrefix(path, "/"), filepath.Join(bin, prog))}
	}
	if err := writeLayer(layerPath, entries); err != nil {
		return nil, err
	}
	layer, err := layerFromFile(layerPath)
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{layer}
	if base != nil {
		layers = []v1.Layer{base, layer}
	}
	return reproducible.Image(layers, func(c *v1.Config) {
		c.Entrypoint = []string{path}
		c.Env = []string{systemPath}
	})
}
