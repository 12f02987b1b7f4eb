package nodeimage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// pinnedLabel keeps kubelet's image garbage collection off the preloaded
// images: nothing can pull them again.
const pinnedLabel = "io.cri-containerd.pinned=pinned"

// preload imports the image tarball into a containerd image store under
// root, as the node's containerd will find it in /var/lib/containerd. It runs
// a private containerd (the host's binary) with only its image store in use.
func (b *builder) preload(imagesTar, root string) error {
	state, err := os.MkdirTemp("", "kns3-ctr-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	sock := filepath.Join(state, "containerd.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, root, filepath.Join(state, "state"), sock, sock+".ttrpc")
	configPath := filepath.Join(state, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return err
	}
	logPath := filepath.Join(state, "containerd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	daemon := exec.Command("containerd", "--config", configPath)
	daemon.Stdout, daemon.Stderr = logFile, logFile
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := daemon.Start(); err != nil {
		return fmt.Errorf("starting a private containerd: %w", err)
	}
	defer func() {
		_ = daemon.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- daemon.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = daemon.Process.Kill()
			<-done
		}
	}()
	ctr := func(args ...string) (string, error) {
		return output("", nil, "ctr", append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)...)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := ctr("version"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("private containerd did not answer on %s within 30 s:\n%s", sock, tail(log, 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.progress("preload: importing images into the node's containerd store")
	if _, err := ctr("images", "import", "--all-platforms", "--no-unpack", "--digests", imagesTar); err != nil {
		return err
	}
	list, err := ctr("images", "list", "--quiet")
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(list) {
		if _, err := ctr("images", "label", ref, pinnedLabel); err != nil {
			return err
		}
	}
	return nil
}
