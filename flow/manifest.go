package flow

import (
	"time"

	"cel.dev/cel-go/cel"

	"github.com/toolwire/toolwire/mcp"
)

// Pos is a place in a manifest file: 1-based line and column.
type Pos struct{ Line, Column int }

// File is a parsed and checked manifest: one flow per YAML document.
type File struct {
	Path  string
	Flows []*Flow

	dir string // the manifest's directory, for relative cwd
}

// Flow is one YAML document of a manifest, ready to run.
type Flow struct {
	Name, Description string
	Pos               Pos
	// Env lists the environment variables expressions may read.
	Env []string
	// Inputs are the declared inputs, in file order.
	Inputs []*Input
	// Clients are the declared MCP servers, in file order.
	Clients []*ClientSpec
	// Steps are the top-level steps, in file order.
	Steps []*Step
	// Outputs are the declared outputs, in file order.
	Outputs []*Output

	vars    []assignment         // vars: the flow variables, in file order
	varType map[string]*cel.Type // the check's type of each variable; dyn where absent
	file    *File
	cfg     *loadConfig
	env     *exprEnv // CEL declarations of this flow
	nsteps  int      // steps in the whole tree
	failed  bool     // the file failed its check
	inherit bool     // declares no clients: takes the first document's
}

// Input is a declared input of a flow.
type Input struct {
	Name, Type, Description string
	Default                 any  // converted to Type
	Required                bool // no default given
	// Secret: the value is masked (Masked) in everything a run reports:
	// errors, outputs, step reports, events (Flow.Masker).
	Secret bool
	Pos    Pos
}

// ClientSpec is a declared MCP server: a stdio command or an HTTP URL.
type ClientSpec struct {
	Name string
	Pos  Pos
	// HTTP reports whether the client is reached by URL (Streamable HTTP).
	HTTP    bool
	Era     mcp.Era
	Timeout time.Duration // 0: client.DefaultTimeout

	command *value
	args    []*value
	env     []kv
	cwd     *value
	url     *value
	headers []kv
}

// kv is a name with a value that may hold expressions.
type kv struct {
	key string
	val *value
}

// Output is a named value computed when a flow passes.
type Output struct {
	Name string
	Pos  Pos
	val  *value
}

// Step is one step of a flow: exactly one kind plus the common keys.
type Step struct {
	Name string // "" when unnamed
	Kind string // call, list, read, prompt, value, set, if, switch, for_each, while, try, throw, assert, sleep
	// Path locates the step in the tree, e.g. steps[2].then[0].
	Path    string
	Pos     Pos
	Timeout time.Duration // 0: none
	Retry   *Retry        // nil: one attempt

	when *value

	// call, list, read, prompt
	client     string
	clientPos  Pos
	tool       *value
	args       *value
	toolErrors string // "throw" or "result"
	what       string
	uri        *value
	prompt     *value

	// value, if, switch, for_each, while
	val      *value
	cond     *value
	then     []*Step
	els      []*Step
	cases    []switchCase
	def      []*Step
	hasDef   bool
	body     []*Step
	as       string
	conc     int
	maxIter  int
	until    *value // while: evaluated after each iteration
	try      []*Step
	catches  []*catchClause
	finally  []*Step
	hasFinal bool

	// throw
	code, message, data *value

	// assert
	assert *assertSpec

	// sleep
	sleep time.Duration

	// set
	sets []assignment

	// expect is the step's own assertion on how it ran (assert: beside
	// another kind key); nil when none.
	expect *stepExpect
}

// Retry is a step's retry policy.
type Retry struct {
	Attempts     int // total, 1..100
	Backoff      time.Duration
	Factor       float64
	MaxBackoff   time.Duration
	Jitter       bool
	NonRetryable []string
}

type switchCase struct {
	key   string
	steps []*Step
}

type catchClause struct {
	codes    []string
	codePos  []Pos
	steps    []*Step
	pos      Pos
	anyCodes bool
}
