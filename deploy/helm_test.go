package deploy

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/toolwire-gateway"

// manifests is one rendering of the chart: every object, by kind.
type manifests struct {
	byKind map[string][]string // kind -> YAML documents
}

// render renders the chart as `helm template` does, with the values of
// the files (relative to the chart) and then set, merged in that order.
func render(t *testing.T, files []string, set map[string]any) (*manifests, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	vals := chartutil.Values{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(filepath.Join(chartDir, f))
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		vals = chartutil.CoalesceTables(v, vals)
	}
	for k, v := range set {
		vals = chartutil.CoalesceTables(setPath(k, v), vals)
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{
		Name: "tw", Namespace: "mcp", IsInstall: true, Revision: 1,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	out, err := engine.Render(chrt, rv)
	if err != nil {
		return nil, err
	}
	m := &manifests{byKind: map[string][]string{}}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(out[name], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var head struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: not YAML: %v\n%s", name, err, doc)
			}
			if head.Kind == "" {
				t.Fatalf("%s: a document without a kind:\n%s", name, doc)
			}
			m.byKind[head.Kind] = append(m.byKind[head.Kind], doc)
		}
	}
	return m, nil
}

// setPath turns "a.b.c" and v into {a: {b: {c: v}}}.
func setPath(path string, v any) map[string]any {
	parts := strings.Split(path, ".")
	m := map[string]any{parts[len(parts)-1]: v}
	for i := len(parts) - 2; i >= 0; i-- {
		m = map[string]any{parts[i]: m}
	}
	return m
}

// one decodes the only object of kind into out, strictly (an unknown field
// is an error, as the API server would say).
func (m *manifests) one(t *testing.T, kind string, out any) {
	t.Helper()
	docs := m.byKind[kind]
	if len(docs) != 1 {
		t.Fatalf("want one %s, rendered %d", kind, len(docs))
	}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), out); err != nil {
		t.Fatalf("%s: %v\n%s", kind, err, docs[0])
	}
}

func (m *manifests) count(kind string) int { return len(m.byKind[kind]) }

// gatewayConfig is the gateway.yaml of the rendered ConfigMap, decoded.
func (m *manifests) gatewayConfig(t *testing.T) map[string]any {
	t.Helper()
	var cm corev1.ConfigMap
	m.one(t, "ConfigMap", &cm)
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["gateway.yaml"]), &cfg); err != nil {
		t.Fatalf("gateway.yaml: %v\n%s", err, cm.Data["gateway.yaml"])
	}
	return cfg
}

func gatewayContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "gateway" {
		t.Fatalf("want one container named gateway, got %d", len(cs))
	}
	return cs[0]
}

func envNames(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

func volume(d *appsv1.Deployment, name string) *corev1.Volume {
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return &d.Spec.Template.Spec.Volumes[i]
		}
	}
	return nil
}

// renderDeployment renders the chart with the values file (relative to the
// chart), checks what every rendering must have (checkCommon), and returns
// the rendering and its Deployment.
func renderDeployment(t *testing.T, values string) (*manifests, *appsv1.Deployment) {
	t.Helper()
	m, err := render(t, []string{values}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	m.one(t, "Deployment", &d)
	checkCommon(t, &d)
	return m, &d
}

// checkReplicas asserts the Deployment's replica count and update strategy.
func checkReplicas(t *testing.T, d *appsv1.Deployment, replicas int32, strategy appsv1.DeploymentStrategyType) {
	t.Helper()
	if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
		t.Errorf("replicas %v, want %d", d.Spec.Replicas, replicas)
	}
	if d.Spec.Strategy.Type != strategy {
		t.Errorf("strategy %q, want %s", d.Spec.Strategy.Type, strategy)
	}
}

// checkFromSecrets asserts that the gateway container has each variable
// of want, taken from a Secret's key (want's {secret, key}) and from
// nothing else.
func checkFromSecrets(t *testing.T, d *appsv1.Deployment, want map[string][2]string) {
	t.Helper()
	env := envNames(gatewayContainer(t, d))
	for name, ref := range want {
		e, ok := env[name]
		if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != ref[0] || e.ValueFrom.SecretKeyRef.Key != ref[1] {
			t.Errorf("%s: %+v, want it from the Secret %s, key %s", name, e, ref[0], ref[1])
		}
	}
}

// section is the mapping at path in a decoded config, nil when there is
// none.
func section(cfg map[string]any, path ...string) map[string]any {
	for _, k := range path {
		cfg, _ = cfg[k].(map[string]any)
	}
	return cfg
}

