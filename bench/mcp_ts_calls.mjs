// Back-to-back calls on one TypeScript SDK client (bench/mcp_ts_bench.py runs it).
// Usage: node bench/mcp_ts_calls.mjs URL TOKEN CALLS SDK_DIR
// SDK_DIR: an installed @modelcontextprotocol/sdk (tests/mcp/ts_client/node_modules/...).
// Prints one JSON object: per call kind, every call's wall time in ms (its fetch keeps the
// connection alive, so every call after the first rides the same connection).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [url, token, calls, sdkDir] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(resolve(sdkDir, "dist/esm", path)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "pcp-ts-bench", version: "1.0.0" });
await client.connect(transport);
const kinds = {
  "tools/list": () => client.listTools(),
  pcp_stats: () => client.callTool({ name: "pcp_stats", arguments: {} }),
  pcp_search: () => client.callTool({ name: "pcp_search", arguments: { query: "garden", limit: 10 } }),
};
const out = {};
for (const [name, call] of Object.entries(kinds)) {
  await call(); // warm
  out[name] = [];
  for (let i = 0; i < Number(calls); i++) {
    const started = performance.now();
    const answer = await call();
    out[name].push(performance.now() - started);
    if (answer.isError) throw new Error(`${name}: ${JSON.stringify(answer.content)}`);
  }
}
await client.close();
console.log(JSON.stringify(out));
