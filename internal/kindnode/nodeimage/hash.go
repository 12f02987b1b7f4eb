package nodeimage

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kns3.dev/kns3/build/image/reproducible"
)

// recipe is this package's own source: a change to how the image is built
// changes its name.
//
//go:embed *.go files
var recipe embed.FS

// inputsHash hashes everything the node image is built from: this recipe
// and the image assembly it shares with the KNS-3 images,
// the Go modules of the node's programs, kind's base files, the Go version
// and the Debian package list.
func inputsHash(o *Options, goVersion string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "recipe %s\nkubernetes %s\nsuite %s\npackages %s\ngo %s\n",
		recipeVersion, KubernetesVersion, debianSuite, strings.Join(debianPackages, ","), goVersion)
	if err := hashFS(h, "recipe", recipe, "."); err != nil {
		return "", err
	}
	if err := hashFS(h, "assembly", reproducible.Source, "."); err != nil {
		return "", err
	}
	if err := hashFS(h, "modules", os.DirFS(o.ModulesDir), "."); err != nil {
		return "", fmt.Errorf("hashing %s: %w", o.ModulesDir, err)
	}
	if err := hashFS(h, "kind", os.DirFS(kindFilesDir(o)), "."); err != nil {
		return "", fmt.Errorf("hashing kind's base files: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFS writes every regular file's path, mode and content into h, in
// lexical order so the result does not depend on the walk.
func hashFS(h io.Writer, label string, fsys fs.FS, root string) error {
	var paths []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Build files describe the tree to Bazel and tests check the
		// recipe: neither goes into the image.
		if d.IsDir() || d.Name() == "BUILD.bazel" || strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		// Bazel hands files over as symlinks: hash what they point to.
		if d.Type()&fs.ModeSymlink != 0 {
			info, err := fs.Stat(fsys, p)
			if err != nil || !info.Mode().IsRegular() {
				return err
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s %s %x\n", label, filepath.ToSlash(p), sum)
	}
	return nil
}
