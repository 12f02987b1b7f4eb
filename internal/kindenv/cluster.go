package kindenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupRoot is where the host mounts its cgroup hierarchies.
const cgroupRoot = "/sys/fs/cgroup"

// DeleteCluster deletes the kind cluster name, if it exists.
//
// A node container can refuse to die. When it is killed while runc inside it
// has frozen a pod's cgroup (runc freezes one while it applies cgroup
// settings), the frozen task never acts on SIGKILL, and Docker gives up with
// "did not receive an exit event". The node stays, and the next cluster of
// that name cannot be created. DeleteCluster then thaws whatever is frozen
// under the cluster's node containers and tries again.
func DeleteCluster(ctx context.Context, kind, name string) error {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		out, runErr := exec.CommandContext(ctx, kind, "delete", "cluster", "--name", name).CombinedOutput()
		if runErr == nil {
			return nil
		}
		err = fmt.Errorf("kind delete cluster --name %s (attempt %d): %w\n%s", name, attempt, runErr, out)
		thawed, thawErr := thawNodes(ctx, name)
		if thawErr != nil {
			return errors.Join(err, thawErr)
		}
		if thawed == 0 {
			return err
		}
	}
	return err
}

// thawNodes thaws every frozen cgroup below the cluster's running node
// containers and returns how many it thawed.
func thawNodes(ctx context.Context, cluster string) (int, error) {
	out, err := exec.CommandContext(ctx, "docker", "ps", "-q", "--filter", "label=io.x-k8s.kind.cluster="+cluster).Output()
	if err != nil {
		return 0, fmt.Errorf("listing the nodes of cluster %s: %w", cluster, err)
	}
	thawed := 0
	for _, id := range strings.Fields(string(out)) {
		pidOut, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Pid}}", id).Output()
		if err != nil {
			return thawed, fmt.Errorf("inspecting node container %s: %w", id, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(pidOut)))
		if err != nil || pid == 0 {
			continue
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil {
			continue // the node exited meanwhile
		}
		dirs := freezerDirs(f, cgroupRoot)
		f.Close()
		for _, dir := range dirs {
			n, err := thawTree(dir)
			thawed += n
			if err != nil {
				return thawed, fmt.Errorf("thawing node container %s: %w", id, err)
			}
		}
	}
	return thawed, nil
}

// freezerDirs returns the directories that freeze a process, from its
// /proc/<pid>/cgroup: the freezer hierarchy's (cgroup v1) or the unified
// one's (cgroup v2).
func freezerDirs(procCgroup io.Reader, root string) []string {
	var dirs []string
	sc := bufio.NewScanner(procCgroup)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			dirs = append(dirs, filepath.Join(root, parts[2]))
		case parts[1] == "freezer":
			dirs = append(dirs, filepath.Join(root, "freezer", parts[2]))
		}
	}
	return dirs
}

// thawTree thaws every frozen cgroup at or below dir: freezer.state FROZEN
// (v1) or cgroup.freeze 1 (v2).
func thawTree(dir string) (int, error) {
	thawed := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // cgroups come and go while we walk
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		var want string
		var frozen func(string) bool
		switch d.Name() {
		case "freezer.state":
			want, frozen = "THAWED", func(s string) bool { return s == "FROZEN" || s == "FREEZING" }
		case "cgroup.freeze":
			want, frozen = "0", func(s string) bool { return s == "1" }
		default:
			return nil
		}
		state, err := os.ReadFile(path)
		if err != nil || !frozen(strings.TrimSpace(string(state))) {
			return nil
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			return fmt.Errorf("thawing %s: %w", filepath.Dir(path), err)
		}
		thawed++
		return nil
	})
	return thawed, err
}
