// Command kindnode builds the kind node image for Kubernetes v1.37.2 without
// a container registry and prints its name. An image built from the same
// inputs is reused, not rebuilt.
//
//	go run ./internal/kindnode            # prints kns-3-node:v1.37.2-<hash>
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"kns3.dev/kns3/internal/kindnode/nodeimage"
)

func main() {
	var opts nodeimage.Options
	printName := flag.Bool("print-name", false, "print the image name the inputs give and exit")
	flag.StringVar(&opts.ModulesDir, "modules-dir", "", "the node programs' Go modules (default: internal/kindnode/modules of the repository around the working directory)")
	flag.StringVar(&opts.KindDir, "kind-dir", "", "the sigs.k8s.io/kind module (default: from the Go module cache)")
	flag.StringVar(&opts.CacheDir, "cache-dir", "", "build cache (default: $KNS3_CACHE_DIR/kindnode or ~/.cache/kns-3/kindnode)")
	flag.BoolVar(&opts.Rebuild, "rebuild", false, "build even if the image exists")
	flag.Parse()
	if err := run(&opts, *printName); err != nil {
		fmt.Fprintf(os.Stderr, "kindnode: %v\n", err)
		os.Exit(1)
	}
}

func run(opts *nodeimage.Options, printName bool) error {
	if opts.ModulesDir == "" {
		dir, err := findModules()
		if err != nil {
			return err
		}
		opts.ModulesDir = dir
	}
	if opts.KindDir == "" {
		dir, err := nodeimage.KindModuleDir()
		if err != nil {
			return err
		}
		opts.KindDir = dir
	}
	var name string
	var err error
	if printName {
		name, err = nodeimage.Name(*opts)
	} else {
		name, err = nodeimage.Build(context.Background(), *opts)
	}
	if err != nil {
		return err
	}
	fmt.Println(name)
	return nil
}

// findModules walks up from the working directory to the repository root.
func findModules() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		candidate := filepath.Join(dir, "internal", "kindnode", "modules")
		if _, err := os.Stat(filepath.Join(candidate, "kubernetes", "go.mod")); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("internal/kindnode/modules not found above the working directory: pass --modules-dir")
		}
		dir = parent
	}
}
