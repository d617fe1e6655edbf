// Headless Chromium (Debian's package) driven by playwright-core, for the UI's browser tests
// and screenshots. The flags keep it off the network beyond loopback: without the
// background-networking ones it keeps trying Google's hosts, which this machine refuses.
// playwright-core gives each launch a new empty profile directory of its own.
import { type Browser, chromium } from "playwright-core";
import { chromiumPath } from "./services/chromium.ts";

export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}
