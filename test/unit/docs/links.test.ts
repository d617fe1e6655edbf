// The README and the manual in docs/ link to each other, to images and to headings: every
// relative link must reach a file or folder of the repository, and every #anchor a heading of
// the page it names (GitHub's slugs). Web links are not fetched.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The pages checked: README.md and every Markdown file of docs/. */
function pages(): string[] {
  const docs = join(root, "docs");
  const inDocs = readdirSync(docs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => join(e.parentPath, e.name));
  return [join(root, "README.md"), ...inDocs];
}

/** Markdown without its fenced code blocks and inline code, where brackets are not links. */
function proseOf(markdown: string): string {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      lines.push("");
      continue;
    }
    lines.push(fenced ? "" : line.replace(/`[^`]*`/g, "``"));
  }
  return lines.join("\n");
}

/** Targets of inline links and images: `[text](target)`, `![alt](target "title")`. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const m of proseOf(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]!);
  return targets;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The links of one page that reach nothing, as "target: why". */
export function brokenLinks(page: string, markdown: string, read = (p: string) => readFileSync(p, "utf8")): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...: not a file of the repository
    const hash = target.indexOf("#");
    const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const file = path === "" ? page : resolve(dirname(page), path);
    if (!existsSync(file)) {
      broken.push(`${target}: no file ${relative(root, file)}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(file).isDirectory() || !file.endsWith(".md")) {
      broken.push(`${target}: an anchor into ${relative(root, file)}, which is not a Markdown page`);
      continue;
    }
    const text = file === page ? markdown : read(file);
    if (!headingAnchors(text).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${relative(root, file)}`);
  }
  return broken;
}

test("every relative link of README.md and docs/ reaches a file, and every anchor a heading", () => {
  const checked = pages();
  assert.ok(checked.length >= 10, `expected the README and the docs pages, found ${checked.length}`);
  const broken = checked.flatMap((page) =>
    brokenLinks(page, readFileSync(page, "utf8")).map((b) => `${relative(root, page)}: ${b}`),
  );
  assert.deepEqual(broken, []);
});

test("the check finds a missing file, a missing heading, and ignores links inside code", () => {
  const page = join(root, "docs", "README.md");
  const md = [
    "# A page",
    "## Two syncs: `floe sync` at once",
    "[ok](#a-page) [ok](#two-syncs-floe-sync-at-once) [ok](job-file.md#every-key) [web](https://example.com/x)",
    "[gone](no-such-page.md) [gone](#no-such-heading) [gone](job-file.md#no-such-key)",
    "`[code](not-a-link.md)`",
    "```",
    "[fenced](not-a-link-either.md)",
    "```",
  ].join("\n");
  assert.deepEqual(brokenLinks(page, md), [
    "no-such-page.md: no file docs/no-such-page.md",
    "#no-such-heading: no heading #no-such-heading in docs/README.md",
    "job-file.md#no-such-key: no heading #no-such-key in docs/job-file.md",
  ]);
});

test("anchors follow GitHub: punctuation dropped, repeated headings numbered", () => {
  const anchors = headingAnchors(
    "# The job file's JSON Schema: `floe config schema`\n## Limits\n## Limits\n```\n# not a heading\n```",
  );
  assert.deepEqual([...anchors], ["the-job-files-json-schema-floe-config-schema", "limits", "limits-1"]);
});
