// Package flow runs declarative MCP test and automation flows written in
// YAML: each document of a manifest names the MCP servers it talks to
// (clients: a stdio command or a Streamable HTTP url), typed inputs, and
// a list of steps that call tools (tools/call), list tools, resources and
// prompts (tools/list, resources/list, prompts/list with every page), read
// resources (resources/read), get prompts (prompts/get), and compute,
// branch, loop, catch, throw and assert over the results.
//
// Values may hold CEL expressions inside ${{ }}: a string that is exactly
// one expression takes the expression's typed value, text around
// expressions is interpolated. Expressions see inputs.<name>, env.<NAME>
// (only names listed under env:), vars.<name> (the flow variables declared
// under vars: and changed by set steps), steps.<name>.result of the steps
// that ran before, item and index inside for_each bodies, and error inside
// catch handlers and finally. A while loop ends when its condition fails
// before an iteration or its until: holds after one (seeing that
// iteration's steps). The full reference is docs/flows.md.
//
// Load and Parse check a manifest before anything runs: unknown keys,
// wrong types, references to steps that have not run, unknown inputs,
// env names and clients, CEL syntax and type errors, catch handlers for
// codes their try cannot raise, bad durations, regexps and JSON Schemas are
// all reported with their line and column, as *Diagnostic values. Every
// expression is compiled once, at Load; clients connect lazily, on first
// use, and a flow that fails its check never starts one.
//
// A step failure is an *Error with a code: the client's five
// (ERR_MCP_TOOL_ERROR, ERR_MCP_JSON_RPC_ERROR, ERR_MCP_TRANSPORT,
// ERR_MCP_PROTOCOL, ERR_MCP_SESSION_INVALID), ERR_STEP_TIMEOUT,
// ERR_ASSERTION, ERR_EXPRESSION, ERR_LOOP_LIMIT, ERR_CANCELLED (the run's
// context ended) or a code a throw step names.
//
// Limits (file size, YAML nesting depth, steps per flow, expression
// length, CEL cost per evaluation) have documented defaults, each changed
// by a LoadOption.
package flow
