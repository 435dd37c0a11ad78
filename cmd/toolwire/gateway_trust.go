package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/units"
)

// authConfigured reports whether the file authenticates callers (API keys
// or OAuth): then a request without a credential needs a persona that
// admits anonymous callers.
func authConfigured(file *config.File) bool {
	return len(file.Auth.APIKeys) > 0 || file.Auth.OAuth != nil
}

// accessSummary says in a sentence who may use what under file's auth and
// the personas p, for `gateway --check`.
func accessSummary(file *config.File, p *policy.Policy) string {
	names := strings.Join(p.Personas(), ", ")
	switch {
	case !authConfigured(file) && p == nil:
		return "no auth and no personas: every caller, without credentials, may use everything"
	case !authConfigured(file) && p.AdmitsAnonymous():
		return "no auth: every caller is anonymous, and personas (" + names + ") decide: " + anonymousPersona(p)
	case !authConfigured(file):
		return "no auth: every caller is anonymous, and no persona (" + names + ") says anonymous: true, so callers may use nothing"
	case p == nil:
		return "no personas: every authenticated caller may use everything; callers without credentials are refused (401)"
	case p.AdmitsAnonymous():
		return "personas (" + names + ") decide, the first matching a caller; a caller none matches may use nothing; " + anonymousPersona(p)
	default:
		return "personas (" + names + ") decide, the first matching a caller; a caller none matches may use nothing; callers without credentials are refused (401)"
	}
}

func anonymousPersona(p *policy.Policy) string {
	name, _ := p.PersonaOf(policy.Anonymous())
	return "callers without credentials get persona " + name
}

func newHashKeyCmd() *cobra.Command {
	var stdin bool
	cmd := &cobra.Command{
		Use:   "hash-key",
		Short: "Make a new API key and print it with the hash the config holds",
		Long: `hash-key makes a new random API key (256 bits, "twk_" and base64url) and prints it with its
hash. Give the key to the caller and put only the hash in the gateway config:

  auth:
    api_keys:
      ci-bot: "sha256:..."

With --stdin it reads an existing key from standard input instead (one line) and prints its
hash, so that the key never appears in the process list or the shell history.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if stdin {
				line, err := bufio.NewReader(io.LimitReader(cmd.InOrStdin(), 4096)).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				key := strings.TrimSpace(line)
				if !policy.IsKeyFormat(key) {
					return usageError{"standard input holds no API key (want one line: twk_ and 43 base64url characters, as hash-key makes)"}
				}
				fmt.Fprintln(w, policy.HashKey(key))
				return nil
			}
			key, err := policy.NewKey()
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "key:  %s\nhash: %s\n", key, policy.HashKey(key))
			fmt.Fprintln(cmd.ErrOrStderr(), "Give the key to its caller (it is not stored anywhere); put the hash in the config under auth.api_keys.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&stdin, "stdin", false, "hash the key read from standard input instead of making one")
	return cmd
}

func newExplainCmd() *cobra.Command {
	var configPath, identity string
	var claims []string
	var startTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Print, for one caller, which tools, prompts and resources it may use and which rule decided",
		Long: `explain connects the upstreams of a gateway config once (like --check) and prints, for every
tool, prompt, resource and resource template, whether the caller may use it, the persona that
applies and the rule that decided (resource templates are decided by the persona's resources
rules, on their uriTemplate). A caller no persona matches is refused every request (403): explain
says so and lists the personas.

--identity names the caller as the audit trail does: "api_key:NAME", "oauth:SUBJECT" or
"anonymous"; a bare NAME is an API key of the config. --claim KEY=VALUE (repeatable) gives an
OAuth caller's token claims, for personas that match on them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" || identity == "" {
				return usageError{"explain needs --config and --identity"}
			}
			file, err := config.Load(configPath)
			if err != nil {
				return err
			}
			id, err := parseIdentity(identity, claims, file)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			g, err := daemon.Build(cmd.Context(), file, daemon.WithLogger(logger), daemon.WithLimits(daemon.Limits{StartTimeout: startTimeout}))
			if err != nil {
				return err
			}
			defer closeGateway(g, daemon.DefaultShutdownTimeout, logger)
			return printExplain(cmd.OutOrStdout(), g, id, authConfigured(file))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configPath, "config", "", "the gateway config file")
	fl.StringVar(&identity, "identity", "", `the caller: "api_key:NAME", "oauth:SUBJECT", "anonymous", or an API key's NAME`)
	fl.StringArrayVar(&claims, "claim", nil, "KEY=VALUE: a token claim of an OAuth caller (repeatable; a claim given twice is a list)")
	fl.Var(units.Duration(&startTimeout, daemon.DefaultStartTimeout), "start-timeout", "how long to wait for each upstream's first connection")
	return cmd
}

