// A pass-through HTTP proxy in front of MinIO that can hold one kind of request: the test points
// floe's S3 endpoint at it, and once a request matching `hold` arrives it is kept waiting (never
// forwarded), so the test acts (SIGKILLs the writer) at exactly that moment, whatever the speed
// of the machine. Requests go through byte for byte, Host header included: the SigV4 signature
// the client computed for this address stays valid at MinIO.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { minio } from "../../dev/services/minio.ts";

export interface HoldProxy {
  readonly endpoint: string;
  /** Resolves with the method and URL of the first request held. */
  readonly held: Promise<string>;
  /** From now on nothing is held; the requests held so far are dropped. */
  release(): void;
  close(): Promise<void>;
}

export async function startHoldProxy(hold: (method: string, url: string) => boolean): Promise<HoldProxy> {
  const target = new URL(minio.endpoint);
  let holding = true;
  const waiting: ServerResponse[] = [];
  let onHeld: (what: string) => void = () => {};
  const held = new Promise<string>((resolve) => {
    onHeld = resolve;
  });

  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const method = incoming.method ?? "GET";
    const url = incoming.url ?? "/";
    if (holding && hold(method, url)) {
      waiting.push(response);
      onHeld(`${method} ${url}`);
      incoming.resume();
      return;
    }
    const upstream = httpRequest(
      { host: target.hostname, port: Number(target.port), method, path: url, headers: incoming.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => response.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const release = () => {
    holding = false;
    for (const response of waiting.splice(0)) response.destroy();
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    held,
    release,
    async close() {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
