//go:build tools

// Package tools pins programs the build and the tests run: `go build` of
// these paths in this module yields them at the versions go.mod names.
package tools

import (
	_ "sigs.k8s.io/kind"
)
