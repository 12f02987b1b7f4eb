// Package kns3 holds what every KNS-3 binary shares: the release version.
package kns3

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var rawVersion string

// Version is the KNS-3 release, read from the VERSION file at the repository
// root so that binaries, image tags and labels all agree.
var Version = "v" + strings.TrimSpace(rawVersion)
