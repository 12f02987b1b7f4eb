package kns3

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// pluginsDir holds the scheduler's plugins, one folder each, and beside
// them the packages they share. The plugins are the folders the registry
// (the package of pluginsDir itself) imports.
const pluginsDir = "scheduler/plugins"

// TestPluginsImportNoOtherPlugin keeps shared code beside the plugins: a
// package of one plugin (its folder and the folders under it) imports
// shared packages, never a package of another plugin; a shared package,
// tests included, imports no plugin at all. Only the registry imports them
// all, and a plugin's tests may assemble a profile of several plugins, as
// the scheduler runs them, to check what they do together.
func TestPluginsImportNoOtherPlugin(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the plugins' imports are listed by the go command, which is not on PATH: %v", err)
	}
	if _, err := os.Stat(pluginsDir + "/registry.go"); errors.Is(err, os.ErrNotExist) {
		// Bazel's runfiles hold the files a test declares, not the tree.
		t.Skipf("the sources of %s are not beside the test: run it with go test", pluginsDir)
	}
	cmd := exec.Command(goTool, "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} | {{join .TestImports " "}} {{join .XTestImports " "}}`, "./"+pluginsDir+"/...")
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("%s: %v\n%s", cmd, err, exitErr.Stderr)
		}
		t.Fatalf("%s: %v", cmd, err)
	}
	// imports are each package's own imports, testImports its tests'.
	imports, testImports := map[string][]string{}, map[string][]string{}
	for line := range strings.Lines(string(out)) {
		own, tests, _ := strings.Cut(line, "|")
		if fields := strings.Fields(own); len(fields) > 0 {
			imports[fields[0]] = fields[1:]
			testImports[fields[0]] = strings.Fields(tests)
		}
	}
	registry := modfile.ModulePath(goMod) + "/" + pluginsDir
	var plugins []string
	for _, dep := range imports[registry] {
		if strings.HasPrefix(dep, registry+"/") {
			plugins = append(plugins, dep)
		}
	}
	if len(plugins) == 0 {
		t.Fatalf("%s imports no plugin: the plugins cannot be told from the shared packages", registry)
	}
	pluginOf := func(pkg string) string {
		for _, p := range plugins {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return p
			}
		}
		return ""
	}
	var crossings []string
	for pkg, deps := range imports {
		if pkg == registry {
			continue
		}
		from := pluginOf(pkg)
		if from == "" {
			deps = append(slices.Clone(deps), testImports[pkg]...)
		}
		for _, dep := range deps {
			if to := pluginOf(dep); to != "" && to != from {
				crossings = append(crossings, strings.TrimPrefix(pkg, registry+"/")+" -> "+strings.TrimPrefix(dep, registry+"/"))
			}
		}
	}
	slices.Sort(crossings)
	crossings = slices.Compact(crossings)
	if len(crossings) > 0 {
		t.Errorf("packages under %s import another plugin's package (a plugin is one of %s; move what they share beside the plugins):\n%s",
			pluginsDir, strings.Join(trimmed(plugins, registry+"/"), ", "), strings.Join(crossings, "\n"))
	}
}

func trimmed(names []string, prefix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimPrefix(n, prefix)
	}
	return out
}
