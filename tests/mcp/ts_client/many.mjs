// Several TypeScript SDK clients sharing one grant (one token), all connected at once.
// Usage: node many.mjs URL TOKEN COUNT
// Each client connects (the SDK then tries to open a GET event stream, as it does for every
// client) and stays connected; then every client in turn lists the tools and searches, then
// four of them search at the same moment (the server's default cap per client). Prints one
// JSON object: the client count and, for each step, the errors seen (none expected).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, countText] = process.argv.slice(2);
const count = Number(countText);
const out = { connected: 0, errors: [], answers: 0 };

function note(step, error) {
  out.errors.push({ step, error: String(error?.message ?? error) });
}

async function search(client, step) {
  const result = await client.callTool({ name: "pcp_search", arguments: { query: "tidewatch", limit: 2 } });
  if (result.isError) note(step, JSON.stringify(result.content));
  else if (result.structuredContent.results.length) out.answers += 1;
}

const clients = [];
for (let i = 0; i < count; i++) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: `pcp-ts-many-${i}`, version: "1.0.0" });
  try {
    await client.connect(transport);
    clients.push(client);
    out.connected += 1;
  } catch (error) {
    note(`connect ${i}`, error);
  }
}
for (const [i, client] of clients.entries()) {
  try {
    const tools = await client.listTools();
    if (!tools.tools.some((t) => t.name === "pcp_search")) note(`tools/list ${i}`, "no pcp_search");
    await search(client, `search ${i}`);
  } catch (error) {
    note(`client ${i}`, error);
  }
}
await Promise.all(clients.slice(0, 4).map((client, i) =>
  search(client, `together ${i}`).catch((error) => note(`together ${i}`, error))));
for (const client of clients) await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
