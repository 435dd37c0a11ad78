package config_test

import (
	"fmt"

	"github.com/toolwire/toolwire/gateway/config"
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
