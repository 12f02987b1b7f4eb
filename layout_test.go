package kns3

import (
	"os"
	"testing"

	"github.com/bazelbuild/buildtools/build"
)

// cardLayout is the repository's top level as the design card fixes it:
// users and scripts outside this tree rely on these paths.
var cardLayout = []struct {
	name string
	dir  bool
}{
	{"WORKSPACE", false},
	{"BUILD.bazel", false},
	{"MODULE.bazel", false},
	{"scheduler", true},
	{"simulator", true},
	{"e2e", true},
	{"deploy", true},
	{"tools", true},
	{"go.mod", false},
	{"go.sum", false},
}

// kindSuite is the card's command for the kind suite: bazel test //e2e:kind_test.
const (
	kindSuitePackage = "e2e/BUILD.bazel"
	kindSuiteTarget  = "kind_test"
)

func TestCardLayout(t *testing.T) {
	for _, entry := range cardLayout {
		info, err := os.Stat(entry.name)
		if err != nil {
			t.Errorf("the card's top-level entry %s: %v", entry.name, err)
			continue
		}
		if info.IsDir() != entry.dir {
			t.Errorf("the card's top-level entry %s: directory = %t, want %t", entry.name, info.IsDir(), entry.dir)
		}
	}
}

func TestCardKindSuiteTarget(t *testing.T) {
	data := readFile(t, kindSuitePackage)
	file, err := build.ParseBuild(kindSuitePackage, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range file.Rules("") {
		if rule.Name() == kindSuiteTarget {
			if kind := rule.Kind(); kind != "test_suite" && kind != "go_test" {
				t.Errorf("//e2e:%s is a %s, want a test", kindSuiteTarget, kind)
			}
			return
		}
	}
	t.Errorf("%s declares no target %q: `bazel test //e2e:%s` would fail", kindSuitePackage, kindSuiteTarget, kindSuiteTarget)
}
