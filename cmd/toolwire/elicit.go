package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// console is the user's side of an elicitation: answers are read from in,
// questions written to out, and isTerminal says whether a person is there
// to answer at all. It is built from the command's stdin and stderr
// (enableElicitation); tests build one over scripted input.
type console struct {
	in         *bufio.Reader
	out        io.Writer
	isTerminal func() bool
	mu         sync.Mutex // one form at a time
}

func newConsole(in io.Reader, out io.Writer, isTerminal func() bool) *console {
	return &console{in: bufio.NewReader(in), out: out, isTerminal: isTerminal}
}

// enableElicitation makes the client answer the server's elicitation
// requests from the terminal; when stdin is not a terminal the client does
// not declare elicitation, and declines a request that comes anyway.
func (f *targetFlags) enableElicitation() {
	in := f.stdin
	if in == nil {
		in = os.Stdin
	}
	con := newConsole(in, f.errOut(), func() bool { return stdinIsTerminal(in) })
	f.console = con
	f.extra = append(f.extra, con.options()...)
}

// stdinIsTerminal reports whether r is a terminal: a reader that says so
// itself (IsTerminal, as tests' scripted input does), or a character
// device other than /dev/null.
func stdinIsTerminal(r io.Reader) bool {
	if t, ok := r.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := r.(*os.File)
	if !ok || !isTerminal(f) {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// options are the client options answering elicitation from the console.
func (c *console) options() []client.Option {
	if c.isTerminal() {
		return []client.Option{client.WithElicitationHandler(c.elicit, client.ElicitURLMode())}
	}
	return []client.Option{client.WithReceivingMiddleware(c.declineMiddleware)}
}

// declineMiddleware answers an elicitation/create the client did not
// declare (stdin is not a terminal) with decline, saying why on stderr.
func (c *console) declineMiddleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == mcp.MethodElicitationCreate {
			fmt.Fprintln(c.out, "toolwire: elicitation requested but stdin is not a terminal: declined (run toolwire from a terminal to answer it)")
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}
		return next(ctx, req)
	}
}

// errEndOfInput: stdin ended before the form was filled in.
var errEndOfInput = errors.New("end of input")

// readLine reads one answer; an answer cut short by the end of input
// counts, an end of input with nothing typed is errEndOfInput.
func (c *console) readLine() (string, error) {
	line, err := c.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", errEndOfInput
		}
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// elicit answers one elicitation/create from the console.
func (c *console) elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Mode == mcp.ElicitURL {
		return c.askURL(p)
	}
	fields, err := parseForm(p.RequestedSchema)
	if err != nil {
		return nil, err
	}
	return c.fill(p.Message, fields)
}

const escapeHelp = "type :decline to refuse, :cancel to dismiss"

func (c *console) askURL(p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fmt.Fprintf(c.out, "\nThe server asks you to open a URL: %s\n  %s\n(elicitation %s; %s)\n", p.Message, p.URL, p.ElicitationID, escapeHelp)
	for {
		fmt.Fprint(c.out, "Open it in a browser and finish there; accept (a), decline (d) or cancel (c)? ")
		line, err := c.readLine()
		if err != nil {
			fmt.Fprintln(c.out, "\ntoolwire: elicitation cancelled:", err)
			return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "accept", "y", "yes":
			return &mcp.ElicitResult{Action: mcp.ActionAccept}, nil
		case "d", "decline", ":decline", "n", "no":
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		case "c", "cancel", ":cancel":
			return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
		}
		fmt.Fprintln(c.out, "  answer a, d or c")
	}
}

