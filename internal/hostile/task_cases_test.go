package hostile

// taskCases are hostile requests to the task methods and task-augmented
// calls (trigger-long-running-operation supports tasks). 2026-07-28
// requests here do not declare the tasks extension: the task methods answer
// them -32021 before reading anything else. They join the malformed-input
// table.
var taskCases = []hcase{
	{name: "tasks/get with a number taskId", msg: `{"jsonrpc":"2.0","id":60,"method":"tasks/get","params":{"taskId":7$M}}`,
		method: "tasks/get",
		want:   rpcErr(invalidParams, 60, `taskId`).http(s200, s400),
		over:   map[kind]expect{modernK: rpcErr(-32021, 60, `extension`).http(0, s400)}},
	{name: "tasks/get of an unknown task", msg: `{"jsonrpc":"2.0","id":61,"method":"tasks/get","params":{"taskId":"nope"$M}}`,
		method: "tasks/get", tool: "nope",
		want: rpcErr(invalidParams, 61, `no task "nope"`).http(s200, s400),
		over: map[kind]expect{modernK: rpcErr(-32021, 61, `extension`).http(0, s400).withData(`"io.modelcontextprotocol/tasks":{}`)}},
	{name: "tasks/get with the taskId missing", msg: `{"jsonrpc":"2.0","id":62,"method":"tasks/get","params":{$m}}`,
		method: "tasks/get",
		want:   rpcErr(invalidParams, 62, `"taskId" is required`).http(s200, s400),
		over:   map[kind]expect{modernK: rpcErr(-32021, 62, `extension`).http(0, s400)}},
	{name: "tasks/result of an unknown task", msg: `{"jsonrpc":"2.0","id":63,"method":"tasks/result","params":{"taskId":"nope"$M}}`,
		method: "tasks/result", tool: "nope",
		want: rpcErr(invalidParams, 63, `no task "nope"`).http(s200, s400),
		over: map[kind]expect{modernK: rpcErr(methodNotFound, 63, `tasks/result`).http(0, s404)}},
	{name: "tasks/list with a cursor it never issued", msg: `{"jsonrpc":"2.0","id":64,"method":"tasks/list","params":{"cursor":"AAAA"$M}}`,
		method: "tasks/list",
		want:   rpcErr(invalidParams, 64, `cursor`).http(s200, s400),
		over:   map[kind]expect{modernK: rpcErr(methodNotFound, 64, `tasks/list`).http(0, s404)}},
	{name: "tasks/cancel with a taskId of another case", msg: `{"jsonrpc":"2.0","id":65,"method":"tasks/cancel","params":{"TaskId":"x"$M}}`,
		method: "tasks/cancel",
		want:   rpcErr(invalidParams, 65, `TaskId`).http(s200, s400),
		over:   map[kind]expect{modernK: rpcErr(-32021, 65, `extension`).http(0, s400)}},
	{name: "tasks/update in a 2025 session", msg: `{"jsonrpc":"2.0","id":66,"method":"tasks/update","params":{"taskId":"x","inputResponses":[]$M}}`,
		method: "tasks/update", tool: "x",
		want: rpcErr(methodNotFound, 66, `tasks/update`).http(s200, s404),
		over: map[kind]expect{modernK: rpcErr(-32021, 66, `extension`).http(0, s400)}},
	{name: "params.task a string", msg: `{"jsonrpc":"2.0","id":67,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0,"steps":1},"task":"yes"$M}}`,
		method: "tools/call", tool: "trigger-long-running-operation",
		want: rpcErr(invalidParams, 67, `"task" must be an object`).http(s200, s400),
		over: map[kind]expect{modernK: ok(67, "completed")}},
	{name: "params.task with a negative ttl", msg: `{"jsonrpc":"2.0","id":68,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0,"steps":1},"task":{"ttl":-5}$M}}`,
		method: "tools/call", tool: "trigger-long-running-operation",
		want: rpcErr(invalidParams, 68, `task.ttl`).http(s200, s400),
		over: map[kind]expect{modernK: ok(68, "completed")}},
	{name: "params.task with a ttl of another case", msg: `{"jsonrpc":"2.0","id":69,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0,"steps":1},"task":{"TTL":5}$M}}`,
		method: "tools/call", tool: "trigger-long-running-operation",
		want: rpcErr(invalidParams, 69, `TTL`).http(s200, s400),
		over: map[kind]expect{modernK: ok(69, "completed")}},
}

func init() { malformedCases = append(malformedCases, taskCases...) }
