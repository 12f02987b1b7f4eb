// Command image writes a container image holding one static binary as a
// tarball that `docker load` and `kind load image-archive` accept. It needs
// no Docker daemon, no registry and no base image.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	binary := fs.String("binary", "", "the static binary to put in the image")
	binName := fs.String("name", "", "the binary's name in the image, and the image's name")
	versionFile := fs.String("version-file", "", "file holding the version (VERSION); the tag is v<version>")
	output := fs.String("output", "", "where to write the image tarball")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for flagName, v := range map[string]string{"binary": *binary, "name": *binName, "version-file": *versionFile, "output": *output} {
		if v == "" {
			return fmt.Errorf("--%s is required", flagName)
		}
	}
	if err := checkStatic(*binary); err != nil {
		return err
	}
	raw, err := os.ReadFile(*versionFile)
	if err != nil {
		return fmt.Errorf("reading version: %w", err)
	}
	version := "v" + strings.TrimSpace(string(raw))
	tag, err := name.NewTag(*binName + ":" + version)
	if err != nil {
		return fmt.Errorf("image name: %w", err)
	}
	img, err := build(spec{binary: *binary, name: *binName, version: version})
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(*output, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", *output, err)
	}
	return nil
}
