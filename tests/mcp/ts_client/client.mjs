// Drives a running `pcp serve --http` with the official TypeScript SDK's streamable HTTP client.
// Usage: node client.mjs URL '{"desktop": TOKEN, "agent": TOKEN, "revoked": TOKEN}'
// Prints one JSON object: what each step saw (the pytest side asserts on it).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tokensJson] = process.argv.slice(2);
const tokens = JSON.parse(tokensJson);

async function connect(token, extraHeaders = {}) {
  const headers = { ...extraHeaders };
  if (token) headers.Authorization = `Bearer ${token}`;
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "pcp-ts-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function refused(token, extraHeaders = {}) {
  try {
    const client = await connect(token, extraHeaders);
    await client.listTools();
    await client.close();
    return { refused: false };
  } catch (error) {
    return { refused: true, code: error.code ?? null, error: String(error?.message ?? error) };
  }
}

const out = {};
const desktop = await connect(tokens.desktop);
out.tools = (await desktop.listTools()).tools.map((t) => t.name).sort();
const search = await desktop.callTool({ name: "pcp_search", arguments: { query: "tide", limit: null } });
out.search_error = search.isError ?? false;
out.search_ids = search.structuredContent.results.map((r) => r.id);
out.desktop_scopes = (await desktop.callTool({ name: "pcp_list_scopes", arguments: {} }))
  .structuredContent.scopes.map((s) => s.namespace).sort();

const agent = await connect(tokens.agent);
out.agent_scopes = (await agent.callTool({ name: "pcp_list_scopes", arguments: {} }))
  .structuredContent.scopes.map((s) => s.namespace).sort();
const star = await agent.callTool({ name: "pcp_search", arguments: { query: "Ada tide", scopes: ["*"], limit: 25 } });
out.agent_star_ids = star.structuredContent.results.map((r) => r.id);
await agent.close();

out.no_token = await refused(null);
out.wrong_token = await refused("pcp_000000000000_wrong");
out.revoked_token = await refused(tokens.revoked);
out.bad_origin = await refused(tokens.desktop, { Origin: "http://evil.example" });

try {
  await desktop.callTool({ name: "pcp_search", arguments: { query: "x".repeat(200000) } });
  out.oversized = { refused: false };
} catch (error) {
  out.oversized = { refused: true, code: error.code ?? null, error: String(error.message) };
}
const after = await desktop.callTool({ name: "pcp_stats", arguments: {} });
out.after_oversized_ok = !(after.isError ?? false);
await desktop.close();
process.stdout.write(JSON.stringify(out) + "\n");