// fill asks for every field of the form in turn.
func (c *console) fill(message string, fields []*formField) (*mcp.ElicitResult, error) {
	fmt.Fprintf(c.out, "\nThe server asks: %s\n(Enter accepts a [default]; * marks a required field; %s)\n", message, escapeHelp)
	content := map[string]any{}
	for _, fd := range fields {
		fd.describe(c.out)
		for {
			fmt.Fprint(c.out, fd.prompt())
			line, err := c.readLine()
			if err != nil {
				fmt.Fprintln(c.out, "\ntoolwire: elicitation cancelled:", err)
				return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
			}
			switch strings.TrimSpace(line) {
			case ":decline":
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			case ":cancel":
				return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
			}
			v, set, problem := fd.parse(line)
			if problem != "" {
				fmt.Fprintln(c.out, "  "+problem)
				continue
			}
			if set {
				content[fd.name] = v
			}
			break
		}
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

// formField is one property of a form's requestedSchema.
type formField struct {
	name, title, description string
	typ, format              string
	required                 bool
	def                      any // nil: no default
	choices                  []choice
	multi                    bool
	minLength, maxLength     *int
	minItems, maxItems       *int
	minimum, maximum         *float64
}

type choice struct{ value, label string }

type constTitle struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

type propSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []constTitle    `json:"oneOf"`
	AnyOf       []constTitle    `json:"anyOf"`
	Items       *propSchema     `json:"items"`
	Default     json.RawMessage `json:"default"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
}

func (s *propSchema) choices() []choice {
	var out []choice
	switch {
	case len(s.OneOf) > 0:
		for _, o := range s.OneOf {
			out = append(out, choice{o.Const, o.Title})
		}
	case len(s.AnyOf) > 0:
		for _, o := range s.AnyOf {
			out = append(out, choice{o.Const, o.Title})
		}
	default:
		for i, v := range s.Enum {
			label := v
			if i < len(s.EnumNames) && s.EnumNames[i] != "" {
				label = s.EnumNames[i]
			}
			out = append(out, choice{v, label})
		}
	}
	for i := range out {
		if out[i].label == "" {
			out[i].label = out[i].value
		}
	}
	return out
}

// parseForm reads a requestedSchema into its fields, in the order the
// server wrote them.
func parseForm(raw json.RawMessage) ([]*formField, error) {
	var root struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := wirejson.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("elicitation schema: %w", err)
	}
	names, err := objectKeys(root.Properties)
	if err != nil {
		return nil, fmt.Errorf("elicitation schema properties: %w", err)
	}
	var props map[string]propSchema
	if len(root.Properties) > 0 {
		if err := wirejson.Unmarshal(root.Properties, &props); err != nil {
			return nil, fmt.Errorf("elicitation schema properties: %w", err)
		}
	}
	fields := make([]*formField, 0, len(names))
	for _, name := range names {
		p := props[name]
		fd := &formField{name: name, title: p.Title, description: p.Description, typ: p.Type, format: p.Format,
			minLength: p.MinLength, maxLength: p.MaxLength, minItems: p.MinItems, maxItems: p.MaxItems,
			minimum: p.Minimum, maximum: p.Maximum}
		for _, r := range root.Required {
			fd.required = fd.required || r == name
		}
		if p.Type == "array" && p.Items != nil {
			fd.multi, fd.choices = true, p.Items.choices()
		} else {
			fd.choices = p.choices()
		}
		if len(p.Default) > 0 {
			if err := wirejson.UnmarshalUseNumber(p.Default, &fd.def); err != nil {
				return nil, fmt.Errorf("elicitation schema: %q default: %w", name, err)
			}
		}
		fields = append(fields, fd)
	}
	return fields, nil
}

// objectKeys lists the member names of a JSON object in order. The object
// was read by the strict reader already (names exact, none twice); this
// only walks its tokens for their order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.String()) // before the next read reuses tok
		if err := dec.SkipValue(); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// describe writes the field's heading: title, name, description and its
// numbered choices.
func (fd *formField) describe(w io.Writer) {
	head := fd.name
	if fd.title != "" && fd.title != fd.name {
		head = fd.title + " (" + fd.name + ")"
	}
	if fd.required {
		head += " *"
	}
	if fd.description != "" {
		head += " - " + fd.description
	}
	fmt.Fprintln(w, "\n"+head)
	for i, ch := range fd.choices {
		fmt.Fprintf(w, "  %d) %s\n", i+1, ch.label)
	}
}

// prompt is the line asking for the value, with what is expected and the
// default.
func (fd *formField) prompt() string {
	var hint string
	switch {
	case fd.multi:
		hint = fmt.Sprintf("numbers 1-%d, comma-separated", len(fd.choices))
		if fd.minItems != nil || fd.maxItems != nil {
			hint += ", " + bounds("choices", fd.minItems, fd.maxItems)
		}
	case len(fd.choices) > 0:
		hint = fmt.Sprintf("number 1-%d", len(fd.choices))
	case fd.typ == "boolean":
		hint = "y/n"
	case fd.typ == "integer" || fd.typ == "number":
		hint = fd.typ
		if fd.minimum != nil && fd.maximum != nil {
			hint += fmt.Sprintf(", %g to %g", *fd.minimum, *fd.maximum)
		} else if fd.minimum != nil {
			hint += fmt.Sprintf(", at least %g", *fd.minimum)
		} else if fd.maximum != nil {
			hint += fmt.Sprintf(", at most %g", *fd.maximum)
		}
	default:
		hint = "text"
		if fd.format != "" {
			hint = fd.format
		}
		if fd.minLength != nil || fd.maxLength != nil {
			hint += ", " + bounds("characters", fd.minLength, fd.maxLength)
		}
	}
	s := "  (" + hint + ")"
	if fd.def != nil {
		s += " [" + fd.showDefault() + "]"
	} else if !fd.required {
		s += " [optional]"
	}
	return s + ": "
}

func bounds(noun string, lo, hi *int) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d %s", *lo, *hi, noun)
	case lo != nil:
		return fmt.Sprintf("at least %d %s", *lo, noun)
	default:
		return fmt.Sprintf("at most %d %s", *hi, noun)
	}
}

func (fd *formField) label(value string) string {
	for _, ch := range fd.choices {
		if ch.value == value {
			return ch.label
		}
	}
	return value
}

func (fd *formField) showDefault() string {
	switch d := fd.def.(type) {
	case bool:
		if d {
			return "y"
		}
		return "n"
	case string:
		return fd.label(d)
	case []any:
		parts := make([]string, len(d))
		for i, e := range d {
			s, _ := e.(string)
			parts[i] = fd.label(s)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(fd.def)
}

// parse checks one answer: the value to send and whether to send one, or
// a problem to show before asking again.
func (fd *formField) parse(line string) (v any, set bool, problem string) {
	s := strings.TrimSpace(line)
	if s == "" {
		switch {
		case fd.def != nil:
			return fd.def, true, ""
		case fd.required:
			return nil, false, "a value is required (or type :decline or :cancel)"
		}
		return nil, false, ""
	}
	switch {
	case fd.multi:
		return fd.parseMulti(s)
	case len(fd.choices) > 0:
		value, ok := fd.pick(s)
		if !ok {
			return nil, false, fmt.Sprintf("choose a number from 1 to %d", len(fd.choices))
		}
		return value, true, ""
	}
	switch fd.typ {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, true, ""
		case "n", "no", "false":
			return false, true, ""
		}
		return nil, false, "answer y or n"
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false, fmt.Sprintf("%q is not a whole number", s)
		}
		if p := fd.outOfRange(float64(n)); p != "" {
			return nil, false, p
		}
		return n, true, ""
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false, fmt.Sprintf("%q is not a number", s)
		}
		if p := fd.outOfRange(n); p != "" {
			return nil, false, p
		}
		return n, true, ""
	}
	// A string: keep the answer as typed, spaces inside included.
	s = strings.TrimRight(line, " \t")
	s = strings.TrimLeft(s, " \t")
	n := utf8.RuneCountInString(s)
	if fd.minLength != nil && n < *fd.minLength {
		return nil, false, fmt.Sprintf("too short: at least %d characters", *fd.minLength)
	}
	if fd.maxLength != nil && n > *fd.maxLength {
		return nil, false, fmt.Sprintf("too long: at most %d characters", *fd.maxLength)
	}
	if p := checkFormat(fd.format, s); p != "" {
		return nil, false, p
	}
	return s, true, ""
}

func (fd *formField) outOfRange(n float64) string {
	if fd.minimum != nil && n < *fd.minimum {
		return fmt.Sprintf("must be at least %g", *fd.minimum)
	}
	if fd.maximum != nil && n > *fd.maximum {
		return fmt.Sprintf("must be at most %g", *fd.maximum)
	}
	return ""
}

// pick takes a choice by its number, or by its value typed out.
func (fd *formField) pick(s string) (string, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(fd.choices) {
		return fd.choices[n-1].value, true
	}
	for _, ch := range fd.choices {
		if ch.value == s {
			return ch.value, true
		}
	}
	return "", false
}

func (fd *formField) parseMulti(s string) (any, bool, string) {
	var values []string
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, ok := fd.pick(part)
		if !ok {
			return nil, false, fmt.Sprintf("%q is not a choice: give numbers from 1 to %d, comma-separated", part, len(fd.choices))
		}
		if !seen[v] {
			seen[v] = true
			values = append(values, v)
		}
	}
	if fd.minItems != nil && len(values) < *fd.minItems {
		return nil, false, fmt.Sprintf("choose at least %d", *fd.minItems)
	}
	if fd.maxItems != nil && len(values) > *fd.maxItems {
		return nil, false, fmt.Sprintf("choose at most %d", *fd.maxItems)
	}
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out, true, ""
}

// checkFormat checks the string formats elicitation allows.
func checkFormat(format, s string) string {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Sprintf("%q is not an email address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Sprintf("%q is not an absolute URI", s)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Sprintf("%q is not a date (YYYY-MM-DD)", s)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Sprintf("%q is not a date-time (RFC 3339, e.g. 2026-01-02T15:04:05Z)", s)
		}
	}
	return ""
}
