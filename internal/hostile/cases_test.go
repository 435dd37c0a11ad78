package hostile

import (
	"net/http"
	"strconv"
	"strings"
)

// echo builds a tools/call of the reference echo tool with a raw id and raw
// arguments, _meta added for 2026-era requests.
func echo(id, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":` + args + `$M}}`
}

// echoCase is a case whose message is an echo call: its 2026-era headers
// name tools/call and echo.
func echoCase(name, msg string, want expect) hcase {
	return hcase{name: name, msg: msg, method: "tools/call", tool: "echo", want: want}
}

// Sizes of the big cases: all within limit but the oversized ones.
const (
	hugeLen  = 100_000
	deepness = 10_000
)

var (
	hugeString = strings.Repeat("h", hugeLen)
	deepValue  = strings.Repeat("[", deepness) + strings.Repeat("]", deepness)
	// overLimit is a string that makes any message longer than limit.
	overLimit = strings.Repeat("o", limit+1000)
)

// setHeader returns an edit that sets (or, for "", deletes) a header.
func setHeader(name, value string) func(*http.Request, kind) {
	return func(r *http.Request, _ kind) {
		if value == "" {
			r.Header.Del(name)
			return
		}
		r.Header.Set(name, value)
	}
}

// headerCase is an echo call with request id id over the HTTP transports,
// spoiled by edit (a header set or removed, the Host changed) before it is
// sent; want is the reply on both.
func headerCase(name string, id int, edit func(*http.Request, kind), want expect) hcase {
	return hcase{name: name, msg: echo(strconv.Itoa(id), `{"message":"x"}`), method: "tools/call", tool: "echo",
		only: httpOnly, edit: edit, want: want}
}

// byEra gives the case one reply over a 2025-11-25 session (legacy) and
// another over 2026-07-28 HTTP (modern), where the two eras' rules differ.
func (c hcase) byEra(legacy, modern expect) hcase {
	c.over = map[kind]expect{legacyK: legacy, modernK: modern}
	return c
}

// legacyVerbCase is an HTTP request of verb (GET or DELETE) with one header
// set (or, for "", removed): a 2025-11-25 session answers legacy, while
// 2026-07-28 serves POST only and refuses the verb with 405.
func legacyVerbCase(name, verb, header, value string, legacy expect) hcase {
	return hcase{name: name, verb: verb, only: httpOnly, edit: setHeader(header, value)}.
		byEra(legacy, rpcErr(invalidRequest, nil, verb+" is not served in 2026-07-28").http(0, s405))
}

// Status codes, named once.
const (
	s200 = http.StatusOK
	s400 = http.StatusBadRequest
	s403 = http.StatusForbidden
	s404 = http.StatusNotFound
	s405 = http.StatusMethodNotAllowed
	s406 = http.StatusNotAcceptable
	s413 = http.StatusRequestEntityTooLarge
	s415 = http.StatusUnsupportedMediaType
)

// httpOnly lists the HTTP transports.
var httpOnly = []kind{legacyK, modernK}

