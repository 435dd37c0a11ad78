// Drives a toolwire server over stdio with the official TypeScript SDK client
// and prints what it saw as one JSON object; the Go test checks it.
// Usage: node stdio-client.mjs <command> [args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const client = new Client({ name: "ts-sdk-interop", version: "1.0.0" });
await client.connect(transport);

const out = { serverVersion: client.getServerVersion(), protocolVersion: transport._protocolVersion ?? null };
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
  echo: await call("echo", { message: "hello from ts" }),
  sum: await call("get-sum", { a: 7, b: 5 }),
  structured: await call("get-structured-content", { location: "Chicago" }),
  weather: await call("weather", {}),
  image: await call("get-tiny-image", {}),
  gallery: await call("gallery", {}),
  divideByZero: await call("safe_divide", { a: 1, b: 0 }),
  badArgs: await call("get-sum", { a: "seven" }),
  unknown: await call("no-such-tool", {}),
};
const progress = [];
out.calls.longRunning = await call("trigger-long-running-operation", { duration: 0.2, steps: 4 }, {
  onprogress: (p) => progress.push(p),
});
out.progress = progress;
await client.close();
console.log(JSON.stringify(out));
