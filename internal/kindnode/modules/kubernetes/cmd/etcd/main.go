// Command etcd is the upstream etcd server at the version Kubernetes
// v1.37.2 is built and tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
