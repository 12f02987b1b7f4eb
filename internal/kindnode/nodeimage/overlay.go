package nodeimage

import (
	"bytes"
	"os"
	"path/filepath"
	"text/template"
)

func kindFilesDir(o *Options) string { return filepath.Join(o.KindDir, "images", "base", "files") }

// overlay is what goes on top of the Debian root file system: kind's base
// files, the Kubernetes node programs, the node's containerd configuration,
// the manifests kind applies after kubeadm init, and the enabled services.
func (b *builder) overlay(bin, sandboxImage string) ([]entry, error) {
	kind := kindFilesDir(&b.opts)
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(kind, rel)) }
	fromKind := func(rel string, mode int64) (entry, error) {
		data, err := read(rel)
		return entry{name: rel, mode: mode, data: data}, err
	}
	values := struct{ SandboxImage, CNIImage string }{sandboxImage, cniImage}
	containerd, err := render("files/containerd.toml", values)
	if err != nil {
		return nil, err
	}
	cni, err := render("files/default-cni.yaml", values)
	if err != nil {
		return nil, err
	}
	storage, err := recipe.ReadFile("files/default-storage.yaml")
	if err != nil {
		return nil, err
	}
	kubeletEnv, err := recipe.ReadFile("files/kubelet.env")
	if err != nil {
		return nil, err
	}
	entries := []entry{
		dir("kind"), dir("kind/bin"), dir("kind/manifests"),
		file("kind/version", []byte(KubernetesVersion+"\n")),
		file("kind/manifests/default-cni.yaml", cni),
		file("kind/manifests/default-storage.yaml", storage),
		dir("etc/kubernetes"), dir("etc/kubernetes/manifests"),
		dir("etc/containerd"), file("etc/containerd/config.toml", containerd),
		file("etc/default/kubelet", kubeletEnv),
		dir("etc/cni"), dir("etc/cni/net.d"),
		dir("etc/systemd/system/kubelet.service.d"),
		dir("etc/systemd/system/multi-user.target.wants"),
		symlink("etc/systemd/system/multi-user.target.wants/kubelet.service", "/etc/systemd/system/kubelet.service"),
		symlink("etc/systemd/system/multi-user.target.wants/containerd.service", "/etc/systemd/system/containerd.service"),
		symlink("etc/systemd/system/multi-user.target.wants/undo-mount-hacks.service", "/etc/systemd/system/undo-mount-hacks.service"),
		symlink("etc/systemd/system/systemd-binfmt.service", "/dev/null"),
		// kind's containerd unit starts /usr/local/bin/containerd; Debian's is in /usr/bin.
		symlink("usr/local/bin/containerd", "/usr/bin/containerd"),
		program("usr/bin/kubelet", filepath.Join(bin, "kubelet")),
		program("usr/bin/kubeadm", filepath.Join(bin, "kubeadm")),
		program("usr/bin/kubectl", filepath.Join(bin, "kubectl")),
		program("usr/local/bin/crictl", filepath.Join(bin, "crictl")),
	}
	for _, f := range []struct {
		rel  string
		mode int64
	}{
		{"usr/local/bin/entrypoint", 0o755},
		{"usr/local/bin/clean-install", 0o755},
		{"kind/bin/create-kubelet-cgroup-v2.sh", 0o755},
		{"kind/bin/mount-product-files.sh", 0o755},
		{"kind/bin/undo-mount-hacks.sh", 0o755},
		{"etc/crictl.yaml", 0o644},
		{"etc/sysctl.d/10-network-magic.conf", 0o644},
		{"etc/sysctl.d/10-network-security.conf", 0o644},
		{"etc/systemd/system/containerd.service", 0o644},
		{"etc/systemd/system/kubelet.service", 0o644},
		{"etc/systemd/system/kubelet.slice", 0o644},
		{"etc/systemd/system/undo-mount-hacks.service", 0o644},
		{"etc/systemd/system/kubelet.service.d/10-kubeadm.conf", 0o644},
		{"etc/systemd/system/kubelet.service.d/11-kind.conf", 0o644},
	} {
		e, err := fromKind(f.rel, f.mode)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func render(name string, values any) ([]byte, error) {
	text, err := recipe.ReadFile(name)
	if err != nil {
		return nil, err
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, values); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
