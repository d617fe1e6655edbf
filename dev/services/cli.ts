// npm run services -- start|stop|status|install [service ...]
import { services } from "./index.ts";
import { ServiceError } from "./lib.ts";

const [action = "status", ...names] = process.argv.slice(2);
const selected = names.length === 0 ? services : services.filter((s) => names.includes(s.name));
const unknown = names.filter((n) => !services.some((s) => s.name === n));

if (unknown.length > 0 || !["start", "stop", "status", "install"].includes(action)) {
  console.error(
    `usage: npm run services -- start|stop|status|install [${services.map((s) => s.name).join("|")} ...]` +
      (unknown.length > 0 ? `\nunknown service: ${unknown.join(", ")}` : ""),
  );
  process.exit(2);
}

try {
  for (const service of selected) {
    const t0 = performance.now();
    if (action === "status") {
      const { running, detail } = await service.status();
      console.log(`${service.name.padEnd(14)} ${running ? "running" : "stopped"}  ${detail}`);
      continue;
    }
    await service[action as "start" | "stop" | "install"]();
    console.log(`${service.name.padEnd(14)} ${action} ok (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
} catch (error) {
  if (error instanceof ServiceError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
