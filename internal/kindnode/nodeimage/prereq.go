package nodeimage

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// checkPrerequisites names every missing tool at once, with how to get it.
func checkPrerequisites() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root: debootstrap and the image store need it (run as root)")
	}
	for tool, hint := range map[string]string{
		"debootstrap": "apt-get install debootstrap",
		"tar":         "apt-get install tar",
		"docker":      "apt-get install docker.io (hack/dockerhost/setup.sh does it)",
		"containerd":  "apt-get install containerd (comes with docker.io)",
		"ctr":         "apt-get install containerd (comes with docker.io)",
	} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, fmt.Sprintf("%s: not on PATH; %s", tool, hint))
		}
	}
	if _, err := goTool(); err != nil {
		missing = append(missing, err.Error())
	}
	if len(missing) == 0 {
		if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
			missing = append(missing, fmt.Sprintf("dockerd: not reachable (%s); start it, e.g. hack/dockerhost/setup.sh",
				strings.TrimSpace(string(out))))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("cannot build the node image:\n  - %s", strings.Join(missing, "\n  - "))
	}
	return nil
}
