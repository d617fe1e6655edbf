// OAuth2 client credentials against a tiny local token endpoint (node:http on 127.0.0.1).
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { after, before, test } from "node:test";
import { isCatalogError } from "#src/iceberg/catalog/catalog.ts";
import { OAuth2ClientCredentials } from "#src/iceberg/catalog/oauth2.ts";
import { errorKind } from "#src/iceberg/errors.ts";

const secret = "s3cr3t-client-secret";
let requests: URLSearchParams[] = [];
let respond: (form: URLSearchParams, res: ServerResponse) => void;
let tokenUri: string;
const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  const form = new URLSearchParams(body);
  requests.push(form);
  respond(form, res);
});

function issue(expiresIn?: number) {
  return (_form: URLSearchParams, res: ServerResponse) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        access_token: `token-${requests.length}`,
        token_type: "bearer",
        ...(expiresIn === undefined ? {} : { expires_in: expiresIn }),
      }),
    );
  };
}

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  tokenUri = `http://127.0.0.1:${(server.address() as { port: number }).port}/oidc/v1/token`;
});
after(() => server.close());

function session(now: () => number = Date.now, scope = "PRINCIPAL_ROLE:ALL") {
  requests = [];
  return new OAuth2ClientCredentials({ tokenUri, clientId: "floe-client", clientSecret: secret, scope, now });
}

test("the client credentials grant is posted as a form, and the token is cached", async () => {
  respond = issue(3600);
  const auth = session(Date.now, "all-apis");
  assert.equal(await auth.authorization("loadTable a.b"), "Bearer token-1");
  assert.equal(await auth.authorization("loadTable a.b"), "Bearer token-1");
  assert.equal(requests.length, 1);
  assert.deepEqual(Object.fromEntries(requests[0]!), {
    grant_type: "client_credentials",
    client_id: "floe-client",
    client_secret: secret,
    scope: "all-apis",
  });
});

test("concurrent callers share one token request", async () => {
  respond = issue(3600);
  const auth = session();
  const headers = await Promise.all([1, 2, 3, 4].map(() => auth.authorization("listTables a")));
  assert.deepEqual(new Set(headers), new Set(["Bearer token-1"]));
  assert.equal(requests.length, 1);
});

test("a token is fetched anew shortly before it expires", async () => {
  respond = issue(100); // 100 s: refreshed 10 s (a tenth, at most 60 s) before expiry
  let clock = 1_000_000;
  const auth = session(() => clock);
  assert.equal(await auth.authorization("c"), "Bearer token-1");
  clock += 89_000;
  assert.equal(await auth.authorization("c"), "Bearer token-1");
  clock += 2_000;
  assert.equal(await auth.authorization("c"), "Bearer token-2");
  assert.equal(requests.length, 2);
});

test("without expires_in, a JWT's exp claim sets the refresh time", async () => {
  let clock = 1_700_000_000_000;
  const exp = clock / 1000 + 1000;
  const jwt = ["e30", Buffer.from(JSON.stringify({ exp })).toString("base64url"), "sig"].join(".");
  respond = (_form, res) => res.end(JSON.stringify({ access_token: jwt, token_type: "bearer" }));
  const auth = session(() => clock);
  await auth.authorization("c");
  clock += 930_000;
  await auth.authorization("c");
  assert.equal(requests.length, 1);
  clock += 20_000; // within the last 60 s of the token's 1000 s
  await auth.authorization("c");
  assert.equal(requests.length, 2);
});

test("renew() drops the token so the next call fetches a fresh one", async () => {
  respond = issue(3600);
  const auth = session();
  assert.equal(await auth.authorization("c"), "Bearer token-1");
  assert.equal(auth.renew(), true);
  assert.equal(await auth.authorization("c"), "Bearer token-2");
});

test("a refused grant is an auth CatalogError naming the call and endpoint, never the secret", async () => {
  respond = (_form, res) => {
    res.statusCode = 401;
    res.end(JSON.stringify({ error: "invalid_client", error_description: `bad secret ${secret}` }));
  };
  const auth = session();
  await assert.rejects(auth.authorization("loadTable kafka_topics.orders"), (error: unknown) => {
    assert.ok(isCatalogError(error, "auth"), String(error));
    assert.equal(error.status, 401);
    assert.match(
      error.message,
      /^loadTable kafka_topics\.orders: the token endpoint http:\/\/127\.0\.0\.1:\d+\/oidc\/v1\/token/,
    );
    assert.match(error.message, /invalid_client/);
    assert.match(error.message, /PRINCIPAL_ROLE:ALL/);
    assert.ok(!error.message.includes(secret), error.message);
    return true;
  });
});

test("an unreachable token endpoint is an io CatalogError naming it", async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const auth = new OAuth2ClientCredentials({
    tokenUri: `http://127.0.0.1:${port}/v1/oauth/tokens`,
    clientId: "c",
    clientSecret: secret,
    scope: "s",
  });
  await assert.rejects(auth.authorization("getConfig"), (error: unknown) => {
    assert.ok(isCatalogError(error, "io") && error.status === undefined, String(error));
    const expected = `getConfig: cannot reach the OAuth2 token endpoint http://127.0.0.1:${port}/v1/oauth/tokens (ECONNREFUSED)`;
    assert.ok(error.message.startsWith(expected), error.message);
    return true;
  });
});

test("a token answer that is not RFC 6749's is corrupt, naming the call, the endpoint and the field", async () => {
  for (const [body, problem] of [
    [{ token_type: "bearer" }, "access_token: expected a string, got nothing"],
    [{ access_token: "", token_type: "bearer" }, "access_token: expected a token, got an empty string"],
    [{ access_token: "t", expires_in: "3600" }, 'expires_in: expected a number of seconds, got the string "3600"'],
    ["<html>", "not JSON ("],
  ] as const) {
    respond = (_form, res) => res.end(typeof body === "string" ? body : JSON.stringify(body));
    await assert.rejects(session().authorization("getConfig"), (error: unknown) => {
      assert.equal(errorKind(error), "corrupt", String(error));
      assert.ok(
        (error as Error).message.startsWith(`getConfig: the token endpoint's answer (${tokenUri}): ${problem}`),
        (error as Error).message,
      );
      return true;
    });
  }
});

test("redact() scrubs the secret and the current token", async () => {
  respond = issue(3600);
  const auth = session();
  await auth.authorization("c");
  assert.equal(auth.redact(`x ${secret} y token-1 z`), "x *** y *** z");
});

test("a redirect from the token endpoint is not followed: the client secret is not posted again where it points", async () => {
  const auth = session();
  respond = (_form, res) => {
    if (requests.length === 1) res.writeHead(307, { location: "/elsewhere" }).end();
    else issue(3600)(_form, res);
  };
  await assert.rejects(auth.authorization("loadTable a.b"), /answered a redirect \(HTTP 307\) to 127\.0\.0\.1/);
  assert.equal(requests.length, 1, "the form with the client secret was posted once");
});
