// The transport both interop clients take from their command line:
//   stdio <command> [args...]  a child process on stdio
//   http <endpoint URL>        Streamable HTTP
// Exits with usage (naming script) on anything else.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export function transportFromArgs(script) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === "stdio") {
    const [command, ...args] = rest;
    return { mode, transport: new StdioClientTransport({ command, args, stderr: "ignore" }) };
  }
  if (mode === "http") {
    return { mode, transport: new StreamableHTTPClientTransport(new URL(rest[0])) };
  }
  console.error(`usage: ${script} stdio <command> [args...] | http <url>`);
  process.exit(2);
}
