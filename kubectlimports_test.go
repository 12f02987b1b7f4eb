package kns3

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// kubectlPlugin is kubectl kns3's main package.
const kubectlPlugin = "./kubectl-kns3/cmd/kubectl-kns3"

// TestKubectlLinksNoKubernetes keeps kubectl kns3 a client: it reads the
// install through the API server with client-go, and links no package of
// k8s.io/kubernetes, which would bring the scheduler's own code (and its
// size) into a user's kubectl plugin. What it shares with the scheduler
// lives in packages that import none (scheduler/apis/status and the
// shared packages beside the plugins it reads); what needs the
// scheduler's configuration types stays with the plugins (profile).
func TestKubectlLinksNoKubernetes(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("kubectl kns3's dependencies are listed by the go command, which is not on PATH: %v", err)
	}
	if _, err := os.Stat(kubectlPlugin + "/main.go"); errors.Is(err, os.ErrNotExist) {
		// Bazel's runfiles hold the files a test declares, not the tree.
		t.Skipf("the sources of %s are not beside the test: run it with go test", kubectlPlugin)
	}
	cmd := exec.Command(goTool, "list", "-deps", kubectlPlugin)
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("%s: %v\n%s", cmd, err, exitErr.Stderr)
		}
		t.Fatalf("%s: %v", cmd, err)
	}
	var linked []string
	for line := range strings.Lines(string(out)) {
		if pkg := strings.TrimSpace(line); pkg == "k8s.io/kubernetes" || strings.HasPrefix(pkg, "k8s.io/kubernetes/") {
			linked = append(linked, pkg)
		}
	}
	if len(linked) > 0 {
		t.Errorf("kubectl kns3 links %d package(s) of k8s.io/kubernetes (go list -deps %s); move what it shares with the scheduler into a package that imports none:\n%s",
			len(linked), kubectlPlugin, strings.Join(linked, "\n"))
	}
}
