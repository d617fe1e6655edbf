// A FileIO whose implementation module is loaded on first use: the AWS and Azure SDKs take about
// 0.2 s each to load, which every floe command would pay though a job's tables live in one store
// or none (a local warehouse).
import { type FileIO, type FileIOFactory, UnsupportedListingError } from "./file-io.ts";

export function lazyFileIO(load: () => Promise<FileIOFactory>): FileIOFactory {
  let factory: Promise<FileIOFactory> | undefined;
  return (location, properties, context) => {
    let io: Promise<FileIO> | undefined;
    const get = () => {
      factory ??= load();
      io ??= factory.then((make) => make(location, properties, context));
      return io;
    };
    return {
      write: async (l, bytes) => (await get()).write(l, bytes),
      read: async (l) => (await get()).read(l),
      readRange: async (l, offset, length) => (await get()).readRange(l, offset, length),
      exists: async (l) => (await get()).exists(l),
      delete: async (l) => (await get()).delete(l),
      list: async function* (prefix) {
        const io = await get();
        if (!io.list) throw new UnsupportedListingError(prefix);
        yield* io.list(prefix);
      },
    };
  };
}
