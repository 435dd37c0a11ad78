// Drives a toolwire server with the official TypeScript SDK client and prints
// what it saw as one JSON object; the Go tests check it.
// Usage: node ts-client.mjs stdio <command> [args...]
//        node ts-client.mjs http <endpoint URL>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { transportFromArgs } from "./transport.mjs";

const { mode, transport } = transportFromArgs("ts-client.mjs");
// The client exposes two roots; the server asks for them (roots/list) in the
// middle of a get-roots-list call, after pinging the client, and the SDK
// answers both requests on the same connection (over HTTP: on the call's SSE
// stream, answered by POSTs carrying the session id).
const client = new Client(
  { name: `ts-sdk-${mode}-interop`, version: "1.0.0" },
  { capabilities: { roots: { listChanged: false } } },
);
const rootsAsked = [];
client.setRequestHandler(ListRootsRequestSchema, async () => {
  rootsAsked.push(Date.now());
  return { roots: [{ uri: "file:///work/project", name: "project" }, { uri: "file:///tmp/scratch" }] };
});
await client.connect(transport);

const out = {
  serverVersion: client.getServerVersion(),
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
};
const tools = [];
let cursor;
let pages = 0;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  pages++;
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor && pages < 50);
out.pages = pages;
out.tools = tools.map((t) => t.name);

const call = async (name, args, extra) => {
  try {
    return await client.callTool({ name, arguments: args }, undefined, extra);
  } catch (e) {
    return { thrown: String(e && e.message ? e.message : e), code: e && e.code };
  }
};
out.calls = {
  echo: await call("echo", { message: `hello over ${mode}` }),
  sum: await call("get-sum", { a: 7, b: 5 }),
  structured: await call("get-structured-content", { location: "Chicago" }),
  weather: await call("weather", {}),
  image: await call("get-tiny-image", {}),
  gallery: await call("gallery", {}),
  version: await call("get-version", {}),
  divideByZero: await call("safe_divide", { a: 1, b: 0 }),
  badArgs: await call("get-sum", { a: "seven" }),
  unknown: await call("no-such-tool", {}),
  roots: await call("get-roots-list", {}),
};
out.rootsAsked = rootsAsked.length;
const progress = [];
out.calls.longRunning = await call("trigger-long-running-operation", { duration: 0.2, steps: 4 }, {
  onprogress: (p) => progress.push(p),
});
out.progress = progress;

if (mode === "http") {
  // Ending the session: DELETE, after which the id is unknown to the server.
  await transport.terminateSession();
  out.terminatedSessionId = transport.sessionId ?? null;
}
await client.close();
console.log(JSON.stringify(out));