// malformedCases is the hostile-input table. Each case names the reply the
// specifications require (JSON-RPC 2.0, MCP 2025-11-25 and 2026-07-28): a
// message that is not JSON is -32700 with a null id; JSON that is not a
// valid request is -32600, echoing the id only when it could be read from
// a request; an unknown method -32601; params that do not match the
// method's schema -32602; tool arguments failing the tool's inputSchema an
// isError result (SEP-1303); notifications and responses get no reply (HTTP
// 202). Over HTTP, a body that cannot be read as one valid message is 400;
// a 2025-era request that was read is answered 200 with its JSON-RPC reply;
// a 2026-era error maps to its status (-32601 404; -32602, -32020, -32022
// 400).
var malformedCases = []hcase{
	// Bytes that are not one JSON value.
	{name: "not JSON", msg: `hello`, method: "tools/call",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "truncated object", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"`, method: "tools/call",
		want: rpcErr(parseError, nil, "unexpected end of input").http(s400, s400)},
	{name: "truncated inside a string", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/ca`, method: "tools/call",
		want: rpcErr(parseError, nil, "unexpected end of input").http(s400, s400)},
	// stdio skips an empty line; over HTTP an empty body is a parse error.
	{name: "empty message", msg: ``, method: "tools/call",
		want: rpcErr(parseError, nil, "empty message").http(s400, s400),
		over: map[kind]expect{stdioK: noReply}},
	{name: "white space only", msg: " \t ", method: "tools/call",
		want: rpcErr(parseError, nil, "empty message").http(s400, s400)},
	{name: "BOM before the object", msg: "\xef\xbb\xbf" + echo("2", `{"message":"bom"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "NUL byte inside a string", msg: echo("2", "{\"message\":\"a\x00b\"}"), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "NUL byte after the object", msg: echo("2", `{"message":"x"}`) + "\x00", method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "trailing garbage after the object", msg: echo("2", `{"message":"x"}`) + `xyz`, method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "two objects on one line", msg: echo("2", `{"message":"x"}`) + echo("3", `{"message":"y"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "more than one value").http(s400, s400)},
	{name: "trailing comma", msg: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M,}}`, method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "single-quoted strings", msg: `{'jsonrpc':'2.0','id':2,'method':'ping'}`, method: "ping",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "comment inside the object", msg: `{"jsonrpc":"2.0",/* hi */"id":2,"method":"ping"}`, method: "ping",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "NaN in arguments", msg: echo("2", `{"message":NaN}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "id with a leading zero", msg: echo("02", `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "not valid JSON").http(s400, s400)},
	{name: "invalid UTF-8 in an argument", msg: echo("2", "{\"message\":\"\xc3\x28\"}"), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "invalid UTF-8").http(s400, s400)},
	{name: "overlong UTF-8 encoding", msg: echo("2", "{\"message\":\"\xc0\xaf\"}"), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "invalid UTF-8").http(s400, s400)},
	{name: "UTF-8 encoded surrogate", msg: echo("2", "{\"message\":\"\xed\xa0\x80\"}"), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "invalid UTF-8").http(s400, s400)},
	{name: "lone high surrogate escape", msg: echo("2", `{"message":"\ud800"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "surrogate").http(s400, s400)},
	{name: "lone low surrogate escape", msg: echo("2", `{"message":"x\udc00y"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "surrogate").http(s400, s400)},
	{name: "reversed surrogate pair escape", msg: echo("2", `{"message":"\ude00\ud83d"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "surrogate").http(s400, s400)},
	// Well-formed escapes are data, echoed exactly.
	echoCase("surrogate pair escape is data", echo("2", `{"message":"\ud83d\ude00"}`), ok(2, "Echo: \U0001F600")),
	echoCase("escaped NUL is data", echo("2", `{"message":"a\u0000b"}`), ok(2, "Echo: a\x00b")),
	// A CR before the newline (stdio) or trailing white space (HTTP) is
	// framing, not content.
	echoCase("trailing CR and white space", echo("2", `{"message":"crlf"}`)+" \r", ok(2, "Echo: crlf")),

	// JSON that is not a single request object.
	{name: "top-level empty array", msg: `[]`, method: "tools/call",
		want: rpcErr(invalidRequest, nil, "batch").http(s400, s400)},
	{name: "batch of two requests", msg: `[` + echo("1", `{"message":"a"}`) + `,` + echo("2", `{"message":"b"}`) + `]`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "batch").http(s400, s400)},
	{name: "batch of one notification", msg: `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, method: "notifications/initialized",
		want: rpcErr(invalidRequest, nil, "batch").http(s400, s400)},
	{name: "top-level number", msg: `42`, method: "tools/call",
		want: rpcErr(invalidRequest, nil, "must be a JSON object").http(s400, s400)},
	{name: "top-level string", msg: `"tools/call"`, method: "tools/call",
		want: rpcErr(invalidRequest, nil, "must be a JSON object").http(s400, s400)},
	{name: "top-level null", msg: `null`, method: "tools/call",
		want: rpcErr(invalidRequest, nil, "must be a JSON object").http(s400, s400)},
	{name: "top-level true", msg: `true`, method: "tools/call",
		want: rpcErr(invalidRequest, nil, "must be a JSON object").http(s400, s400)},
	{name: "empty object", msg: `{}`, method: "tools/call",
		want: rpcErr(invalidRequest, nil, "").http(s400, s400)},

	// The envelope: version, case variants, duplicates.
	{name: "missing jsonrpc", msg: `{"id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 3, `"jsonrpc" must be "2.0"`).http(s400, s400)},
	{name: "jsonrpc 1.0", msg: `{"jsonrpc":"1.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 3, `"jsonrpc" must be "2.0"`).http(s400, s400)},
	{name: "jsonrpc as a number", msg: `{"jsonrpc":2.0,"id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 3, `"jsonrpc" must be "2.0"`).http(s400, s400)},
	{name: "Method case variant", msg: `{"jsonrpc":"2.0","id":4,"Method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 4, `did you mean "method"`).http(s400, s400)},
	{name: "ID case variant", msg: `{"jsonrpc":"2.0","ID":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, `did you mean "id"`).http(s400, s400)},
	{name: "JSONRPC case variant", msg: `{"JSONRPC":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 4, `did you mean "jsonrpc"`).http(s400, s400)},
	{name: "Params case variant", msg: `{"jsonrpc":"2.0","id":4,"method":"tools/call","Params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 4, `did you mean "params"`).http(s400, s400)},
	{name: "duplicate method", msg: `{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 5, `duplicate member "method"`).http(s400, s400)},
	{name: "duplicate method, one escaped", msg: `{"jsonrpc":"2.0","id":5,"method":"ping","m\u0065thod":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 5, `duplicate member "method"`).http(s400, s400)},
	{name: "duplicate id", msg: `{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, `duplicate member "id"`).http(s400, s400)},
	{name: "duplicate params", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get-version"$M},"params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 5, `duplicate member "params"`).http(s400, s400)},
	{name: "duplicate name inside params", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get-version","name":"echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 5, "duplicate").http(s200, s400)},
	{name: "duplicate member inside _meta", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":1,"progressToken":2}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 5, "duplicate").http(s200, s400)},
	{name: "duplicate _meta inside params", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":1},"_meta":{$I"progressToken":2}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 5, "duplicate").http(s200, s400)},
	{name: "_Meta case variant inside params", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_Meta":{$I"progressToken":1}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 5, `did you mean "_meta"`).http(s200, s400),
		// Over 2026-07-28 HTTP the transport finds no _meta first.
		over: map[kind]expect{modernK: rpcErr(invalidParams, 5, "params._meta").http(0, s400)}},
	// Names and values spelled with escapes are the names and values
	// they spell, in the body and in _meta alike.
	echoCase("tool name and _meta spelled with escapes", `{"jsonrpc":"2.0","id":5,"method":"tools\/call","params":{"n\u0061me":"ec\u0068o","arguments":{"message":"x"}$M}}`, ok(5, "Echo: x")),
	{name: "2026-era _meta member names spelled with escapes", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_m\u0065ta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol\/clientCapabilities":{}}}}`,
		method: "tools/call", tool: "echo", only: []kind{modernK},
		want: ok(5, "Echo: x")},
	echoCase("duplicate member inside arguments", echo("5", `{"message":"a","message":"b"}`), toolErr(5, "duplicate")),
	echoCase("Message case variant inside arguments", echo("5", `{"Message":"a"}`), toolErr(5, `invalid arguments for tool "echo"`)),

	// Ids.
	{name: "id object", msg: echo(`{"a":1}`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "not an object").http(s400, s400)},
	{name: "id array", msg: echo(`[1]`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "not an array").http(s400, s400)},
	{name: "id boolean", msg: echo(`true`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "not a boolean").http(s400, s400)},
	{name: "id null", msg: echo(`null`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "not null").http(s400, s400)},
	{name: "id fraction", msg: echo(`1.5`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "not a fraction").http(s400, s400)},
	{name: "id with an exponent", msg: echo(`1e3`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "exponent").http(s400, s400)},
	{name: "id beyond 64 bits", msg: echo(`18446744073709551616`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "beyond 64 bits").http(s400, s400)},
	{name: "id of 300 digits", msg: echo(strings.Repeat("9", 300), `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "beyond 64 bits").http(s400, s400)},
	// Integers are echoed digit for digit, never through a float.
	echoCase("id max int64", echo(`9223372036854775807`, `{"message":"x"}`), ok(int64(9223372036854775807), "Echo: x")),
	echoCase("id min int64", echo(`-9223372036854775808`, `{"message":"x"}`), ok(int64(-9223372036854775808), "Echo: x")),
	echoCase("empty string id", echo(`""`, `{"message":"x"}`), ok("", "Echo: x")),
	echoCase("string id with escapes", echo(`"q\"\\\/\b\f\n\r\t\u00e9\u2028\ud83d\ude00"`, `{"message":"x"}`),
		ok("q\"\\/\b\f\n\r\té\u2028\U0001F600", "Echo: x")),
	echoCase("string id with an escaped NUL", echo(`"a\u0000b"`, `{"message":"x"}`), ok("a\x00b", "Echo: x")),
	// Ids holding characters JSON must escape but Go's strconv.Quote writes
	// its own way (\a, \v, \x7f, \U000e0001) must still be echoed as JSON.
	echoCase("string id with BEL and VT", echo(`"\u0007\u000b"`, `{"message":"x"}`), ok("\a\v", "Echo: x")),
	echoCase("string id with DEL", echo(`"\u007f"`, `{"message":"x"}`), ok("\x7f", "Echo: x")),
	echoCase("string id with a non-printable astral character", echo(`"\udb40\udc01"`, `{"message":"x"}`), ok("\U000E0001", "Echo: x")),
	{name: "unknown method with a control character in the id", msg: `{"jsonrpc":"2.0","id":"\u0001","method":"tools/destroy","params":{$m}}`, method: "tools/destroy",
		want: rpcErr(methodNotFound, "\x01", `"tools/destroy"`).http(s200, s404)},
	{name: "string id with invalid UTF-8", msg: echo("\"\xff\xfe\"", `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "invalid UTF-8").http(s400, s400)},
	{name: "string id with a lone surrogate escape", msg: echo(`"\ud800"`, `{"message":"x"}`), method: "tools/call", tool: "echo",
		want: rpcErr(parseError, nil, "surrogate").http(s400, s400)},

	// Methods.
	{name: "unknown method", msg: `{"jsonrpc":"2.0","id":8,"method":"tools/destroy","params":{$m}}`, method: "tools/destroy",
		want: rpcErr(methodNotFound, 8, `"tools/destroy"`).http(s200, s404)},
	{name: "method differing by case", msg: `{"jsonrpc":"2.0","id":8,"method":"Tools/Call","params":{"name":"echo","arguments":{"message":"x"}$M}}`, method: "Tools/Call", tool: "echo",
		want: rpcErr(methodNotFound, 8, `"Tools/Call"`).http(s200, s404)},
	{name: "empty method", msg: `{"jsonrpc":"2.0","id":8,"method":"","params":{$m}}`,
		want: rpcErr(invalidRequest, 8, `"method" must not be empty`).http(s400, s400)},
	{name: "method as a number", msg: `{"jsonrpc":"2.0","id":8,"method":7,"params":{$m}}`, method: "7",
		want: rpcErr(invalidRequest, 8, `"method" must be a string`).http(s400, s400)},
	{name: "unknown notification", msg: `{"jsonrpc":"2.0","method":"notifications/bogus","params":{"x":1}}`, method: "notifications/bogus",
		want: noReply},
	{name: "unknown notification without params", msg: `{"jsonrpc":"2.0","method":"x/y"}`, method: "x/y",
		want: noReply},
	// A second initialize: stdio refuses it in the open session; over HTTP
	// an initialize must not name a session; 2026-07-28 has no initialize.
	{name: "initialize again", msg: `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}$M}}`, method: "initialize",
		over: map[kind]expect{
			stdioK:  rpcErr(invalidRequest, 9, "already initialized"),
			legacyK: rpcErr(invalidRequest, 9, "must not carry Mcp-Session-Id").http(s400, 0),
			modernK: rpcErr(methodNotFound, 9, `"initialize"`).http(0, s404),
		}},
	{name: "initialized again", msg: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, method: "notifications/initialized",
		want: noReply},
	{name: "notification method sent as a request", msg: `{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":1$M}}`, method: "notifications/cancelled",
		want: rpcErr(methodNotFound, 9, `"notifications/cancelled"`).http(s200, s404)},
	{name: "tools/list with an invalid cursor", msg: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"not-a-cursor"$M}}`, method: "tools/list",
		want: rpcErr(invalidParams, 9, "cursor").http(s200, s400)},
	{name: "tools/list with a numeric cursor", msg: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":5$M}}`, method: "tools/list",
		want: rpcErr(invalidParams, 9, "cursor").http(s200, s400)},
	// ping exists in 2025-11-25 only.
	{name: "ping", msg: `{"jsonrpc":"2.0","id":9,"method":"ping","params":{$m}}`, method: "ping",
		want: ok(9, ""),
		over: map[kind]expect{modernK: rpcErr(methodNotFound, 9, `"ping"`).http(0, s404)}},
	// server/discover exists in 2026-07-28 only.
	{name: "server/discover", msg: `{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{$m}}`, method: "server/discover",
		want: rpcErr(methodNotFound, 9, `"server/discover"`).http(s200, 0),
		over: map[kind]expect{modernK: ok(9, "")}},

	// Params.
	{name: "params array", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":["echo"]}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 10, "must be an object").http(s200, s400),
		over: map[kind]expect{modernK: rpcErr(invalidParams, 10, "params._meta").http(0, s400)}},
	{name: "params string", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"echo"}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, 10, `"params" must be an object`).http(s400, s400)},
	{name: "params number", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":5}`, method: "tools/call",
		want: rpcErr(invalidRequest, 10, `"params" must be an object`).http(s400, s400)},
	{name: "params null", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":null}`, method: "tools/call",
		want: rpcErr(invalidRequest, 10, `"params" must be an object`).http(s400, s400)},
	{name: "tools/call without params", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call"}`, method: "tools/call",
		want: rpcErr(invalidParams, 10, "params are missing").http(s200, s400),
		over: map[kind]expect{modernK: rpcErr(invalidParams, 10, "params._meta").http(0, s400)}},
	{name: "tools/call without name", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{"message":"x"}$M}}`, method: "tools/call",
		want: rpcErr(invalidParams, 10, `"name" is required`).http(s200, s400)},
	{name: "tool name not a string", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":5,"arguments":{"message":"x"}$M}}`, method: "tools/call",
		want: rpcErr(invalidParams, 10, "name").http(s200, s400)},
	{name: "unknown tool", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}$M}}`, method: "tools/call", tool: "no-such-tool",
		want: rpcErr(invalidParams, 10, `unknown tool: "no-such-tool"`).http(s200, s400)},
	{name: "tool name differing by case", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"Echo","arguments":{"message":"x"}$M}}`, method: "tools/call", tool: "Echo",
		want: rpcErr(invalidParams, 10, `unknown tool: "Echo"`).http(s200, s400)},
	{name: "arguments an array", msg: echo("10", `["x"]`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 10, `"arguments" must be an object`).http(s200, s400)},
	{name: "arguments a string", msg: echo("10", `"x"`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 10, `"arguments" must be an object`).http(s200, s400)},
	{name: "arguments a number", msg: echo("10", `5`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 10, `"arguments" must be an object`).http(s200, s400)},
	{name: "task augmentation on a tool that forbids it", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"task":{"ttl":1000}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(methodNotFound, 10, "task").http(s200, s404),
		// 2026-07-28 (SEP-2663): params.task is a 2025 member, tolerated and
		// ignored; the tool runs as a plain call.
		over: map[kind]expect{modernK: ok(10, "x")}},
	// Arguments failing the inputSchema are tool errors (SEP-1303).
	echoCase("argument of the wrong type", echo("11", `{"message":5}`), toolErr(11, `invalid arguments for tool "echo"`)),
	echoCase("missing required argument", echo("11", `{}`), toolErr(11, `invalid arguments for tool "echo"`)),
	echoCase("argument the schema forbids", echo("11", `{"message":"x","extra":true}`), toolErr(11, `invalid arguments for tool "echo"`)),
	// Valid JSON nested deeper than the decoder's limit: RFC 8259 lets a
	// parser limit depth, but the message is valid JSON and its id was
	// readable, so the reply must name the request; a -32700 with a null id
	// leaves the client waiting for an answer it can never match.
	echoCase("arguments nested 10000 deep", echo("11", `{"message":"x","deep":`+deepValue+`}`),
		toolErr(11, `invalid arguments for tool "echo"`)),
	echoCase("arguments nested 9000 deep", echo("11", `{"message":"x","deep":`+strings.Repeat("[", 9000)+strings.Repeat("]", 9000)+`}`),
		toolErr(11, `invalid arguments for tool "echo"`)),
	// null is not an object: CallToolRequest's arguments is an optional
	// object, so null does not match the schema (-32602).
	{name: "arguments null", msg: echo("11", `null`), method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 11, "arguments").http(s200, s400)},
	{name: "number overflowing float64", msg: `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1e400,"b":1}$M}}`, method: "tools/call", tool: "get-sum",
		want: toolErr(11, `invalid arguments for tool "get-sum"`)},
	echoCase("huge string argument", echo("11", `{"message":"`+hugeString+`"}`),
		expect{id: 11, text: "Echo: hhhh", textLen: len("Echo: ") + hugeLen, ls: s200, ms: s200}),
	{name: "huge tool name", msg: `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"` + hugeString + `","arguments":{}$M}}`, method: "tools/call",
		edit: setHeader("Mcp-Name", hugeString),
		want: rpcErr(invalidParams, 11, "unknown tool").http(s200, s400)},

	// Progress tokens and _meta.
	{name: "progressToken a fraction", msg: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":1.5}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 12, "progressToken must be a string or an integer").http(s200, s400)},
	{name: "progressToken an object", msg: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":{"a":1}}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 12, "progressToken must be a string or an integer").http(s200, s400)},
	{name: "progressToken a boolean", msg: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":true}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 12, "progressToken must be a string or an integer").http(s200, s400)},
	{name: "progressToken an array", msg: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":[1]}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 12, "progressToken must be a string or an integer").http(s200, s400)},
	{name: "_meta not an object", msg: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":"x"}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 12, "_meta").http(s200, s400)},
	echoCase("progressToken a string with escapes", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{$I"progressToken":"t\"\u00e9"}}}`,
		ok(12, "Echo: x")),

	// Notifications and responses the server never asked for.
	{name: "progress for an unknown token", msg: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nope","progress":1}}`, method: "notifications/progress",
		want: noReply},
	{name: "progress with an object token", msg: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{"x":1},"progress":"lots"}}`, method: "notifications/progress",
		want: noReply},
	{name: "cancelled for an unknown id", msg: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999999,"reason":"x"}}`, method: "notifications/cancelled",
		want: noReply},
	{name: "cancelled with an object requestId", msg: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"id":1}}}`, method: "notifications/cancelled",
		want: noReply},
	{name: "cancelled without params", msg: `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, method: "notifications/cancelled",
		want: noReply},
	{name: "cancelled with params an array", msg: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`, method: "notifications/cancelled",
		want: noReply},
	{name: "response with an unknown id", msg: `{"jsonrpc":"2.0","id":"never-sent","result":{}}`,
		want: noReply},
	{name: "error response with an unknown id", msg: `{"jsonrpc":"2.0","id":424242,"error":{"code":-32000,"message":"x"}}`,
		want: noReply},
	{name: "error response with a null id", msg: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		want: noReply},
	// A malformed response is refused, but its id is the server's own: the
	// reply must not echo it, or it would answer the client's own request
	// with that id (JSON-RPC 2.0: the id is null when it cannot be read
	// from a request).
	{name: "response with result and error", msg: `{"jsonrpc":"2.0","id":7001,"result":{},"error":{"code":1,"message":"x"}}`,
		want: rpcErr(invalidRequest, nil, `must not carry both "result" and "error"`).http(s400, s400)},
	{name: "response with a malformed error", msg: `{"jsonrpc":"2.0","id":7002,"error":{"code":"x","message":"x"}}`,
		want: rpcErr(invalidRequest, nil, "malformed error object").http(s400, s400)},

	// Messages over the size limit: stdio answers -32600 with the id when
	// the line's first bytes show a request's; HTTP refuses the body (413).
	{name: "oversized request, id first", msg: `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + overLimit + `"}$M}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "exceeds the limit").http(s413, s413),
		over: map[kind]expect{stdioK: rpcErr(invalidRequest, "big", "exceeds the size limit")}},
	{name: "oversized request, id last", msg: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + overLimit + `"}$M},"id":"big"}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidRequest, nil, "exceeds the limit").http(s413, s413),
		over: map[kind]expect{stdioK: rpcErr(invalidRequest, nil, "exceeds the size limit")}},
	{name: "oversized response", msg: `{"jsonrpc":"2.0","id":"r","result":{"x":"` + overLimit + `"}}`,
		want: rpcErr(invalidRequest, nil, "exceeds the limit").http(s413, s413),
		over: map[kind]expect{stdioK: rpcErr(invalidRequest, nil, "exceeds the size limit")}},
	{name: "oversized chunked body", msg: echo("13", `{"message":"`+overLimit+`"}`), method: "tools/call", tool: "echo", only: httpOnly,
		edit: func(r *http.Request, _ kind) { r.ContentLength = -1 },
		want: rpcErr(invalidRequest, nil, "exceeds the limit").http(s413, s413)},

	// Protocol versions.
	// An unknown version in _meta: stdio and 2026-era HTTP refuse it with
	// -32022 naming what is supported; in a 2025-era HTTP session the
	// MCP-Protocol-Version header (2025-11-25) disagrees with it first.
	{name: "unsupported version in _meta", msg: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, method: "tools/call", tool: "echo",
		edit: func(r *http.Request, k kind) {
			if k == modernK {
				r.Header.Set("MCP-Protocol-Version", "2099-01-01")
			}
		},
		want: rpcErr(unsupportedVersion, 14, "2099-01-01").withData(`"requested":"2099-01-01"`).http(0, s400),
		over: map[kind]expect{legacyK: rpcErr(headerMismatch, 14, "does not match").http(s400, 0)}},
	{name: "_meta version without client capabilities", msg: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 14, "clientCapabilities").http(s400, s400)},
	{name: "_meta version not a string", msg: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 14, "").http(s200, s400)},
	{name: "client capabilities not an object", msg: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`, method: "tools/call", tool: "echo",
		want: rpcErr(invalidParams, 14, "clientCapabilities").http(s400, s400)},
	// The MCP-Protocol-Version header names an unsupported revision.
	headerCase("unsupported MCP-Protocol-Version header", 14, setHeader("MCP-Protocol-Version", "1999-01-01"), expect{}).byEra(
		rpcErr(invalidRequest, 14, "unsupported MCP-Protocol-Version").http(s400, 0),
		rpcErr(headerMismatch, 14, "does not match").http(0, s400)),
	{name: "MCP-Protocol-Version header of the other era", msg: echo("14", `{"message":"x"}`), method: "tools/call", tool: "echo", only: []kind{modernK},
		edit: setHeader("MCP-Protocol-Version", "2025-11-25"),
		want: rpcErr(headerMismatch, 14, "does not match").http(0, s400)},
	headerCase("MCP-Protocol-Version header missing", 14, setHeader("MCP-Protocol-Version", ""), expect{}).byEra(
		// Absent means 2025-03-26, which the session may use.
		ok(14, "Echo: x"),
		rpcErr(headerMismatch, 14, "MCP-Protocol-Version header is required").http(0, s400)),
	{name: "_meta missing on a 2026-era request", msg: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`, method: "tools/call", tool: "echo", only: []kind{modernK},
		want: rpcErr(invalidParams, 14, "params._meta").http(0, s400)},

	// HTTP only: media types, Accept, headers, sessions, verbs, Origin.
	headerCase("Content-Type text/plain", 15, setHeader("Content-Type", "text/plain"),
		rpcErr(invalidRequest, nil, "Content-Type must be application/json").http(s415, s415)),
	headerCase("Content-Type missing", 15, setHeader("Content-Type", ""),
		rpcErr(invalidRequest, nil, "Content-Type must be application/json").http(s415, s415)),
	headerCase("Content-Type with charset", 15, setHeader("Content-Type", "application/json; charset=utf-8"),
		ok(15, "Echo: x")),
	headerCase("Accept missing", 15, setHeader("Accept", ""),
		rpcErr(invalidRequest, nil, "Accept must list both").http(s406, s406)),
	headerCase("Accept without text/event-stream", 15, setHeader("Accept", "application/json"),
		rpcErr(invalidRequest, nil, "Accept must list both").http(s406, s406)),
	hcase{name: "Mcp-Method mismatch", msg: echo("15", `{"message":"x"}`), method: "tools/list", tool: "echo", only: httpOnly,
		edit: setHeader("Mcp-Method", "tools/list")}.byEra(
		ok(15, "Echo: x"), // 2025-11-25 defines no Mcp-Method
		rpcErr(headerMismatch, 15, `Mcp-Method header "tools/list" does not match`).http(0, s400)),
	{name: "Mcp-Method missing", msg: echo("15", `{"message":"x"}`), tool: "echo", only: []kind{modernK},
		want: rpcErr(headerMismatch, 15, "Mcp-Method header is required").http(0, s400)},
	{name: "Mcp-Method twice", msg: echo("15", `{"message":"x"}`), method: "tools/call", tool: "echo", only: []kind{modernK},
		edit: func(r *http.Request, _ kind) { r.Header.Add("Mcp-Method", "tools/call") },
		want: rpcErr(headerMismatch, 15, "appears 2 times").http(0, s400)},
	hcase{name: "Mcp-Name mismatch", msg: echo("15", `{"message":"x"}`), method: "tools/call", tool: "get-version", only: httpOnly,
		edit: setHeader("Mcp-Name", "get-version")}.byEra(
		ok(15, "Echo: x"),
		rpcErr(headerMismatch, 15, `Mcp-Name header value "get-version" does not match`).http(0, s400)),
	{name: "Mcp-Name missing", msg: echo("15", `{"message":"x"}`), method: "tools/call", only: []kind{modernK},
		want: rpcErr(headerMismatch, 15, "Mcp-Name header is required").http(0, s400)},
	{name: "Mcp-Name in base64 form", msg: echo("15", `{"message":"x"}`), method: "tools/call", only: []kind{modernK},
		edit: setHeader("Mcp-Name", "=?base64?ZWNobw==?="),
		want: ok(15, "Echo: x")},
	{name: "Mcp-Name with broken base64", msg: echo("15", `{"message":"x"}`), method: "tools/call", only: []kind{modernK},
		edit: setHeader("Mcp-Name", "=?base64?!!!?="),
		want: rpcErr(headerMismatch, 15, "invalid base64").http(0, s400)},
	{name: "Mcp-Name with raw non-ASCII bytes", msg: echo("15", `{"message":"x"}`), method: "tools/call", only: []kind{modernK},
		edit: setHeader("Mcp-Name", "\xc3\xa9cho"),
		want: rpcErr(headerMismatch, 15, "=?base64?").http(0, s400)},
	// A 2026-era request names no session: an unknown one is ignored.
	headerCase("unknown session id", 16, setHeader("Mcp-Session-Id", "no-such-session"), expect{}).byEra(
		rpcErr(invalidRequest, 16, "session not found").http(s404, 0),
		ok(16, "Echo: x")),
	{name: "session id missing", msg: echo("16", `{"message":"x"}`), only: []kind{legacyK},
		edit: setHeader("Mcp-Session-Id", ""),
		want: rpcErr(invalidRequest, 16, "Mcp-Session-Id header is required").http(s400, 0)},
	hcase{name: "notification without session id", msg: `{"jsonrpc":"2.0","method":"notifications/bogus"}`, method: "notifications/bogus", only: httpOnly,
		edit: setHeader("Mcp-Session-Id", "")}.byEra(
		rpcErr(invalidRequest, nil, "Mcp-Session-Id header is required").http(s400, 0),
		noReply),
	legacyVerbCase("GET without Accept text/event-stream", http.MethodGet, "Accept", "application/json",
		rpcErr(invalidRequest, nil, "Accept must list text/event-stream").http(s406, 0)),
	legacyVerbCase("GET with an unknown session", http.MethodGet, "Mcp-Session-Id", "no-such-session",
		rpcErr(invalidRequest, nil, "session not found").http(s404, 0)),
	legacyVerbCase("GET with a bogus Last-Event-ID", http.MethodGet, "Last-Event-ID", "not-an-event",
		rpcErr(invalidRequest, nil, `cannot resume after event "not-an-event"`).http(s400, 0)),
	legacyVerbCase("DELETE with an unknown session", http.MethodDelete, "Mcp-Session-Id", "no-such-session",
		rpcErr(invalidRequest, nil, "session not found").http(s404, 0)),
	legacyVerbCase("DELETE without session id", http.MethodDelete, "Mcp-Session-Id", "",
		rpcErr(invalidRequest, nil, "Mcp-Session-Id header is required").http(s400, 0)),
	{name: "PUT", verb: http.MethodPut, only: httpOnly,
		want: rpcErr(invalidRequest, nil, "method PUT is not allowed").http(s405, s405)},
	headerCase("Origin not allowed", 17, setHeader("Origin", "http://evil.example.com"),
		rpcErr(invalidRequest, nil, "forbidden: Origin").http(s403, s403)),
	headerCase("Origin null", 17, setHeader("Origin", "null"),
		rpcErr(invalidRequest, nil, "forbidden: Origin").http(s403, s403)),
	headerCase("Origin of a look-alike host", 17, setHeader("Origin", "http://localhost.evil.com"),
		rpcErr(invalidRequest, nil, "forbidden: Origin").http(s403, s403)),
	headerCase("loopback Origin allowed", 17, setHeader("Origin", "http://localhost:3000"),
		ok(17, "Echo: x")),
	headerCase("Host not allowed", 17, func(r *http.Request, _ kind) { r.Host = "evil.example.com" },
		rpcErr(invalidRequest, nil, "forbidden").http(s403, s403)),
}
