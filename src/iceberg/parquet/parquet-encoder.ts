// Parquet encoding off the calling thread: one worker (node:worker_threads) per process, started
// at the first file and kept while the process lives, so that a sync decodes its next messages
// on one core while the other compresses the last round's rows. The Arrow IPC stream goes to the
// worker and the Parquet bytes come back by transfer of their ArrayBuffer, never by copy.
//
// The worker holds no reference on the process while it has nothing to encode: a process whose
// work is done exits as if there were no worker. A worker that cannot start (its module cannot
// be loaded where floe runs) leaves the encoding on the calling thread, with the same bytes.
import { Worker } from "node:worker_threads";
import type { ParquetCodec } from "../spec/table-properties.ts";
import { encodeParquet } from "./parquet-encode.ts";
import type { EncodeRequest, EncodeResponse } from "./parquet-encode-worker.ts";

interface Pending {
  resolve(bytes: Uint8Array): void;
  reject(error: Error): void;
}

// In a checkout the worker is the TypeScript module beside this one; the installed package's
// bundle (scripts/build-cli.ts) builds it as an entry point of its own beside every chunk.
const WORKER_MODULE = import.meta.url.endsWith(".ts") ? "./parquet-encode-worker.ts" : "./parquet-encode-worker.mjs";

/** The worker once it said it is ready; undefined where it could not start. */
let started: Promise<Worker | undefined> | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

/**
 * One Parquet file of the rows of an Arrow IPC stream, encoded in the worker. `ipc` is moved:
 * its ArrayBuffer is transferred (detached here) unless it is a view of a larger buffer, then copied.
 */
export async function encodeParquetInWorker(ipc: Uint8Array, codec: ParquetCodec): Promise<Uint8Array> {
  started ??= startWorker();
  const w = await started;
  if (w === undefined) return encodeParquet(ipc, codec);
  const id = nextId++;
  return new Promise<Uint8Array>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    if (pending.size === 1) w.ref();
    const whole = ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength && ipc.buffer instanceof ArrayBuffer;
    const owned = whole ? ipc : ipc.slice();
    const request: EncodeRequest = { id, ipc: owned, codec };
    w.postMessage(request, [owned.buffer as ArrayBuffer]);
  });
}

function startWorker(): Promise<Worker | undefined> {
  return new Promise((ready) => {
    let w: Worker;
    try {
      w = new Worker(new URL(WORKER_MODULE, import.meta.url));
    } catch {
      ready(undefined);
      return;
    }
    let isReady = false;
    w.on("message", (response: EncodeResponse | "ready") => {
      if (response === "ready") {
        isReady = true;
        w.unref();
        ready(w);
        return;
      }
      const waiting = pending.get(response.id);
      pending.delete(response.id);
      if (pending.size === 0) w.unref();
      if (waiting === undefined) return;
      if ("error" in response) waiting.reject(new Error(`Parquet encoding failed: ${response.error}`));
      else waiting.resolve(response.bytes);
    });
    // A worker that dies fails what it held; the next file starts a new one.
    const fail = (error: Error) => {
      if (!isReady) {
        ready(undefined);
        return;
      }
      if (started !== undefined) started = undefined;
      for (const { reject } of pending.values()) reject(error);
      pending.clear();
    };
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`the Parquet encoding worker exited with code ${code}`)));
  });
}
