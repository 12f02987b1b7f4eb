package kindenv

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kns3.dev/kns3"
)

// kns3Image says whether image is one KNS-3 builds (kns-3-scheduler,
// kns-3-simulator; build/image names them), with or without a tag.
func kns3Image(image string) bool {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	return strings.HasPrefix(filepath.Base(name), "kns-3-")
}

// imageTag is image's tag, "" when it has none.
func imageTag(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[i+1:]
	}
	return ""
}

// images collects every container image a rendered object names, by path.
func images(obj any, path string, out map[string]string) {
	switch v := obj.(type) {
	case map[string]any:
		for k, child := range v {
			if s, ok := child.(string); ok && k == "image" {
				out[path+"."+k] = s
				continue
			}
			images(child, path+"."+k, out)
		}
	case []any:
		for i, child := range v {
			name := ""
			if m, ok := child.(map[string]any); ok {
				name, _ = m["name"].(string)
			}
			if name == "" {
				name = strconv.Itoa(i)
			}
			images(child, path+"["+name+"]", out)
		}
	}
}

// Every KNS-3 image the manifests deploy must carry the release's tag: the
// demo and the kind suite load images tagged v<VERSION>, and nothing can be
// pulled (imagePullPolicy IfNotPresent/Never), so a stale tag leaves the
// pods in ImagePullBackOff.
func TestRenderedImagesCarryTheRelease(t *testing.T) {
	for _, dir := range []string{deployDir(t), filepath.Join(deployDir(t), "ha"), filepath.Join(deployDir(t), "live"), filepath.Join(deployDir(t), "sample"),
		filepath.Join(deployDir(t), "control-plane"), filepath.Join(deployDir(t), "live", "control-plane"), filepath.Join(deployDir(t), "live", "control-plane", "agents")} {
		objs, err := Render(dir)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]string{}
		for _, o := range objs {
			images(o.Object, o.GetKind()+"/"+o.GetName(), found)
		}
		var paths []string
		for p := range found {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		n := 0
		for _, p := range paths {
			image := found[p]
			if !kns3Image(image) {
				continue
			}
			n++
			if tag := imageTag(image); tag != kns3.Version {
				t.Errorf("%s: %s is %s, want tag %s (VERSION): set newTag in %s",
					dir, p, image, kns3.Version, filepath.Join(dir, "kustomization.yaml"))
			}
		}
		if n == 0 {
			t.Errorf("%s renders no KNS-3 image (images found: %v)", dir, found)
		}
	}
}

func TestImageName(t *testing.T) {
	for _, tt := range []struct {
		image string
		kns3  bool
		tag   string
	}{
		{"kns-3-scheduler:v0.2.0", true, "v0.2.0"},
		{"kns-3-simulator", true, ""},
		{"localhost:5000/kns-3-simulator:v1", true, "v1"},
		{"localhost:5000/kns-3-simulator", true, ""},
		{"kns-3-simulator@sha256:abc", true, ""},
		{"localhost:5000/pause:3.10", false, "3.10"},
	} {
		if got := kns3Image(tt.image); got != tt.kns3 {
			t.Errorf("kns3Image(%q) = %v, want %v", tt.image, got, tt.kns3)
		}
		if got := imageTag(tt.image); got != tt.tag {
			t.Errorf("imageTag(%q) = %q, want %q", tt.image, got, tt.tag)
		}
	}
}
