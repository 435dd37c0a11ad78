package config_test

import (
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
)

func ExampleParse() {
	src := []byte(`upstreams:
  files:
    command: [node, server.js, stdio]
    env: {ROOT: "${DATA:-/srv}/files"}
  weather:
    url: https://weather.internal/mcp
    headers: {Authorization: "Bearer ${WEATHER_TOKEN}"}
naming:
  rename: {files__read_file: read_file}
`)
	lookup := func(name string) (string, bool) {
		if name == "WEATHER_TOKEN" {
			return "s3cret", true
		}
		return "", false
	}
	f, err := config.Parse(src, "gateway.yaml", config.WithLookupEnv(lookup))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("listen:", f.Listen, "admin:", f.AdminListen)
	for _, u := range f.Gateway.Upstreams {
		fmt.Println(u.Name, u.Command, u.Env, u.URL, u.Header)
	}
	fmt.Println(f.Gateway.Naming.Separator, f.Gateway.Naming.Rename)

	_, err = config.Parse([]byte("upstreams:\n  files:\n    comand: [node]\n    url: http://localhost:3000/mcp\n"), "gateway.yaml")
	fmt.Println(err)
	// Output:
	// listen: 127.0.0.1:8090 admin: 127.0.0.1:8091
	// files [node server.js stdio] map[ROOT:/srv/files]  map[]
	// weather [] map[] https://weather.internal/mcp map[Authorization:[Bearer s3cret]]
	// __ map[files__read_file:read_file]
	// gateway.yaml:3:5: unknown key "comand" in upstream "files" (did you mean "command"?)
}

// The trust settings: API keys (their hashes), personas and rate limits.
func ExampleParse_trust() {
	src := []byte(`auth:
  api_keys:
    alice: "sha256:2dd7f9cfae4d6d0ec15d67da3f1152b5a7c3a68a8ae7a859aac365a5322422cc"
personas:
  analyst:
    identities: ["api_key:alice"]
    tools: {allow: ["files__*"], deny: ["files__delete*"]}
rate_limits:
  identity: 60/m
  tools: {files__search: {rate: 10/s, burst: 20}}
`)
	f, err := config.Parse(src, "gateway.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	persona, _ := f.Gateway.Policy.PersonaOf(policy.FromAPIKey("alice"))
	fmt.Println("alice is", persona, "at", f.PublicURL)
	keys, _ := f.KeySet()
	fmt.Println(keys.Len(), "key; limits:", f.Gateway.Limits != nil)

	_, err = config.Parse([]byte("auth:\n  api_keys:\n    bob: twk_"+strings.Repeat("x", 43)+"\n"), "gateway.yaml")
	fmt.Println(err)
	// Output:
	// alice is analyst at http://127.0.0.1:8090/mcp
	// 1 key; limits: true
	// gateway.yaml:3:10: auth: api_keys: bob: is an API key in clear, not its hash: configure what `toolwire gateway hash-key` prints for it, and keep the key itself out of the file
}