// parseIdentity reads explain's --identity and --claim.
func parseIdentity(s string, claims []string, file *config.File) (policy.Identity, error) {
	var id policy.Identity
	kind, name, found := strings.Cut(s, ":")
	switch {
	case s == "anonymous":
		id = policy.Anonymous()
	case found && kind == string(policy.KindAPIKey) && name != "":
		id = policy.FromAPIKey(name)
	case found && kind == string(policy.KindOAuth) && name != "":
		id = policy.Identity{Name: name, Kind: policy.KindOAuth, Claims: map[string]any{}}
	case !found && file.Auth.APIKeys[s] != "":
		id = policy.FromAPIKey(s)
	default:
		return id, usageError{fmt.Sprintf("--identity %q: want api_key:NAME, oauth:SUBJECT, anonymous, or the name of an API key in the config", s)}
	}
	if len(claims) > 0 && id.Kind != policy.KindOAuth {
		return id, usageError{"--claim is for an oauth: identity"}
	}
	for _, c := range claims {
		k, v, ok := strings.Cut(c, "=")
		if !ok || k == "" {
			return id, usageError{fmt.Sprintf("--claim %q: want KEY=VALUE", c)}
		}
		switch old := id.Claims[k].(type) {
		case nil:
			id.Claims[k] = v
		case string:
			id.Claims[k] = []any{old, v}
		case []any:
			id.Claims[k] = append(old, v)
		}
	}
	return id, nil
}

// printExplain prints the decision for every tool, prompt, resource and
// resource template served now; withAuth says whether the gateway
// authenticates callers (then one without credentials is refused unless a
// persona admits it). A caller no persona admits is refused whole (403),
// and told so instead of a table of denials.
func printExplain(w io.Writer, g *gateway.Gateway, id policy.Identity, withAuth bool) error {
	p := g.Policy()
	if id.IsAnonymous() && withAuth && !p.AdmitsAnonymous() {
		fmt.Fprintf(w, "caller %s is refused (401): the config authenticates callers, and no persona says anonymous: true\n", id)
		return nil
	}
	if p == nil {
		fmt.Fprintf(w, "no personas are configured: %s may use every tool, prompt and resource\n", id)
		return nil
	}
	persona, ok := p.PersonaOf(id)
	if !ok {
		fmt.Fprintf(w, "caller %s matches no persona: the gateway refuses its every request (403, \"no persona admits %s\"), so it may use nothing\n", id, id)
		fmt.Fprintln(w, "\nthe personas, first match wins:")
		for _, d := range p.Describe() {
			fmt.Fprintln(w, "  "+d)
		}
		return nil
	}
	fmt.Fprintf(w, "caller %s, persona %s\n\n", id, persona)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tDECISION\tRULE\tREASON")
	srv := g.Server()
	var resources, templates []string
	for _, r := range srv.Resources() {
		resources = append(resources, r.URI)
	}
	for _, t := range srv.ResourceTemplates() {
		templates = append(templates, t.URITemplate)
	}
	for _, section := range []struct {
		kind  string
		f     policy.Feature
		names []string
	}{
		{"tool", policy.Tools, routeNames(g.Tools())},
		{"prompt", policy.Prompts, routeNames(g.Prompts())},
		{"resource", policy.Resources, sorted(resources)},
		{"template", policy.Resources, sorted(templates)}, // decided by the resources rules, on the uriTemplate
	} {
		for _, name := range section.names {
			d := p.Decide(id, section.f, name)
			verdict := "denied"
			if d.Allowed {
				verdict = "allowed"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", section.kind, name, verdict, d.Rule, d.Reason)
		}
	}
	return tw.Flush()
}

// routeNames are the downstream names of routes, in their order.
func routeNames(routes []gateway.Route) []string {
	out := make([]string, len(routes))
	for i, r := range routes {
		out[i] = r.Name
	}
	return out
}

// sorted returns s sorted.
func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
