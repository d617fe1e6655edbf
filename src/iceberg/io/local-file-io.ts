// Local filesystem IO. Accepts both `file:` URIs (file:/x, file:///x) and absolute paths,
// because catalogs differ in which form they hand out.
import { mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type FileIO, type FileIOFactory, UnsupportedLocationError } from "./file-io.ts";

export function localPath(location: string): string {
  if (location.startsWith("file:")) {
    // file:/x (Hadoop style) and file:///x (URI style) both name /x.
    return fileURLToPath(location.replace(/^file:\/*/, "file:///"));
  }
  if (location.startsWith("/")) return location;
  throw new UnsupportedLocationError(location);
}

export class LocalFileIO implements FileIO {
  async write(location: string, bytes: Uint8Array): Promise<void> {
    const path = localPath(location);
    await mkdir(dirname(path), { recursive: true });
    // Write then rename, so a crash never leaves a torn file under the final name.
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, bytes, { flush: true });
    await rename(tmp, path);
  }

  async read(location: string): Promise<Uint8Array> {
    return new Uint8Array(await readFile(localPath(location)));
  }

  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    const handle = await open(localPath(location), "r");
    try {
      const buffer = new Uint8Array(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      if (bytesRead !== length) {
        throw new Error(
          `${location}: wanted ${length} bytes at offset ${offset}, the file has only ${bytesRead} there`,
        );
      }
      return buffer;
    } finally {
      await handle.close();
    }
  }

  async exists(location: string): Promise<boolean> {
    try {
      await stat(localPath(location));
      return true;
    } catch {
      return false;
    }
  }

  async delete(location: string): Promise<void> {
    await rm(localPath(location), { force: true });
  }
}

export const localFileIO: FileIOFactory = () => new LocalFileIO();
