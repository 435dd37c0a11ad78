// Drives a toolwire server with the official TypeScript SDK client through
// everything besides tools: resources, resource templates, prompts,
// completion, logging and elicitation. Prints what it saw as one JSON object;
// the Go tests (cmd/toolwire/ts_protocol_interop_test.go) check it.
// Usage: node ts-client-protocol.mjs stdio <command> [args...]
//        node ts-client-protocol.mjs http <endpoint URL>
// The environment variable TS_PROTOCOL_PLAN (JSON) says what to ask for:
//   read:        [uri, ...]                      resources/read of each (besides
//                                                the first listed text and blob)
//   prompts:     [{name, args}, ...]            prompts/get of each
//   completions: [{ref, argument, context}, ...] completion/complete of each
//   logLevels:   [level, ...]                   logging/setLevel to each in turn,
//                                                calling logTool after each
//   logTool:     {name, args}                   a tool call that logs
//   logCalls:    {level: n}                     how often to call it at a level
//   elicitTool:  {name, args}                   a tool call that elicits; it is
//                                                called twice: accepted with
//                                                elicitAccept, then declined
//   elicitAccept: the content the client accepts with
// Every request that fails is reported as {thrown, code, data}, not fatal.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { transportFromArgs } from "./transport.mjs";

const { mode, transport } = transportFromArgs("ts-client-protocol.mjs");
const plan = JSON.parse(process.env.TS_PROTOCOL_PLAN || "{}");

const client = new Client(
  { name: `ts-sdk-${mode}-protocol-interop`, version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
// The elicitation handler accepts with plan.elicitAccept, or declines once
// elicitAction says so; it records every request it gets.
const elicitations = [];
let elicitAction = "accept";
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicitations.push({ action: elicitAction, params: req.params });
  if (elicitAction === "accept") {
    return { action: "accept", content: plan.elicitAccept ?? {} };
  }
  return { action: elicitAction };
});
// notifications/message, tagged with what the client was doing.
const logs = [];
let phase = "idle";
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push({ phase, ...n.params });
});

await client.connect(transport);

const attempt = async (f) => {
  try {
    return await f();
  } catch (e) {
    return { thrown: String(e && e.message ? e.message : e), code: e && e.code, data: e && e.data };
  }
};
// listAll follows nextCursor and reports the items and the page count.
const listAll = async (method, key) => {
  const items = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client[method](cursor ? { cursor } : {});
    pages++;
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor && pages < 50);
  return { pages, [key]: items };
};

const out = {
  serverVersion: client.getServerVersion(),
  capabilities: client.getServerCapabilities() ?? null,
  protocolVersion: transport.protocolVersion ?? null,
};

// Resources: every page of resources and of templates, then reads of the
// first listed text resource, the first listed blob one (by mime type), and
// the plan's URIs.
out.resources = await attempt(() => listAll("listResources", "resources"));
out.resourceTemplates = await attempt(() => listAll("listResourceTemplates", "resourceTemplates"));
const listed = out.resources.resources ?? [];
const isText = (r) => !r.mimeType || r.mimeType.startsWith("text/") || r.mimeType === "application/json";
out.firstText = listed.find(isText)?.uri ?? null;
out.firstBlob = listed.find((r) => !isText(r))?.uri ?? null;
out.reads = {};
for (const uri of [out.firstText, out.firstBlob, ...(plan.read ?? [])]) {
  if (uri && !(uri in out.reads)) {
    out.reads[uri] = await attempt(() => client.readResource({ uri }));
  }
}

// Prompts.
out.prompts = await attempt(() => listAll("listPrompts", "prompts"));
out.gotPrompts = [];
for (const p of plan.prompts ?? []) {
  out.gotPrompts.push({ ...p, result: await attempt(() => client.getPrompt({ name: p.name, arguments: p.args })) });
}

// Completion.
out.completions = [];
for (const c of plan.completions ?? []) {
  const params = { ref: c.ref, argument: c.argument };
  if (c.context) params.context = { arguments: c.context };
  out.completions.push({ ...c, result: await attempt(() => client.complete(params)) });
}

// Logging: for each level, set it, then call logTool logCalls[level] times
// (1 by default); messages are tagged with the level in force.
out.setLevel = {};
out.logCalls = {};
for (const level of plan.logLevels ?? []) {
  out.setLevel[level] = await attempt(async () => {
    await client.setLoggingLevel(level);
    return "ok";
  });
  if (plan.logTool) {
    phase = level;
    out.logCalls[level] = [];
    for (let i = 0; i < (plan.logCalls?.[level] ?? 1); i++) {
      out.logCalls[level].push(await attempt(() => client.callTool({ name: plan.logTool.name, arguments: plan.logTool.args ?? {} })));
    }
    // Let messages still on their way land in this phase.
    await new Promise((r) => setTimeout(r, 300));
    phase = "idle";
  }
}

// Elicitation: the same tool accepted, then declined.
if (plan.elicitTool) {
  const call = () => attempt(() => client.callTool({ name: plan.elicitTool.name, arguments: plan.elicitTool.args ?? {} }));
  out.elicitAccepted = await call();
  elicitAction = "decline";
  out.elicitDeclined = await call();
}
out.elicitations = elicitations;
// Let any notification still in flight land before closing.
await new Promise((r) => setTimeout(r, 50));
out.logs = logs;

await client.close();
console.log(JSON.stringify(out));
