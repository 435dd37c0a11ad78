// Drives `toolwire serve` over Streamable HTTP with the official TypeScript
// SDK client (StreamableHTTPClientTransport) and prints what it saw as one
// JSON object; the Go test checks it.
// Usage: node http-client.mjs <node_modules dir> <endpoint URL>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, url] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "ts-sdk-http-interop", version: "1.0.0" });
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
  echo: await call("echo", { message: "hello over http" }),
  sum: await call("get-sum", { a: 7, b: 5 }),
  structured: await call("get-structured-content", { location: "Chicago" }),
  weather: await call("weather", {}),
  image: await call("get-tiny-image", {}),
  gallery: await call("gallery", {}),
  version: await call("get-version", {}),
  divideByZero: await call("safe_divide", { a: 1, b: 0 }),
  badArgs: await call("get-sum", { a: "seven" }),
  unknown: await call("no-such-tool", {}),
};
const progress = [];
out.calls.longRunning = await call("trigger-long-running-operation", { duration: 0.2, steps: 4 }, {
  onprogress: (p) => progress.push(p),
});
out.progress = progress;

// Ending the session: DELETE, after which the id is unknown to the server.
await transport.terminateSession();
out.terminatedSessionId = transport.sessionId ?? null;
await client.close();
console.log(JSON.stringify(out));
