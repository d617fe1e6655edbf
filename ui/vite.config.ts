// The UI's build: Preact's JSX through esbuild (no plugin needed), into ui/dist, which is
// committed so that `npm ci` alone makes `floe serve` work. test/unit/ui-build.test.ts rebuilds
// it and fails when the committed files differ from what the sources give.
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: process.env["FLOE_UI_OUT_DIR"] ?? "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1000,
  },
});
