package integration

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// controlPlane is a real kube-apiserver on an embedded etcd, both in the test
// process and both stopped with the test.
type controlPlane struct {
	config     *rest.Config
	client     kubernetes.Interface
	kubeconfig string
}

func startControlPlane(t testing.TB) *controlPlane {
	t.Helper()
	etcd := testserver.RunEtcd(t, nil)
	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = etcd.Endpoints()
	srv := apiservertesting.StartTestServerOrDie(t, nil,
		// Test pods need no service account token (no token controller runs), and
		// nodes start untainted (no node controller runs to lift not-ready taints).
		[]string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition"}, storage)
	t.Cleanup(srv.TearDownFn)

	client, err := kubernetes.NewForConfig(srv.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &controlPlane{config: srv.ClientConfig, client: client, kubeconfig: writeKubeconfig(t, srv.ClientConfig)}
}

// writeKubeconfig writes cfg as a kubeconfig file, for the scheduler to read
// as it would in production.
func writeKubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
