//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/monitoring"
)

const (
	// securePort is the scheduler's secure port, which serves /metrics.
	securePort = 10259
	// metricsReaderBinding binds deploy/monitoring's scraper role to the
	// scraper's ServiceAccount.
	metricsReaderBinding = "kns-3-metrics-reader"
	// scrapeJob is the job deploy/monitoring's scrape gives the series.
	scrapeJob = "kns-3-scheduler"
	// authorizationSettles bounds how long a new binding may take to
	// authorize a scrape: the API server's RBAC cache, and the scheduler's
	// cache of a denial (10 s).
	authorizationSettles = 30 * time.Second
)

// alertsEvaluateOnAScrape applies deploy/monitoring's RBAC, takes a token
// of the ServiceAccount it binds (creating it), and scrapes the running
// scheduler's /metrics once through a port-forward to its secure port, as
// Prometheus would: a token of an account the RBAC does not name must be
// refused. Then promtool (no Prometheus server) evaluates every alert's
// expression and every dashboard query on that scrape, each wrapped so
// that it yields one known sample whatever it selects: the check fails
// only where an expression cannot be evaluated on the real series.
func (c *cluster) alertsEvaluateOnAScrape(ctx context.Context) {
	c.t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		c.t.Fatalf("promtool is missing, and the monitoring check needs it: `make monitoring-check` installs Debian's prometheus package, which has it (%v)", err)
	}
	dir := filepath.Join(kindCluster.Inputs.Root, "deploy", "monitoring")
	scraper := c.applyScraperRBAC(ctx, dir)
	pod, err := kindenv.SchedulerPod(ctx, c.client)
	if err != nil {
		c.t.Fatal(err)
	}
	port, stop, err := kindenv.Forward(ctx, c.cfg, c.client, pod.Namespace, pod.Name, securePort)
	if err != nil {
		c.t.Fatal(err)
	}
	defer close(stop)

	if code, _, err := scrapeMetrics(ctx, port, c.token(ctx, c.ns, "default")); err != nil || code != http.StatusForbidden {
		c.t.Fatalf("a ServiceAccount no binding names scraped /metrics: HTTP %d, %v; want 403", code, err)
	}
	token := c.token(ctx, scraper.Namespace, scraper.Name)
	var text []byte
	var lastCode int
	var lastErr error
	err = wait.For(func(ctx context.Context) (bool, error) {
		lastCode, text, lastErr = scrapeMetrics(ctx, port, token)
		return lastErr == nil && lastCode == http.StatusOK, nil
	}, wait.WithContext(ctx), wait.WithInterval(2*time.Second), wait.WithTimeout(authorizationSettles), wait.WithImmediate())
	if err != nil {
		c.t.Fatalf("%s/%s, bound by %s, could not scrape /metrics within %s: HTTP %d, %v", scraper.Namespace, scraper.Name,
			metricsReaderBinding, authorizationSettles, lastCode, lastErr)
	}

	// The labels the ServiceMonitor gives a scrape of this pod.
	target := map[string]string{"job": scrapeJob, "namespace": pod.Namespace, "pod": pod.Name, "container": "kns-3-scheduler",
		"service": scrapeJob, "endpoint": "https", "instance": net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(securePort))}
	samples, err := monitoring.ParseScrape(text, target)
	if err != nil {
		c.t.Fatalf("reading the scrape: %v", err)
	}
	samples = append(samples, monitoring.Sample{Series: seriesOf(target, "up"), Value: "1"})
	c.evaluateOn(ctx, promtool, dir, samples)
}

// evaluateOn runs promtool on every alert expression and dashboard query
// of deploy/monitoring (dir), over samples.
func (c *cluster) evaluateOn(ctx context.Context, promtool, dir string, samples []monitoring.Sample) {
	c.t.Helper()
	groups, err := monitoring.RuleGroups(filepath.Join(dir, "prometheusrule.yaml"))
	if err != nil {
		c.t.Fatal(err)
	}
	var exprs []string
	for _, g := range groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	alerts := len(exprs)
	queries, err := monitoring.DashboardExprs(filepath.Join(dir, "dashboard.json"))
	if err != nil {
		c.t.Fatal(err)
	}
	for _, q := range queries {
		exprs = append(exprs, monitoring.Evaluable(q))
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "prometheusrule.yaml"))
	if err != nil {
		c.t.Fatal(err)
	}
	test, err := monitoring.EvaluationTest("kns-3-rules.yaml", samples, exprs)
	if err != nil {
		c.t.Fatal(err)
	}
	work := c.t.TempDir()
	for name, data := range map[string][]byte{"kns-3-rules.yaml": monitoring.RuleFile(manifest), "scrape_test.yaml": test} {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool, "test", "rules", filepath.Join(work, "scrape_test.yaml")).CombinedOutput()
	if err != nil {
		c.t.Fatalf("promtool could not evaluate every alert and dashboard query on the scheduler's scrape (%d series): %v\n%s",
			len(samples), err, out)
	}
	c.t.Logf("promtool evaluated %d alert expressions and %d dashboard queries on %d series of the scheduler's scrape; names not in this scrape: %s",
		alerts, len(queries), len(samples), strings.Join(absentNames(exprs, samples), ", "))
}

