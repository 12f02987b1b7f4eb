package main

import (
	"debug/elf"
	"fmt"
)

// checkStatic refuses a dynamically linked binary: the image has no C
// library, so such a binary would only fail when the container starts.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: build it pure Go (CGO_ENABLED=0; Bazel: --@io_bazel_rules_go//go/config:pure, set in .bazelrc)", path)
		}
	}
	return nil
}