// checkCommon asserts what every rendering must have: the probes on the
// admin port, the non-root read-only security context, resources, the
// config mounted, scrape annotations.
func checkCommon(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := gatewayContainer(t, d)
	for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET, got %+v", what, p)
			continue
		}
		want := map[string]string{"readiness": "/readyz", "liveness": "/healthz"}[what]
		if p.HTTPGet.Path != want || p.HTTPGet.Port.String() != "admin" {
			t.Errorf("%s probe: GET %s on port %s, want %s on admin", what, p.HTTPGet.Path, p.HTTPGet.Port.String(), want)
		}
	}
	var admin, mcp int32
	for _, p := range c.Ports {
		switch p.Name {
		case "admin":
			admin = p.ContainerPort
		case "mcp":
			mcp = p.ContainerPort
		}
	}
	if admin != 8091 || mcp != 8090 {
		t.Errorf("ports: mcp %d, admin %d; want 8090, 8091", mcp, admin)
	}
	ps := d.Spec.Template.Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 {
		t.Errorf("pod security context: want runAsNonRoot and a non-zero runAsUser, got %+v", ps)
	}
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("container: no security context")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("container: root filesystem not read-only")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("container: privilege escalation allowed")
	case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL":
		t.Errorf("container: capabilities %+v, want drop ALL", sc.Capabilities)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources: want memory requests and limits, got %+v", c.Resources)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["config"] != "/etc/toolwire/gateway.yaml" || mounts["data"] != "/data" || mounts["tmp"] != "/tmp" {
		t.Errorf("volume mounts %v: want config, /data and /tmp", mounts)
	}
	if !strings.Contains(strings.Join(c.Args, " "), "gateway --config /etc/toolwire/gateway.yaml") {
		t.Errorf("args %q: want gateway --config /etc/toolwire/gateway.yaml", c.Args)
	}
	a := d.Spec.Template.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "8091" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("pod annotations %v: want Prometheus scrape of :8091/metrics", a)
	}
}

func TestChartSingleReplicaSQLite(t *testing.T) {
	m, d := renderDeployment(t, "ci/sqlite-values.yaml")
	// One pod holds the volume at a time: Recreate, not RollingUpdate.
	checkReplicas(t, d, 1, appsv1.RecreateDeploymentStrategyType)
	v := volume(d, "data")
	if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "tw-toolwire-gateway" {
		t.Fatalf("data volume %+v: want the claim tw-toolwire-gateway", v)
	}
	var pvc corev1.PersistentVolumeClaim
	m.one(t, "PersistentVolumeClaim", &pvc)
	if got := pvc.Spec.Resources.Requests.Storage().String(); pvc.Name != "tw-toolwire-gateway" || got != "2Gi" {
		t.Errorf("claim %s of %s, want tw-toolwire-gateway of 2Gi", pvc.Name, got)
	}
	if n := m.count("PodDisruptionBudget"); n != 0 {
		t.Errorf("%d PodDisruptionBudgets for one replica (it would block every drain), want none", n)
	}
	cfg := m.gatewayConfig(t)
	if cfg["data_dir"] != "/data" || cfg["listen"] != "0.0.0.0:8090" || cfg["admin_listen"] != "0.0.0.0:8091" {
		t.Errorf("config: data_dir %v, listen %v, admin_listen %v", cfg["data_dir"], cfg["listen"], cfg["admin_listen"])
	}
	if _, ok := cfg["store"]; ok {
		t.Errorf("config: a store for one replica: %v", cfg["store"])
	}
	hosts, _ := cfg["allowed_hosts"].([]any)
	for _, want := range []string{"tw-toolwire-gateway", "tw-toolwire-gateway.mcp.svc", "tw-toolwire-gateway.mcp.svc.cluster.local"} {
		if !slices.Contains(hosts, any(want)) {
			t.Errorf("config allowed_hosts %v: want the Service name %s", hosts, want)
		}
	}
	if a := section(cfg, "audit"); a["store"] != "sqlite" || a["retention"] != "30d" {
		t.Errorf("config audit %v, want sqlite, 30d", cfg["audit"])
	}
	if env := envNames(gatewayContainer(t, d)); len(env) != 0 {
		t.Errorf("environment %v: want none", env)
	}
}

