// The UI's typecheck reads the server's types (the client is typed from src/api/app.ts), and so
// type-checks the server's modules under the browser's lib: there fetch's body is the DOM's
// BodyInit, which takes no Uint8Array over a shared buffer, while Node's fetch (the one the
// server calls) does. This overload is Node's, for those modules; the UI's bundle is unchanged.
declare function fetch(
  input: string | URL | Request,
  init?: Omit<RequestInit, "body"> & { body?: string | Uint8Array | null },
): Promise<Response>;
