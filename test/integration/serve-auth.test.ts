// `floe serve` started as an operator starts it (a child process), for what its login and its
// transport promise: docs/commands.md's `--listen 0.0.0.0:...` on a fresh state directory starts; a
// changed FLOE_UI_PASSWORD replaces the stored one (the old one stops working); a login's scrypt
// does not hold the event loop (the API answers while wrong logins hash); wrong passwords get a
// backoff (429 with Retry-After) that no right password skips and guesses sent at once do not
// escape; a request body has a size cap; a credential-less server needs --no-auth and refuses
// requests that came through a proxy; HTTPS with --tls-cert/--tls-key, Secure cookies there and
// behind a trusted proxy only.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ServeChild, serveExit, spawnServe } from "../helpers/serve-child.ts";

const PASSWORD = `first password ${process.pid}`;
const NEW_PASSWORD = `second password ${process.pid}`;
const dirs: string[] = [];
const children: ServeChild[] = [];
after(async () => {
  for (const c of children) await c.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "floe-serve-auth-"));
  dirs.push(dir);
  return dir;
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<ServeChild> {
  const child = await spawnServe(args, env);
  children.push(child);
  return child;
}

/** The server's URL as a client on this host reaches it (0.0.0.0 is no address to connect to). */
const local = (url: string) => url.replace("0.0.0.0", "127.0.0.1");

async function login(base: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL("/api/login", base), {
    method: "POST",
    body: JSON.stringify({ password }),
    headers: { "content-type": "application/json", ...headers },
  });
}

test("docs/commands.md's --listen 0.0.0.0 with FLOE_UI_PASSWORD starts on a fresh state directory", async () => {
  const stateDir = join(tempDir(), "not", "made", "yet");
  const first = await serve(["--state-dir", stateDir, "--listen", "0.0.0.0:0"], { FLOE_UI_PASSWORD: PASSWORD });
  assert.equal((await login(local(first.url), PASSWORD)).status, 200);
});

test("a changed FLOE_UI_PASSWORD replaces the stored one at the next start; the old one stops working", async () => {
  const stateDir = tempDir();
  const first = await serve(["--state-dir", stateDir, "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: PASSWORD });
  assert.equal((await login(first.url, PASSWORD)).status, 200);
  await first.stop();

  const second = await serve(["--state-dir", stateDir, "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: NEW_PASSWORD });
  assert.equal((await login(second.url, PASSWORD)).status, 401, "the old password stops working");
  assert.equal((await login(second.url, NEW_PASSWORD)).status, 200);
  await second.stop();

  // Without the variable, the stored (new) password stays in force.
  const third = await serve(["--state-dir", stateDir, "--listen", "127.0.0.1:0"]);
  assert.equal((await login(third.url, NEW_PASSWORD)).status, 200);
});

test("a login hashes off the event loop: the API answers while wrong logins are being checked", async () => {
  const s = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: PASSWORD });
  await fetch(new URL("/api/session", s.url)); // warm up
  const finished: string[] = [];
  const logins = [1, 2, 3, 4].map((i) =>
    login(s.url, `wrong password ${i}`, { "x-test": String(i) }).then((r) => {
      finished.push(`login ${r.status}`);
    }),
  );
  // Sent after the logins, on its own connection: with a synchronous hash it waits for them.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const session = fetch(new URL("/api/session", s.url)).then((r) => {
    finished.push(`session ${r.status}`);
  });
  await Promise.all([...logins, session]);
  assert.equal(finished[0], "session 200", `answers in the order ${finished.join(", ")}`);
});

test("wrong passwords get a backoff (429, Retry-After) that a right password does not skip", async () => {
  const s = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: PASSWORD });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await login(s.url, "wrong password")).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 401]);
  const sixth = await login(s.url, "wrong password");
  assert.equal(sixth.status, 429);
  assert.ok(Number(sixth.headers.get("retry-after")) >= 1, "Retry-After in seconds");
  const right = await login(s.url, PASSWORD);
  assert.equal(right.status, 429, "the backoff holds for the right password too");
  await new Promise((resolve) => setTimeout(resolve, Number(sixth.headers.get("retry-after")) * 1000 + 100));
  assert.equal((await login(s.url, PASSWORD)).status, 200, "after the wait, the right password logs in");
});

