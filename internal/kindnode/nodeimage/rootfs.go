package nodeimage

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// debianPackages are what the node runs on: systemd as init, containerd and
// runc, the CNI plugins, the tools kubelet, kube-proxy and kubeadm call, and
// curl, which deploy/control-plane/install.sh probes the new scheduler with;
// and redis-server, which RedisImage runs (the node never starts it).
var debianPackages = []string{
	"systemd", "dbus", "containerd", "runc", "containernetworking-plugins",
	"iptables", "nftables", "conntrack", "iproute2", "ethtool", "ebtables", "socat",
	"util-linux", "mount", "kmod", "libseccomp2", "pigz", "bash", "ca-certificates",
	"jq", "procps", "e2fsprogs", "curl", "redis-server",
}

// baseRootFS returns a tarball of the node's Debian root file system,
// bootstrapping it from the host's apt mirror unless the same package list was
// bootstrapped before.
func (b *builder) baseRootFS() (string, error) {
	h := sha256.Sum256([]byte(debianSuite + " " + strings.Join(debianPackages, ",") + " " + recipeVersion))
	out := filepath.Join(b.opts.CacheDir, "rootfs-"+hex.EncodeToString(h[:])[:16]+".tar")
	if _, err := os.Stat(out); err == nil {
		b.progress("root file system: reusing %s", out)
		return out, nil
	}
	mirror, err := aptMirror()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(b.opts.CacheDir, "rootfs-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	b.progress("root file system: debootstrap %s (%d packages) from the host's apt mirror", debianSuite, len(debianPackages))
	if err := run("", nil, "debootstrap", "--variant=minbase", "--components=main",
		"--include="+strings.Join(debianPackages, ","), debianSuite, dir, mirror); err != nil {
		return "", fmt.Errorf("debootstrap: %w", err)
	}
	if err := trimForContainer(dir); err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	if err := tarDir(dir, tmp); err != nil {
		return "", err
	}
	b.progress("root file system: ready")
	return out, os.Rename(tmp, out)
}

// trimForContainer does what kind's base image does after installing
// packages: no services but the node's own start at boot, systemd may not
// read the kernel log, and apt has no sources (the node never installs).
func trimForContainer(root string) error {
	globs := []string{
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"lib/systemd/system/multi-user.target.wants/*",
		"etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*",
		"lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*",
		"lib/systemd/system/basic.target.wants/*",
		"etc/apt/sources.list.d/*",
		"var/lib/apt/lists/*",
		"var/cache/apt/archives/*.deb",
		"var/log/*.log",
	}
	for _, g := range globs {
		matches, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc/apt/sources.list"), nil, 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(root, "etc/systemd/journald.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("ReadKMsg=no\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	initPath := filepath.Join(root, "sbin/init")
	_ = os.Remove(initPath)
	return os.Symlink("/usr/lib/systemd/systemd", initPath)
}

// aptMirror is the first Debian archive the host's apt sources name, so the
// node is built from the same mirror the host installs from.
func aptMirror() (string, error) {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	files = append(files, "/etc/apt/sources.list")
	files = append(files, globOrNil("/etc/apt/sources.list.d/*.list")...)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := mirrorFromLine(sc.Text()); m != "" {
				f.Close()
				return m, nil
			}
		}
		f.Close()
	}
	return "", fmt.Errorf("no Debian archive found in /etc/apt/sources.list or /etc/apt/sources.list.d: debootstrap needs one")
}

// mirrorFromLine reads a mirror from a deb822 "URIs:" line or a one-line
// "deb URI suite ..." entry; security archives are skipped.
func mirrorFromLine(line string) string {
	line = strings.TrimSpace(line)
	var uri string
	switch {
	case strings.HasPrefix(line, "URIs:"):
		fields := strings.Fields(strings.TrimPrefix(line, "URIs:"))
		if len(fields) > 0 {
			uri = fields[0]
		}
	case strings.HasPrefix(line, "deb "):
		for _, f := range strings.Fields(line)[1:] {
			if !strings.HasPrefix(f, "[") && !strings.HasSuffix(f, "]") {
				uri = f
				break
			}
		}
	}
	if uri == "" || strings.Contains(uri, "security") {
		return ""
	}
	return uri
}

func globOrNil(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// tarDir writes dir's tree as a tar file, owners numeric, extended
// attributes (file capabilities) kept.
func tarDir(dir, out string) error {
	return run("", nil, "tar", "--numeric-owner", "--xattrs", "--xattrs-include=*",
		"-C", dir, "-cf", out, ".")
}
