// Command runcwrap runs runc without CAP_SYS_RESOURCE, for hosts whose
// capability bounding set lacks it.
//
// Docker asks for every capability when a container is privileged (kind's
// nodes are), and runc then fails with "unable to apply caps: operation not
// permitted" when the host cannot grant one of them. dockerd is told to use
// this program as its runtime; it strips the capability from the bundle's
// config.json (create, run) and from the --process file (exec) and then
// executes runc with the same arguments.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"kns3.dev/kns3/hack/dockerhost/capstrip"
)

// runcPaths are where Debian's runc package and upstream installs put runc.
var runcPaths = []string{"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc"}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "runcwrap: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	inv := capstrip.ParseArgs(args)
	if inv.Command == "create" || inv.Command == "run" {
		bundle := inv.Bundle
		if bundle == "" {
			bundle = "."
		}
		if err := capstrip.StripFile(filepath.Join(bundle, "config.json"), capstrip.Drop, true); err != nil {
			return err
		}
	}
	if inv.Command == "exec" && inv.Process != "" {
		if err := capstrip.StripFile(inv.Process, capstrip.Drop, false); err != nil {
			return err
		}
	}
	runc, err := findRunc()
	if err != nil {
		return err
	}
	return syscall.Exec(runc, append([]string{runc}, args...), os.Environ())
}

func findRunc() (string, error) {
	self, _ := os.Executable()
	for _, p := range runcPaths {
		if p == self {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("runc not found in %v", runcPaths)
}