test("wrong passwords sent at once get the same backoff: no more than the free ones are hashed", async () => {
  const s = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: PASSWORD });
  await fetch(new URL("/api/session", s.url)); // warm up
  const statuses = await Promise.all(
    Array.from({ length: 20 }, (_, i) => login(s.url, `wrong password ${i}`).then((r) => r.status)),
  );
  assert.equal(statuses.filter((x) => x === 401).length, 5, `answers ${statuses.join(", ")}`);
  assert.equal(statuses.filter((x) => x === 429).length, 15, `answers ${statuses.join(", ")}`);
});

test("a request body over the cap is refused with 413 before it is parsed", async () => {
  const s = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: PASSWORD });
  const big = JSON.stringify({ password: "x".repeat(5 * 1024 * 1024) });
  const refused = await fetch(new URL("/api/login", s.url), {
    method: "POST",
    body: big,
    headers: { "content-type": "application/json" },
  });
  assert.equal(refused.status, 413);
  assert.match(((await refused.json()) as { error: string }).error, /larger than 4194304 bytes/);
});

test("without a credential: no start unless --no-auth, and then nothing through a proxy", async () => {
  const refused = await serveExit(["--state-dir", tempDir(), "--listen", "127.0.0.1:0"]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /needs a credential.*--no-auth/);
  const open = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0", "--no-auth"]);
  assert.equal((await fetch(new URL("/api/sources", open.url))).status, 200);
  for (const header of ["x-forwarded-for", "forwarded", "x-real-ip", "x-forwarded-proto"]) {
    const proxied = await fetch(new URL("/api/sources", open.url), { headers: { [header]: "203.0.113.7" } });
    assert.equal(proxied.status, 401, header);
  }
  const onAnother = await serveExit(["--state-dir", tempDir(), "--listen", "0.0.0.0:0", "--no-auth"]);
  assert.equal(onAnother.code, 2, "--no-auth is for loopback only");
});

test("HTTPS with --tls-cert and --tls-key, Secure cookies there and behind a trusted proxy only", async () => {
  const dir = tempDir();
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  const tls = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key], {
    FLOE_UI_PASSWORD: PASSWORD,
  });
  assert.match(tls.url, /^https:\/\//);
  const answer = await new Promise<{ status: number; cookie: string }>((resolve, reject) => {
    const req = httpsRequest(
      new URL("/api/login", tls.url),
      { method: "POST", ca: readFileSync(cert), headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode!, cookie: String(res.headers["set-cookie"] ?? "") });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ password: PASSWORD }));
  });
  assert.equal(answer.status, 200);
  assert.match(answer.cookie, /; Secure/);

  const plain = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0"], { FLOE_UI_PASSWORD: PASSWORD });
  const notTrusted = await login(plain.url, PASSWORD, { "x-forwarded-proto": "https" });
  assert.equal(notTrusted.status, 200);
  assert.doesNotMatch(notTrusted.headers.get("set-cookie")!, /Secure/, "forwarded headers are not believed by default");
  const proxied = await serve(["--state-dir", tempDir(), "--listen", "127.0.0.1:0", "--trust-proxy"], {
    FLOE_UI_PASSWORD: PASSWORD,
  });
  const { port } = new URL(proxied.url);
  const behind = await login(proxied.url, PASSWORD, {
    "x-forwarded-proto": "https",
    "x-forwarded-for": "203.0.113.9",
    "x-forwarded-host": "floe.example.com",
  });
  assert.equal(behind.status, 200, await behind.clone().text());
  assert.match(behind.headers.get("set-cookie")!, /; Secure/);
  // The proxy's browser-facing host is the one a same-origin POST names.
  const cookie = behind.headers.get("set-cookie")!.split(";")[0]!;
  const { csrfToken } = (await behind.json()) as { csrfToken: string };
  const created = await fetch(new URL("/api/sources", proxied.url), {
    method: "POST",
    body: JSON.stringify({ name: "s", kafka: { bootstrap_servers: [`127.0.0.1:${port}`] } }),
    headers: {
      cookie,
      "content-type": "application/json",
      "x-floe-csrf": csrfToken,
      origin: "https://floe.example.com",
      "x-forwarded-proto": "https",
      "x-forwarded-for": "203.0.113.9",
      "x-forwarded-host": "floe.example.com",
    },
  });
  assert.equal(created.status, 201, await created.text());
});