// applyScraperRBAC applies deploy/monitoring's RBAC objects (the rest needs
// prometheus-operator's resources, or is not about access), and the
// ServiceAccount its ClusterRoleBinding names, with its namespace where
// missing; all are deleted when the test ends. It returns that account.
func (c *cluster) applyScraperRBAC(ctx context.Context, dir string) metav1.ObjectMeta {
	c.t.Helper()
	objs, err := kindenv.Render(dir)
	if err != nil {
		c.t.Fatal(err)
	}
	var rbac []*unstructured.Unstructured
	var binding rbacv1.ClusterRoleBinding
	for _, o := range objs {
		if o.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		rbac = append(rbac, o)
		if o.GetKind() == "ClusterRoleBinding" && o.GetName() == metricsReaderBinding {
			data, err := o.MarshalJSON()
			if err == nil {
				err = json.Unmarshal(data, &binding)
			}
			if err != nil {
				c.t.Fatal(err)
			}
		}
	}
	if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != rbacv1.ServiceAccountKind {
		c.t.Fatalf("%s binds %+v, want one ServiceAccount", metricsReaderBinding, binding.Subjects)
	}
	sa := metav1.ObjectMeta{Namespace: binding.Subjects[0].Namespace, Name: binding.Subjects[0].Name}
	c.t.Cleanup(func() { c.deleteScraperRBAC(context.WithoutCancel(ctx), rbac) })
	if err := kindenv.ApplyObjects(ctx, c.cfg, rbac); err != nil {
		c.t.Fatal(err)
	}
	_, err = c.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sa.Namespace}}, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.t.Cleanup(func() {
			_ = c.client.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), sa.Namespace, metav1.DeleteOptions{})
		})
	case !apierrors.IsAlreadyExists(err):
		c.t.Fatal(err)
	}
	_, err = c.client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &v1.ServiceAccount{ObjectMeta: sa}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		c.t.Fatal(err)
	}
	return sa
}

// deleteScraperRBAC deletes the RBAC objects applyScraperRBAC applied.
func (c *cluster) deleteScraperRBAC(ctx context.Context, objs []*unstructured.Unstructured) {
	rbac := c.client.RbacV1()
	for _, o := range objs {
		var err error
		switch o.GetKind() {
		case "ClusterRole":
			err = rbac.ClusterRoles().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "ClusterRoleBinding":
			err = rbac.ClusterRoleBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "Role":
			err = rbac.Roles(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "RoleBinding":
			err = rbac.RoleBindings(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			c.t.Errorf("deleting %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// token is a short-lived token of the ServiceAccount (TokenRequest).
func (c *cluster) token(ctx context.Context, namespace, name string) string {
	c.t.Helper()
	expiry := int64(600) // the shortest the API server grants
	tr, err := c.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatalf("a token of %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// scrapeMetrics gets /metrics from the scheduler's secure port forwarded
// to the local port, with token, as Prometheus does: over HTTPS, not
// verifying the scheduler's self-signed certificate.
func scrapeMetrics(ctx context.Context, port uint16, token string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the scheduler's own, self-signed
	}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}

func seriesOf(labels map[string]string, name string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+strconv.Quote(v))
	}
	slices.Sort(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// absentNames are the metric names exprs use that the scrape has no series
// of: some exist only in another refresh mode, or once something happened.
func absentNames(exprs []string, samples []monitoring.Sample) []string {
	scraped := map[string]bool{}
	for _, s := range samples {
		name, _, _ := strings.Cut(s.Series, "{")
		scraped[name] = true
	}
	var absent []string
	for _, e := range exprs {
		for _, name := range monitoring.MetricNames(e) {
			if !scraped[name] && !slices.Contains(absent, name) {
				absent = append(absent, name)
			}
		}
	}
	slices.Sort(absent)
	return absent
}
