// The encoding worker's side of parquet-encoder.ts: "ready" once its modules are loaded; then
// each message is an Arrow IPC stream and a codec, and the answer is the Parquet bytes, their
// ArrayBuffer transferred back (no copy), or the error's message.
import { parentPort } from "node:worker_threads";
import type { ParquetCodec } from "../spec/table-properties.ts";
import { encodeParquet } from "./parquet-encode.ts";

export interface EncodeRequest {
  id: number;
  ipc: Uint8Array;
  codec: ParquetCodec;
}

export type EncodeResponse = { id: number; bytes: Uint8Array } | { id: number; error: string };

parentPort!.on("message", ({ id, ipc, codec }: EncodeRequest) => {
  let response: EncodeResponse;
  try {
    response = { id, bytes: encodeParquet(ipc, codec) };
  } catch (error) {
    response = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(response, "bytes" in response ? [response.bytes.buffer as ArrayBuffer] : []);
});
parentPort!.postMessage("ready");
