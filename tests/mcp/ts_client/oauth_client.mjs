// Drives a running `pcp serve --http` through the MCP authorization flow with the official
// TypeScript SDK's OAuth client (auth.js + StreamableHTTPClientTransport's authProvider), playing
// the person at the consent page with the approval code the server prints on its stderr.
// Usage: node oauth_client.mjs URL STDERR_LOG_PATH
// Prints one JSON object: what each step saw (the pytest side asserts on it).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, stderrLog] = process.argv.slice(2);
const REDIRECT = "http://127.0.0.1:9/ts-callback";
const base = new URL(url).origin;

const provider = {
  stored: {},
  redirects: 0,
  get redirectUrl() { return REDIRECT; },
  get clientMetadata() {
    return { client_name: "TS Assistant", redirect_uris: [REDIRECT],
             grant_types: ["authorization_code", "refresh_token"], response_types: ["code"],
             token_endpoint_auth_method: "none" };
  },
  clientInformation() { return this.stored.client; },
  saveClientInformation(info) { this.stored.client = info; },
  tokens() { return this.stored.tokens; },
  saveTokens(tokens) { this.stored.tokens = tokens; },
  saveCodeVerifier(v) { this.stored.verifier = v; },
  codeVerifier() { return this.stored.verifier; },
  redirectToAuthorization(authorizationUrl) { this.redirects += 1; this.authorizationUrl = authorizationUrl; },
};

async function approvalCode(requestId) {
  for (let i = 0; i < 200; i++) {
    for (const line of readFileSync(stderrLog, "utf8").split("\n")) {
      if (line.includes(`pcp grant approve ${requestId}`)) return line.match(/approval code (\d{4}-\d{4})/)[1];
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no approval code for ${requestId}`);
}

async function playPerson(authorizationUrl) {
  const first = await fetch(authorizationUrl, { redirect: "manual" });
  const consentUrl = new URL(first.headers.get("location"), base);
  const page = await fetch(consentUrl);
  const cookie = page.headers.get("set-cookie").split(";")[0];
  const html = await page.text();
  const field = (name) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))[1];
  const requestId = consentUrl.searchParams.get("request");
  const form = new URLSearchParams({ request: requestId, csrf: field("csrf"),
                                     approval: await approvalCode(requestId), decision: "approve" });
  form.append("scope", "project:tidewatch");
  const answer = await fetch(new URL("/consent", base), { method: "POST", body: form, redirect: "manual",
                                                         headers: { cookie } });
  return new URL(answer.headers.get("location"));
}

async function listTools() {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "pcp-ts-oauth-test", version: "1.0.0" });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  await client.close();
  return tools;
}

const out = {};
try {
  await listTools();
  out.first_connect = "authorized without consent?";
} catch (error) {
  out.first_connect = error instanceof UnauthorizedError ? "unauthorized" : String(error);
}
out.redirected = provider.redirects;
const back = await playPerson(provider.authorizationUrl);
out.state_matches = back.searchParams.get("state") === new URL(provider.authorizationUrl).searchParams.get("state");
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
await transport.finishAuth(back.searchParams.get("code"));
out.tools = await listTools();
const first = provider.stored.tokens;
out.expires_in = first.expires_in;
out.refresh = await auth(provider, { serverUrl: url });  // has a refresh token: rotates
const second = provider.stored.tokens;
out.rotated = second.refresh_token !== first.refresh_token && second.access_token !== first.access_token;
out.tools_after_refresh = (await listTools()).length;
const revoked = await fetch(new URL("/revoke", base), { method: "POST", body: new URLSearchParams({
  token: second.access_token, client_id: provider.stored.client.client_id }) });
out.revoke_status = revoked.status;
const probe = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${second.access_token}`,
  "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }) });
out.after_revoke_status = probe.status;
console.log(JSON.stringify(out));
