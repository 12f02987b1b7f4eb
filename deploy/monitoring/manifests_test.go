package monitoring_test

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// render builds the kustomization in dir, as kubectl kustomize does.
func render(t *testing.T, dir string) resmap.ResMap {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	// Bazel's runfiles are symlinks into the source tree.
	opts.LoadRestrictions = types.LoadRestrictionsNone
	resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	return resources
}

// object decodes the rendered object of kind and name into out.
func object(t *testing.T, objs resmap.ResMap, kind, name string, out any) {
	t.Helper()
	for _, r := range objs.Resources() {
		if r.GetKind() != kind || r.GetName() != name {
			continue
		}
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v", kind, name, err)
		}
		return
	}
	t.Fatalf("no %s %s", kind, name)
}

// serviceMonitor is the part of a ServiceMonitor the test reads.
type serviceMonitor struct {
	Spec struct {
		JobLabel string `json:"jobLabel"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port   string `json:"port"`
			Scheme string `json:"scheme"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// The Service selects the scheduler pods of every second-scheduler install
// and no probe agent, on the secure port the scheduler container names
// https; the ServiceMonitor scrapes that port of that Service, under the
// job the alerts name.
func TestScrapeReachesTheScheduler(t *testing.T) {
	mon := render(t, ".")
	var svc v1.Service
	object(t, mon, "Service", "kns-3-scheduler", &svc)
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "https" || svc.Spec.Ports[0].Port != 10259 || svc.Spec.Ports[0].TargetPort.String() != "https" {
		t.Errorf("Service ports %+v, want https (10259) to the container port https", svc.Spec.Ports)
	}
	for _, install := range []string{"..", "../ha", "../live"} {
		objs := render(t, install)
		var d appsv1.Deployment
		object(t, objs, "Deployment", "kns-3-scheduler", &d)
		if svc.Namespace != d.Namespace {
			t.Errorf("%s: Service in %s, scheduler in %s", install, svc.Namespace, d.Namespace)
		}
		if len(svc.Spec.Selector) == 0 || !selector.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("%s: the Service's selector %v does not select the scheduler pods", install, svc.Spec.Selector)
		}
		if !hasPort(d.Spec.Template.Spec.Containers, "kns-3-scheduler", "https", 10259) {
			t.Errorf("%s: no container kns-3-scheduler with port https 10259", install)
		}
		for _, r := range objs.Resources() {
			if r.GetKind() != "DaemonSet" {
				continue
			}
			var ds appsv1.DaemonSet
			object(t, objs, "DaemonSet", r.GetName(), &ds)
			if selector.Matches(labels.Set(ds.Spec.Template.Labels)) {
				t.Errorf("%s: the Service selects the pods of DaemonSet %s", install, ds.Name)
			}
		}
	}

	var sm serviceMonitor
	object(t, mon, "ServiceMonitor", "kns-3-scheduler", &sm)
	if len(sm.Spec.Selector.MatchLabels) == 0 || !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor's selector %v does not select the Service", sm.Spec.Selector.MatchLabels)
	}
	if job := svc.Labels[sm.Spec.JobLabel]; job != jobName {
		t.Errorf("ServiceMonitor job %q (the Service's label %q), want %q", job, sm.Spec.JobLabel, jobName)
	}
	if e := sm.Spec.Endpoints; len(e) != 1 || e[0].Port != "https" || e[0].Scheme != "https" {
		t.Errorf("ServiceMonitor endpoints %+v, want the https port over HTTPS", e)
	}
	for _, a := range alerts(t) {
		if a.Alert == "KNS3SchedulerDown" && !strings.Contains(a.Expr, `job="`+jobName+`"`) {
			t.Errorf("KNS3SchedulerDown %q does not name job %s", a.Expr, jobName)
		}
	}
}

func hasPort(containers []v1.Container, container, name string, port int32) bool {
	for _, c := range containers {
		for _, p := range c.Ports {
			if c.Name == container && p.Name == name && p.ContainerPort == port {
				return true
			}
		}
	}
	return false
}

// The scrape job for a Prometheus without the operator gives the series
// the same job.
func TestScrapeConfigJob(t *testing.T) {
	data, err := os.ReadFile("scrape-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName string `json:"job_name"`
			Scheme  string `json:"scheme"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.ScrapeConfigs) != 1 || cfg.ScrapeConfigs[0].JobName != jobName || cfg.ScrapeConfigs[0].Scheme != "https" {
		t.Errorf("scrape_configs %+v, want one HTTPS job %s", cfg.ScrapeConfigs, jobName)
	}
}

// A scraper bound to the ClusterRole may get /metrics, and nothing else.
func TestScraperRole(t *testing.T) {
	var role rbacv1.ClusterRole
	object(t, render(t, "."), "ClusterRole", "kns-3-metrics-reader", &role)
	want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
}

// Grafana's sidecar finds the dashboard by its label; the ConfigMap holds
// dashboard.json as it is.
func TestDashboardConfigMap(t *testing.T) {
	var cm v1.ConfigMap
	object(t, render(t, "."), "ConfigMap", "kns-3-dashboard", &cm)
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("ConfigMap labels %v, want grafana_dashboard: \"1\"", cm.Labels)
	}
	want, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 1 || cm.Data["kns-3.json"] != string(want) {
		t.Errorf("ConfigMap data keys %v, want kns-3.json holding %s", slices.Sorted(maps.Keys(cm.Data)), dashboardFile)
	}
}
