package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestComposeTopology checks deploy/compose: two gateway replicas of the
// repository's image on the same config, Redis and PostgreSQL they wait
// for, and nginx balancing over exactly those two replicas.
func TestComposeTopology(t *testing.T) {
	data, err := os.ReadFile("compose/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Image       string            `json:"image"`
		Build       map[string]any    `json:"build"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
		Volumes     []string          `json:"volumes"`
		Ports       []string          `json:"ports"`
		DependsOn   any               `json:"depends_on"`
		ReadOnly    bool              `json:"read_only"`
		CapDrop     []string          `json:"cap_drop"`
	}
	var f struct {
		Services map[string]service `json:"services"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var names []string
	for n := range f.Services {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"gateway-1", "gateway-2", "lb", "postgres", "redis"}; !slices.Equal(names, want) {
		t.Fatalf("services %v, want %v", names, want)
	}
	for _, n := range []string{"gateway-1", "gateway-2"} {
		g := f.Services[n]
		if g.Build["dockerfile"] != "Dockerfile" || g.Build["context"] != "../.." {
			t.Errorf("%s: build %v, want the repository's Dockerfile", n, g.Build)
		}
		if strings.Join(g.Command, " ") != "gateway --config /etc/toolwire/gateway.yaml" {
			t.Errorf("%s: command %q", n, g.Command)
		}
		if !slices.Contains(g.Volumes, "./gateway.yaml:/etc/toolwire/gateway.yaml:ro") || !slices.Contains(g.Volumes, n+":/data") {
			t.Errorf("%s: volumes %v, want the config read-only and its own /data", n, g.Volumes)
		}
		if !strings.HasPrefix(g.Environment["REDIS_URL"], "redis://") || !strings.HasPrefix(g.Environment["DATABASE_URL"], "postgres://") {
			t.Errorf("%s: environment %v, want REDIS_URL and DATABASE_URL", n, g.Environment)
		}
		deps, _ := g.DependsOn.(map[string]any)
		if _, ok := deps["redis"]; !ok {
			t.Errorf("%s: depends_on %v, want redis and postgres", n, g.DependsOn)
		} else if _, ok := deps["postgres"]; !ok {
			t.Errorf("%s: depends_on %v, want redis and postgres", n, g.DependsOn)
		}
		if !g.ReadOnly || !slices.Equal(g.CapDrop, []string{"ALL"}) {
			t.Errorf("%s: read_only %v, cap_drop %v", n, g.ReadOnly, g.CapDrop)
		}
	}
	conf, err := os.ReadFile("compose/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	servers := regexp.MustCompile(`(?m)^\s*server (\S+);`).FindAllStringSubmatch(string(conf), -1)
	var got []string
	for _, s := range servers {
		got = append(got, s[1])
	}
	if want := []string{"gateway-1:8090", "gateway-2:8090"}; !slices.Equal(got, want) {
		t.Errorf("nginx upstream servers %v, want %v", got, want)
	}
	for _, d := range []string{"proxy_buffering off;", "proxy_http_version 1.1;", "proxy_set_header Host localhost;"} {
		if !strings.Contains(string(conf), d) {
			t.Errorf("nginx.conf lacks %q", d)
		}
	}
	cfg, err := os.ReadFile("compose/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`url: "${REDIS_URL}"`, "store: postgres", `postgres: "${DATABASE_URL}"`, "listen: 0.0.0.0:8090"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("gateway.yaml lacks %q", want)
		}
	}
}