func TestChartScaleOut(t *testing.T) {
	m, d := renderDeployment(t, "ci/scaleout-values.yaml")
	checkReplicas(t, d, 3, appsv1.RollingUpdateDeploymentStrategyType)
	if v := volume(d, "data"); v == nil || v.EmptyDir == nil {
		t.Errorf("data volume %+v: with replicas, want an emptyDir (state is in Redis)", v)
	}
	if n := m.count("PersistentVolumeClaim"); n != 0 {
		t.Errorf("%d claims with 3 replicas, want none", n)
	}
	var pdb policyv1.PodDisruptionBudget
	m.one(t, "PodDisruptionBudget", &pdb)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 ||
		pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "tw" {
		t.Errorf("PodDisruptionBudget %+v: want minAvailable 1 over the release's pods", pdb.Spec)
	}
	var svc corev1.Service
	m.one(t, "Service", &svc)
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("service affinity %q, want None", svc.Spec.SessionAffinity)
	}
	if m.count("ServiceMonitor") != 1 {
		t.Errorf("want a ServiceMonitor, rendered %d", m.count("ServiceMonitor"))
	}
	checkFromSecrets(t, d, map[string][2]string{
		"REDIS_URL":    {"toolwire-redis", "url"},
		"DATABASE_URL": {"toolwire-postgres", "url"},
	})
	cfg := m.gatewayConfig(t)
	if redis := section(cfg, "store", "redis"); redis["url"] != "${REDIS_URL}" || redis["prefix"] != "prod:" {
		t.Errorf("config store %v: want redis ${REDIS_URL}, prefix prod:", cfg["store"])
	}
	if audit := section(cfg, "audit"); audit["store"] != "postgres" || audit["postgres"] != "${DATABASE_URL}" || audit["key_file"] != "/etc/toolwire/audit/audit.key" {
		t.Errorf("config audit %v: want postgres ${DATABASE_URL} with the key file", cfg["audit"])
	}
	if v := volume(d, "audit-key"); v == nil || v.Secret == nil || v.Secret.SecretName != "toolwire-audit-key" {
		t.Errorf("audit key volume %+v, want the Secret toolwire-audit-key", v)
	}
}

func TestChartOAuthAndSecrets(t *testing.T) {
	m, d := renderDeployment(t, "ci/oauth-values.yaml")
	checkFromSecrets(t, d, map[string][2]string{
		"TOOLWIRE_ADMIN_KEY_HASH": {"toolwire-admin", "key-hash"},
		"TOOLWIRE_API_KEY_CI_BOT": {"toolwire-api-keys", "ci-bot"},
	})
	cfg := m.gatewayConfig(t)
	if oauth := section(cfg, "auth", "oauth"); oauth["issuer"] != "https://issuer.example.com" || oauth["audience"] != "https://mcp.example.com/mcp" {
		t.Errorf("config auth.oauth %v", oauth)
	}
	if keys := section(cfg, "auth", "api_keys"); keys["ci-bot"] != "${TOOLWIRE_API_KEY_CI_BOT}" || !strings.HasPrefix(fmt.Sprint(keys["alice"]), "sha256:") {
		t.Errorf("config auth.api_keys %v: want ci-bot from the environment, alice inline", keys)
	}
	if admin := section(cfg, "admin"); admin["key_hash"] != "${TOOLWIRE_ADMIN_KEY_HASH}" {
		t.Errorf("config admin %v: want the key hash from the environment", cfg["admin"])
	}
	if cfg["public_url"] != "https://mcp.example.com/mcp" {
		t.Errorf("config public_url %v", cfg["public_url"])
	}
	if _, ok := section(cfg, "personas")["ci"]; !ok {
		t.Errorf("config personas %v: want ci", cfg["personas"])
	}
}

func TestChartRefusesUnsafeReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string
	}{
		{"replicas without Redis", map[string]any{"replicaCount": 2, "audit.store": "off"},
			"store.redis is required when replicaCount > 1"},
		{"replicas with the SQLite audit store", map[string]any{"replicaCount": 3, "store.redis.url": "redis://redis:6379/0"},
			"audit.store sqlite keeps one audit chain per process"},
		{"postgres without its Secret", map[string]any{"audit.store": "postgres"},
			"audit.store postgres needs audit.postgres.existingSecret"},
		{"no replica", map[string]any{"replicaCount": 0}, "replicaCount must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, nil, tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render: %v; want an error saying %q", err, tc.want)
			}
		})
	}
	// Redis and PostgreSQL together make replicas acceptable.
	if _, err := render(t, nil, map[string]any{"replicaCount": 2, "store.redis.url": "redis://redis:6379/0",
		"audit.store": "postgres", "audit.postgres.existingSecret": "pg"}); err != nil {
		t.Fatalf("2 replicas with Redis and PostgreSQL: %v", err)
	}
}
