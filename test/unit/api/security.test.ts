// floe serve's guards, on loopback servers of its own (no Kafka or catalog needed): a
// non-loopback bind without a credential refuses to start; with a password, a request without
// a session is refused, a login gives a session whose changes need its CSRF token; a bearer
// token works without one; a cross-site POST is refused whatever it carries; a foreign Host is
// refused (DNS rebinding); answers carry the security headers; the password is kept as a
// scrypt hash.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { AuthSetupError } from "#src/api/auth.ts";
import { type Server, startServer } from "#src/api/serve.ts";
import type { Json } from "../../helpers/ui-server.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const PASSWORD = "correct horse battery staple";
const TOKEN = "t0ken-for-scripts-0123456789abcdef";
const dirs: string[] = [];
const servers: Server[] = [];
after(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "floe-serve-sec-"));
  dirs.push(dir);
  return dir;
}

async function serve(dir: string, env: Record<string, string> = {}): Promise<Server> {
  const noAuth = !env["FLOE_UI_PASSWORD"] && !env["FLOE_UI_TOKEN"];
  const s = await startServer({ stateDir: dir, host: "127.0.0.1", port: 0, env, logFormat: "none", noAuth });
  servers.push(s);
  return s;
}

const source = JSON.stringify({ name: "s", kafka: { bootstrap_servers: ["127.0.0.1:9092"] } });

test("a non-loopback address without a credential refuses to start, in the API and in the CLI", async () => {
  await assert.rejects(
    startServer({ stateDir: stateDir(), host: "0.0.0.0", port: 0, env: {} }),
    (e: unknown) => e instanceof AuthSetupError && /FLOE_UI_PASSWORD/.test((e as Error).message),
  );
  const cli = spawnSync(
    process.execPath,
    [join(root, "src", "cli", "main.ts"), "serve", "--state-dir", stateDir(), "--listen", "0.0.0.0:0"],
    { encoding: "utf8", env: { ...process.env, FLOE_UI_PASSWORD: "", FLOE_UI_TOKEN: "" }, timeout: 30_000 },
  );
  assert.equal(cli.status, 2, cli.stderr);
  assert.match(cli.stderr, /not a loopback address\) needs a credential/);
  await assert.rejects(
    startServer({ stateDir: stateDir(), host: "127.0.0.1", port: 0, env: { FLOE_UI_PASSWORD: "short" } }),
    AuthSetupError,
  );
});

test("with a password: no session, no access; a session's changes need its CSRF token", async () => {
  const dir = stateDir();
  const s = await serve(dir, { FLOE_UI_PASSWORD: PASSWORD });
  const url = (p: string) => new URL(p, s.url).href;
  assert.equal((await fetch(url("/api/sources"))).status, 401);
  assert.equal(
    (
      await fetch(url("/api/sources"), {
        method: "POST",
        body: source,
        headers: { "content-type": "application/json" },
      })
    ).status,
    401,
  );
  const session = await (await fetch(url("/api/session"))).json();
  assert.deepEqual(session, { authRequired: true, authenticated: false, csrfToken: null });

  const wrong = await fetch(url("/api/login"), {
    method: "POST",
    body: JSON.stringify({ password: "nope" }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(wrong.status, 401);
  const login = await fetch(url("/api/login"), {
    method: "POST",
    body: JSON.stringify({ password: PASSWORD }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(login.status, 200);
  const cookie = login.headers.get("set-cookie")!;
  assert.match(cookie, /floe_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
  const { csrfToken } = (await login.json()) as Json;
  const jar = cookie.split(";")[0]!;

  assert.equal((await fetch(url("/api/sources"), { headers: { cookie: jar } })).status, 200);
  const noCsrf = await fetch(url("/api/sources"), {
    method: "POST",
    body: source,
    headers: { cookie: jar, "content-type": "application/json" },
  });
  assert.equal(noCsrf.status, 403);
  const created = await fetch(url("/api/sources"), {
    method: "POST",
    body: source,
    headers: { cookie: jar, "content-type": "application/json", "x-floe-csrf": csrfToken },
  });
  assert.equal(created.status, 201);
  // The audit names who changed it.
  const audit = (await (await fetch(url("/api/audit"), { headers: { cookie: jar } })).json()) as Json;
  assert.equal(audit[0].actor, "password");

  const file = join(dir, "auth.json");
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const stored = readFileSync(file, "utf8");
  assert.ok(!stored.includes(PASSWORD));
  assert.match(stored, /"algorithm":"scrypt"/);
  // A later start keeps the stored password, with or without the variable.
  const again = await serve(dir, {});
  const relogin = await fetch(new URL("/api/login", again.url), {
    method: "POST",
    body: JSON.stringify({ password: PASSWORD }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(relogin.status, 200);
});

test("the probes answer without a credential and say nothing but ok", async () => {
  const s = await serve(stateDir(), { FLOE_UI_PASSWORD: PASSWORD });
  assert.equal((await fetch(new URL("/api/sources", s.url))).status, 401, "the API itself needs the password");
  for (const path of ["/healthz", "/readyz"]) {
    const answer = await fetch(new URL(path, s.url));
    assert.equal(answer.status, 200, path);
    assert.equal(answer.headers.get("cache-control"), "no-store");
    assert.deepEqual(await answer.json(), { status: "ok" }, path);
  }
  assert.equal((await fetch(new URL("/readyz", s.url), { method: "POST" })).status, 404, "a probe is a GET");
});

test("a bearer token works without a session or CSRF token; a wrong one is refused", async () => {
  const s = await serve(stateDir(), { FLOE_UI_TOKEN: TOKEN });
  const url = new URL("/api/sources", s.url).href;
  assert.equal((await fetch(url, { headers: { authorization: "Bearer wrong-token-0123456789abcdef" } })).status, 401);
  const created = await fetch(url, {
    method: "POST",
    body: source,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  });
  assert.equal(created.status, 201);
});

test("a cross-site POST is refused, with the CSRF token or not", async () => {
  const s = await serve(stateDir());
  const { csrfToken } = (await (await fetch(new URL("/api/session", s.url))).json()) as Json;
  const url = new URL("/api/sources", s.url).href;
  const headers = { "content-type": "application/json", "x-floe-csrf": csrfToken };
  const evil = await fetch(url, {
    method: "POST",
    body: source,
    headers: { ...headers, origin: "http://evil.example" },
  });
  assert.equal(evil.status, 403);
  const site = await fetch(url, {
    method: "POST",
    body: source,
    headers: { ...headers, "sec-fetch-site": "cross-site" },
  });
  assert.equal(site.status, 403);
  // A form post from another site can carry no custom header: refused on the token alone.
  const form = await fetch(url, {
    method: "POST",
    body: "name=x",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(form.status, 403);
  assert.equal(((await (await fetch(url)).json()) as Json).length, 0, "nothing was created");
  const same = await fetch(url, {
    method: "POST",
    body: source,
    headers: { ...headers, origin: new URL(s.url).origin },
  });
  assert.equal(same.status, 201);
});

test("a foreign Host is refused (DNS rebinding), and answers carry the security headers", async () => {
  const s = await serve(stateDir());
  const { port } = new URL(s.url);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/api/sources", headers: { host: `rebound.example:${port}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on("error", reject);
    req.end();
  });
  assert.equal(status, 421);
  const page = await fetch(s.url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<div id="app">/);
  const csp = page.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(page.headers.get("x-frame-options"), "DENY");
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  assert.equal(page.headers.get("referrer-policy"), "no-referrer");
  const api = await fetch(new URL("/api/jobs", s.url));
  assert.equal(api.headers.get("cache-control"), "no-store");
});
