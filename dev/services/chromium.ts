// Debian's Chromium for the UI's browser tests, driven by playwright-core (whose own browser
// download cannot run here): installed with apt-get when /usr/bin/chromium is missing. Not a
// daemon: each browser test launches its own headless instance (dev/browser.ts).
import { existsSync } from "node:fs";
import { runStep, type Service, ServiceError } from "./lib.ts";

const name = "chromium";
export const chromiumPath = "/usr/bin/chromium";

export const chromiumService: Service = {
  name,

  async install() {
    if (existsSync(chromiumPath)) return;
    const root = process.getuid?.() === 0;
    const apt = root ? "apt-get" : "sudo";
    const prefix = root ? [] : ["-n", "apt-get"];
    runStep(name, "apt-get update", apt, [...prefix, "update"], undefined, { DEBIAN_FRONTEND: "noninteractive" });
    runStep(name, "installing Debian's chromium", apt, [...prefix, "install", "-y", "chromium"], undefined, {
      DEBIAN_FRONTEND: "noninteractive",
    });
  },

  async start() {
    if (!existsSync(chromiumPath)) {
      throw new ServiceError(name, `${chromiumPath} is missing; run: npm run services -- install chromium`);
    }
  },

  async stop() {},

  async status() {
    return existsSync(chromiumPath)
      ? { running: true, detail: `installed: ${chromiumPath}` }
      : { running: false, detail: "not installed" };
  },
};
