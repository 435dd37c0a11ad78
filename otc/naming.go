package otc

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/mcp"
)

// `_meta` keys of an MCP tool that steer its OTC identity.
const (
	// MetaToolID holds "Toolkit.Tool": the tool's OTC id without version.
	// Several MCP tools may share one, each with its own version.
	MetaToolID = "dev.toolwire/otc-id"
	// MetaToolVersion holds the tool's version, "X.Y.Z".
	MetaToolVersion = "dev.toolwire/version"
)

// Defaults of Naming.
const (
	DefaultToolkit     = "Tools"
	DefaultSeparator   = "."
	DefaultReplacement = "_"
	DefaultVersion     = "1.0.0"
	// MaxNameLength is the longest OTC tool name (^[A-Za-z0-9_-]{1,64}$).
	MaxNameLength = 64
)

// ErrSkipTool, returned by Naming.Func, leaves a tool out of the OTC catalog.
var ErrSkipTool = errors.New("otc: skip this tool")

// Ref is a tool's OTC identity.
type Ref struct {
	Toolkit string // [A-Za-z0-9_]+
	Tool    string // [A-Za-z0-9_]+
	Version string // X.Y.Z
}

// Base returns "Toolkit.Tool".
func (r Ref) Base() string { return r.Toolkit + "." + r.Tool }

// ID returns "Toolkit.Tool@X.Y.Z".
func (r Ref) ID() string { return r.Base() + "@" + r.Version }

// Name returns the OTC tool name, "Toolkit_Tool".
func (r Ref) Name() string { return r.Toolkit + "_" + r.Tool }

// Naming maps MCP tool names to OTC ids, names and versions. The rule, in
// order:
//
//  1. Func, when set, decides alone (it may return ErrSkipTool).
//  2. A tool whose _meta holds MetaToolID ("Toolkit.Tool") takes that id.
//  3. Otherwise the MCP name is split at its last Separator: the left part
//     is the toolkit, the right part the tool ("Gmail.GetEmails"). A name
//     without a separator goes in Toolkit ("get-sum" -> "Tools.get_sum").
//  4. Characters OTC ids do not allow (anything but A-Z a-z 0-9 _) become
//     Replacement: "get-sum" -> "get_sum", "a.b.c" -> toolkit "a_b", tool "c".
//  5. The version is _meta[MetaToolVersion] when set, else Version.
//  6. The OTC name is Toolkit_Tool, at most 64 characters.
//
// Two tools that map to the same id, or different ids that map to the same
// name, are an error naming both, never a silent overwrite.
type Naming struct {
	// Toolkit holds tools whose MCP name has no separator. Empty means the
	// backend's implementation name (sanitized) when it offers one, else
	// DefaultToolkit.
	Toolkit string
	// Separator splits toolkit from tool in MCP names; empty means ".".
	Separator string
	// Replacement stands in for disallowed characters; empty means "_". It
	// must itself consist of allowed characters.
	Replacement string
	// Version is the version of tools that declare none; empty means 1.0.0.
	Version string
	// Func, when set, replaces the rule above.
	Func func(t *mcp.Tool) (Ref, error)
}

