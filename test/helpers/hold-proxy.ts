// A pass-through HTTP proxy in front of any store on loopback that holds the requests `hold`
// picks (never forwarding them), so a test can SIGKILL a writer at exactly that moment. A
// Location header naming the store (a GCS resumable session) is rewritten to the proxy, so a
// session's chunks pass through it too.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HoldProxy {
  readonly endpoint: string;
  /** Resolves with the method and URL of the first request held. */
  readonly held: Promise<string>;
  close(): Promise<void>;
}

export async function startHoldProxy(
  upstream: string,
  hold: (method: string, url: string, headers: IncomingMessage["headers"]) => boolean,
): Promise<HoldProxy> {
  const target = new URL(upstream);
  const waiting: ServerResponse[] = [];
  let onHeld: (what: string) => void = () => {};
  const held = new Promise<string>((resolve) => {
    onHeld = resolve;
  });
  let endpoint = "";
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const method = incoming.method ?? "GET";
    const url = incoming.url ?? "/";
    if (hold(method, url, incoming.headers)) {
      waiting.push(response);
      onHeld(`${method} ${url}`);
      incoming.resume();
      return;
    }
    const forward = httpRequest(
      { host: target.hostname, port: Number(target.port), method, path: url, headers: incoming.headers },
      (answer) => {
        const headers = { ...answer.headers };
        if (typeof headers.location === "string" && headers.location.startsWith(target.origin)) {
          headers.location = endpoint + headers.location.slice(target.origin.length);
        }
        response.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(response);
      },
    );
    forward.on("error", () => response.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    held,
    async close() {
      for (const response of waiting.splice(0)) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
