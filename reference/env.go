package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// defaultEnvAllow is what get-env shows without WithEnvAllow: variables
// that describe the process's locale and shell, none of them a secret.
var defaultEnvAllow = []string{"LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "SHELL", "PATH", "PWD", "HOME", "USER", "HOSTNAME", "GOOS", "GOARCH"}

// secretWords mark variable names whose values get-env never shows.
var secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "KEY", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE", "CERT", "DSN", "DATABASE_URL"}

// looksSecret reports whether a variable's name suggests a secret value.
func looksSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(name, p) || a == name {
			return true
		}
	}
	return false
}

// visibleEnv is the environment get-env reports: allowed names only, secret
// values redacted, with a count of what was left out.
func visibleEnv(environ []string, allow []string) (map[string]string, int) {
	out := map[string]string{}
	hidden := 0
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case !allowed(name, allow):
			hidden++
		case looksSecret(name):
			out[name] = "[redacted]"
		default:
			out[name] = value
		}
	}
	return out, hidden
}

func (c *config) addGetEnv(s *server.Server) error {
	allow := append(append([]string(nil), defaultEnvAllow...), c.envAllow...)
	return server.AddTool(s, &mcp.Tool{
		Name: "get-env", Title: "Print Environment Tool",
		Description: "Returns the server's non-secret environment variables (locale, shell, PATH, ...), for debugging its configuration. " +
			"Other variables are left out unless the operator allows them; values of secret-looking names are always redacted.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false), IdempotentHint: mcp.Bool(true)},
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (*mcp.CallToolResult, error) {
		env, hidden := visibleEnv(os.Environ(), allow)
		names := make([]string, 0, len(env))
		for n := range env {
			names = append(names, n)
		}
		sort.Strings(names)
		text, _ := json.MarshalIndent(env, "", "  ")
		res := mcp.TextResult("%s", text)
		res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf(
			"%d variable(s) shown, %d left out; the operator widens this with `toolwire serve --env-allow NAME,PREFIX*`.", len(names), hidden)})
		return res, nil
	})
}
