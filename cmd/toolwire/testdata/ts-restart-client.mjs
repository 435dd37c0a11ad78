// Holds one 2025-11-25 session of the official TypeScript SDK client across
// a restart of the server at <url>, and prints what it saw, one JSON object
// a line: {"phase":"before",...} once it called <tool> and its GET stream is
// open; then, after a line on stdin (the server is back), {"phase":"after",...}.
// Usage: node ts-restart-client.mjs <url> <echo tool>
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool] = process.argv.slice(2);
const limit = Date.now() + 60_000; // a hang, never an expected wait

// What went over the wire: initialize POSTs, and the status of every GET.
let inits = 0;
const gets = [];
const spy = async (input, init) => {
  const method = init?.method ?? "GET";
  if (method === "POST" && typeof init.body === "string") {
    try {
      const msgs = [JSON.parse(init.body)].flat();
      inits += msgs.filter((m) => m.method === "initialize").length;
    } catch {}
  }
  const res = await fetch(input, init);
  if (method === "GET") gets.push(res.status);
  return res;
};
const errors = [];
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: spy });
const client = new Client({ name: "ts-sdk-restart", version: "1.0.0" });
client.onerror = (e) => errors.push(String(e && e.message ? e.message : e));
await client.connect(transport);

const call = async (message) => {
  try {
    const res = await client.callTool({ name: tool, arguments: { message } });
    return { text: res.content?.[0]?.text ?? null, isError: !!res.isError };
  } catch (e) {
    return { thrown: String(e && e.message ? e.message : e) };
  }
};
const until = async (cond) => {
  while (!cond() && Date.now() < limit) await new Promise((r) => setTimeout(r, 10));
  return cond();
};

const before = await call("before");
const getOpen = await until(() => gets.length > 0);
const sessionBefore = transport.sessionId;
const getsBefore = gets.length;
console.log(JSON.stringify({ phase: "before", sessionId: sessionBefore, call: before, getOpen }));

const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));

const calls = [];
for (let i = 0; i < 3; i++) calls.push(await call(`after ${i}`));
// The SDK retries its GET stream a few times, then gives up on it (and
// only it): wait for either, and call once more.
await until(() => gets.length > getsBefore || errors.some((e) => e.includes("Maximum reconnection attempts")));
calls.push(await call("after 3"));
console.log(JSON.stringify({
  phase: "after",
  sessionId: transport.sessionId,
  protocolVersion: transport.protocolVersion ?? null,
  calls,
  inits,
  getsAfter: gets.slice(getsBefore),
  errors,
}));
lines.close();
await client.close();
