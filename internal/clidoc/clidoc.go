// Package clidoc writes the command line's reference from its cobra command
// tree: one Markdown page and one man page (section 1) per command, so that
// the reference under docs/ says exactly what `toolwire CMD --help` says.
//
// The output depends only on the command tree: defaults that name the
// user's home or state directory are written as $HOME and $XDG_STATE_HOME,
// so the pages are the same on every machine and a test can regenerate
// them and compare.
package clidoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Generate writes the reference of root and every visible command under it:
// mdDir/<name>.md and manDir/<name>.1, where name is the command path with
// spaces replaced by "_" (Markdown) or "-" (man). Hidden commands, help and
// completion are left out. It returns the files it wrote.
func Generate(root *cobra.Command, mdDir, manDir string) ([]string, error) {
	pages := Render(root)
	var written []string
	for _, p := range pages {
		for _, f := range []struct{ dir, name, body string }{
			{mdDir, p.Markdown, p.MarkdownText},
			{manDir, p.Man, p.ManText},
		} {
			if f.dir == "" {
				continue
			}
			if err := os.MkdirAll(f.dir, 0o755); err != nil {
				return written, err
			}
			path := filepath.Join(f.dir, f.name)
			if err := os.WriteFile(path, []byte(f.body), 0o644); err != nil {
				return written, err
			}
			written = append(written, path)
		}
	}
	return written, nil
}

// Page is one command's reference: the file names and their contents.
type Page struct {
	// Markdown is the Markdown file's name (toolwire_gateway_explain.md).
	Markdown string
	// MarkdownText is its content.
	MarkdownText string
	// Man is the man page's name (toolwire-gateway-explain.1).
	Man string
	// ManText is its content, in roff with the man macros.
	ManText string
}

// Render returns the pages of root and every visible command under it, in
// command-path order.
func Render(root *cobra.Command) []Page {
	root.InitDefaultHelpFlag()
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !visible(c) {
			return
		}
		c.InitDefaultHelpFlag()
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].CommandPath() < cmds[j].CommandPath() })
	pages := make([]Page, 0, len(cmds))
	for _, c := range cmds {
		pages = append(pages, Page{
			Markdown:     mdName(c),
			MarkdownText: markdown(c),
			Man:          manName(c),
			ManText:      man(c),
		})
	}
	return pages
}

// visible says whether a command gets a page: not hidden, not cobra's own
// help or completion commands.
func visible(c *cobra.Command) bool {
	if c.Hidden || c.Deprecated != "" {
		return false
	}
	if c.HasParent() && (c.Name() == "help" || c.Name() == "completion") {
		return false
	}
	return true
}

func mdName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

func manName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
}

// subcommands returns the visible children of c.
func subcommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if visible(s) {
			out = append(out, s)
		}
	}
	return out
}

func description(c *cobra.Command) string {
	if d := strings.TrimSpace(c.Long); d != "" {
		return d
	}
	return strings.TrimSpace(c.Short)
}

// flagUsages renders a flag set as help does, with defaults that name this
// machine's directories written as the variables they come from.
// The defaults and usages are made portable before the text is wrapped, so
// that where a line breaks does not depend on how long this machine's
// paths are.
func flagUsages(fs *pflag.FlagSet) string {
	type saved struct{ def, usage string }
	orig := map[*pflag.Flag]saved{}
	fs.VisitAll(func(f *pflag.Flag) {
		orig[f] = saved{f.DefValue, f.Usage}
		f.DefValue, f.Usage = portable(f.DefValue), portable(f.Usage)
	})
	defer fs.VisitAll(func(f *pflag.Flag) { f.DefValue, f.Usage = orig[f].def, orig[f].usage })
	return portable(fs.FlagUsagesWrapped(100))
}

// portable replaces the user's state directory ($XDG_STATE_HOME when it is
// an absolute path, else ~/.local/state) with $XDG_STATE_HOME and the home
// directory with $HOME, so that a default computed from them reads the same
// on every machine.
func portable(s string) string {
	home, _ := os.UserHomeDir()
	state := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) && home != "" {
		state = filepath.Join(home, ".local", "state")
	}
	if len(state) > 1 {
		s = strings.ReplaceAll(s, state, "$XDG_STATE_HOME")
	}
	if len(home) > 1 {
		s = strings.ReplaceAll(s, home, "$HOME")
	}
	return s
}

func markdown(c *cobra.Command) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", c.CommandPath())
	fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Short))
	fmt.Fprintf(&b, "```text\n%s\n```\n\n", c.UseLine())
	if d := strings.TrimSpace(c.Long); d != "" {
		fmt.Fprintf(&b, "```text\n%s\n```\n\n", portable(d))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```sh\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Flags\n\n```text\n%s```\n\n", flagUsages(fs))
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Flags inherited from parent commands\n\n```text\n%s```\n\n", flagUsages(fs))
	}
	if subs := subcommands(c); len(subs) > 0 {
		b.WriteString("## Commands\n\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "- [%s](%s): %s\n", s.CommandPath(), mdName(s), strings.TrimSpace(s.Short))
		}
		b.WriteString("\n")
	}
	if c.HasParent() {
		p := c.Parent()
		fmt.Fprintf(&b, "## See also\n\n- [%s](%s): %s\n\n", p.CommandPath(), mdName(p), strings.TrimSpace(p.Short))
	}
	b.WriteString("This page is generated from the command's help by `go run ./cmd/toolwire docs`; edit the\ncommand, not the page.\n")
	return b.String()
}

// roff escapes text for a man page: backslashes, hyphens, and a leading dot
// or quote that would start a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

func man(c *cobra.Command) string {
	var b bytes.Buffer
	title := strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-"))
	fmt.Fprintf(&b, ".TH %q 1 \"\" \"toolwire\" \"toolwire manual\"\n", title)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(strings.ReplaceAll(c.CommandPath(), " ", "-")), roff(strings.TrimSpace(c.Short)))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.nf\n%s\n.fi\n", roff(c.UseLine()))
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.nf\n%s\n.fi\n", roff(portable(description(c))))
	if c.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLES\n.nf\n%s\n.fi\n", roff(strings.TrimRight(c.Example, "\n")))
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, ".SH OPTIONS\n.nf\n%s.fi\n", roff(flagUsages(fs)))
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, ".SH OPTIONS INHERITED FROM PARENT COMMANDS\n.nf\n%s.fi\n", roff(flagUsages(fs)))
	}
	var also []string
	if c.HasParent() {
		also = append(also, strings.ReplaceAll(c.Parent().CommandPath(), " ", "-"))
	}
	for _, s := range subcommands(c) {
		also = append(also, strings.ReplaceAll(s.CommandPath(), " ", "-"))
	}
	if len(also) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, a := range also {
			sep := ","
			if i == len(also)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, ".BR %s (1)%s\n", roff(a), sep)
		}
	}
	return b.String()
}
