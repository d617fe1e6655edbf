// Local filesystem IO. Accepts both `file:` URIs (file:/x, file:///x) and absolute paths,
// because catalogs differ in which form they hand out. A failed file system call is an
// IcebergError naming the location, of the kind its error code says.
import type { Stats } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { IcebergError, type IcebergErrorKind } from "../errors.ts";
import { type FileIO, type FileIOFactory, type ListedFile, UnsupportedLocationError } from "./file-io.ts";

export function localPath(location: string): string {
  if (location.startsWith("file:")) {
    // file:/x (Hadoop style) and file:///x (URI style) both name /x.
    return fileURLToPath(location.replace(/^file:\/*/, "file:///"));
  }
  if (location.startsWith("/")) return location;
  throw new UnsupportedLocationError(location);
}

/** What a file system error code says: a missing file, a permission, or the storage failing on the way. */
export function fileSystemErrorKind(code: unknown): IcebergErrorKind {
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return "not-found";
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "auth";
    default:
      return "io";
  }
}

async function fileSystemCall<T>(what: string, location: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof IcebergError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new IcebergError(fileSystemErrorKind(code), `cannot ${what} ${location}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export class LocalFileIO implements FileIO {
  write(location: string, bytes: Uint8Array): Promise<void> {
    return fileSystemCall("write", location, async () => {
      const path = localPath(location);
      await mkdir(dirname(path), { recursive: true });
      // Write then rename, so a crash never leaves a torn file under the final name.
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, bytes, { flush: true });
      await rename(tmp, path);
    });
  }

  read(location: string): Promise<Uint8Array> {
    return fileSystemCall("read", location, async () => new Uint8Array(await readFile(localPath(location))));
  }

  readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    return fileSystemCall("read", location, async () => {
      const handle = await open(localPath(location), "r");
      try {
        const buffer = new Uint8Array(length);
        const { bytesRead } = await handle.read(buffer, 0, length, offset);
        if (bytesRead !== length) {
          // The metadata that gave this range describes another file than the one there.
          throw new IcebergError(
            "corrupt",
            `${location}: wanted ${length} bytes at offset ${offset}, the file has only ${bytesRead} there`,
          );
        }
        return buffer;
      } finally {
        await handle.close();
      }
    });
  }

  async exists(location: string): Promise<boolean> {
    try {
      await stat(localPath(location));
      return true;
    } catch {
      return false;
    }
  }

  async *list(prefix: string): AsyncIterable<ListedFile> {
    const root = localPath(prefix);
    const base = prefix.replace(/\/+$/, "");
    let names: string[];
    try {
      names = await readdir(root, { recursive: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new IcebergError(
        fileSystemErrorKind((error as NodeJS.ErrnoException).code),
        `cannot list ${prefix}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    for (const name of names.sort()) {
      let info: Stats;
      try {
        info = await stat(join(root, name));
      } catch {
        continue; // removed since the directory was read
      }
      if (!info.isFile()) continue;
      yield { location: `${base}/${name.split(sep).join("/")}`, size: info.size, lastModifiedMs: info.mtimeMs };
    }
  }

  delete(location: string): Promise<void> {
    return fileSystemCall("delete", location, () => rm(localPath(location), { force: true }));
  }
}

export const localFileIO: FileIOFactory = () => new LocalFileIO();