// The naming rules' patterns are compiled on first use, not at package
// init: a program linking otc without serving it (the gateway) does not
// pay for them.
var (
	segmentRe = lazyRegexp(`^[A-Za-z0-9_]+$`)
	versionRe = lazyRegexp(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	toolIDRe  = lazyRegexp(`^([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)(?:@([0-9]+|[0-9]+\.[0-9]+\.[0-9]+))?$`)
	nameRe    = lazyRegexp(`^[A-Za-z0-9_-]{1,64}$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// check rejects a Naming that cannot produce valid ids.
func (n Naming) check() error {
	if n.Toolkit != "" && !segmentRe().MatchString(n.Toolkit) {
		return fmt.Errorf("otc: naming: toolkit %q must match [A-Za-z0-9_]+", n.Toolkit)
	}
	if n.Replacement != "" && !segmentRe().MatchString(n.Replacement) {
		return fmt.Errorf("otc: naming: replacement %q must match [A-Za-z0-9_]+", n.Replacement)
	}
	if n.Version != "" && !versionRe().MatchString(n.Version) {
		return fmt.Errorf("otc: naming: version %q must be X.Y.Z", n.Version)
	}
	return nil
}

// Map returns the OTC identity of t under the rule, or an error saying why
// it has none.
func (n Naming) Map(t *mcp.Tool) (Ref, error) {
	r, err := n.mapTool(t)
	if err != nil {
		return r, err
	}
	if !segmentRe().MatchString(r.Toolkit) || !segmentRe().MatchString(r.Tool) {
		return r, fmt.Errorf("id %q is not Toolkit.Tool of [A-Za-z0-9_]", r.Base())
	}
	if !versionRe().MatchString(r.Version) {
		return r, fmt.Errorf("version %q is not X.Y.Z", r.Version)
	}
	if !nameRe().MatchString(r.Name()) {
		return r, fmt.Errorf("OTC name %q is longer than %d characters", r.Name(), MaxNameLength)
	}
	return r, nil
}

func (n Naming) mapTool(t *mcp.Tool) (Ref, error) {
	if n.Func != nil {
		return n.Func(t)
	}
	var r Ref
	if v, ok := t.Meta[MetaToolID]; ok {
		s, _ := v.(string)
		tk, tool, found := strings.Cut(s, ".")
		if !found || !segmentRe().MatchString(tk) || !segmentRe().MatchString(tool) {
			return r, fmt.Errorf("_meta[%q] is %v; want \"Toolkit.Tool\" of [A-Za-z0-9_]", MetaToolID, v)
		}
		r.Toolkit, r.Tool = tk, tool
	} else {
		sep := n.Separator
		if sep == "" {
			sep = DefaultSeparator
		}
		tk, tool := "", t.Name
		if i := strings.LastIndex(t.Name, sep); i >= 0 {
			tk, tool = t.Name[:i], t.Name[i+len(sep):]
			if tk == "" || tool == "" {
				return r, fmt.Errorf("name %q has an empty part around %q", t.Name, sep)
			}
		} else if tk = n.Toolkit; tk == "" {
			tk = DefaultToolkit
		}
		r.Toolkit, r.Tool = n.sanitize(tk), n.sanitize(tool)
	}
	if r.Version = n.Version; r.Version == "" {
		r.Version = DefaultVersion
	}
	if v, ok := t.Meta[MetaToolVersion]; ok {
		s, _ := v.(string)
		if !versionRe().MatchString(s) {
			return r, fmt.Errorf("_meta[%q] is %v; want \"X.Y.Z\"", MetaToolVersion, v)
		}
		r.Version = s
	}
	return r, nil
}

// sanitize replaces each character OTC ids do not allow.
func (n Naming) sanitize(s string) string {
	rep := n.Replacement
	if rep == "" {
		rep = DefaultReplacement
	}
	var b strings.Builder
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteString(rep)
		}
	}
	return b.String()
}

// withDefaults fills the empty fields; info names the backend, if known.
func (n Naming) withDefaults(info string) Naming {
	if n.Toolkit == "" {
		n.Toolkit = DefaultToolkit
		if info != "" {
			n.Toolkit = n.sanitize(info)
		}
	}
	if n.Version == "" {
		n.Version = DefaultVersion
	}
	return n
}

// MappingError says why the tools cannot be offered over OTC: a tool without
// a valid identity, or several tools claiming one id or name.
type MappingError struct {
	// Tools are the MCP tool names involved.
	Tools []string
	// ID is the OTC id or name in conflict, when there is one.
	ID     string
	Reason string
}

func (e *MappingError) Error() string {
	q := make([]string, len(e.Tools))
	for i, t := range e.Tools {
		q[i] = strconv.Quote(t)
	}
	if e.ID != "" {
		return fmt.Sprintf("otc: MCP tools %s: %s %q", strings.Join(q, " and "), e.Reason, e.ID)
	}
	return fmt.Sprintf("otc: MCP tool %s: %s", strings.Join(q, ", "), e.Reason)
}

// semver is a parsed X.Y.Z.
type semver [3]uint64

func parseSemver(s string) (semver, bool) {
	var v semver
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func (a semver) less(b semver) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
