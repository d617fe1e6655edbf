#!/usr/bin/env bash
# Builds deploy/Containerfile with podman and checks the image for real: it runs as uid 10001,
# `floe --version` prints the package's version, `floe serve` answers its probes and refuses the
# API without the password, stops with exit 0 on SIGTERM, and the containerised floe syncs
# against the development broker, its table read back by DuckDB and PyIceberg (the package
# check's sync, scripts/pack-check-sync.ts, with `floe` run in the container).
#
#   deploy/check-image.sh            (the broker must be up: npm run services -- start kafka)
#
# This project's machines reach Debian's package archive but no container registry, so the base
# images are built here: a Debian bookworm userland by debootstrap, and for the build stage the
# same with this machine's Node and npm copied in (what docker.io/library/node:20-bookworm-slim
# holds). Both are kept between runs. Where a registry is reachable, build the Containerfile as is.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v podman >/dev/null || { echo "check-image: podman is not installed (apt-get install podman runc debootstrap)" >&2; exit 1; }
start=$(date +%s)
work=$(mktemp -d)
conf="$work/containers.conf"
cleanup() {
  podman rm -f "floe-check-serve-$$" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "check-image: FAIL: $*" >&2
  exit 1
}

# A sandbox may refuse to raise resource limits (no CAP_SYS_RESOURCE) while podman's defaults
# ask for more than the shell has (1048576 open files): containers get the shell's open-file
# limit and at most 32768 processes, in `podman run` (containers.conf) and in the build's RUN
# steps (--ulimit). runc, where present, also runs on hosts whose cgroups crun refuses (hybrid
# v1/v2).
nofile="nofile=$(ulimit -Sn):$(ulimit -Hn)"
procs=$(ulimit -Su)
[[ "$procs" == "unlimited" || "$procs" -gt 32768 ]] && procs=32768
nproc="nproc=$procs:$procs"
{
  echo "[containers]"
  echo "default_ulimits = [\"$nofile\", \"$nproc\"]"
  if command -v runc >/dev/null; then
    echo "[engine]"
    echo 'runtime = "runc"'
  fi
} >"$conf"
export CONTAINERS_CONF="$conf"

runtime_base=localhost/floe-base/debian:bookworm-slim
build_base=localhost/floe-base/node:20-bookworm-slim
if ! podman image exists "$runtime_base"; then
  command -v debootstrap >/dev/null || fail "debootstrap is needed to build the base image (apt-get install debootstrap)"
  rootfs="$work/rootfs"
  echo "check-image: building the Debian base image with debootstrap (a few minutes, once)"
  debootstrap --variant=minbase bookworm "$rootfs" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    fail "debootstrap"
  }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import - "$runtime_base" >/dev/null 2>&1
  rm -rf "$rootfs"
fi
if ! podman image exists "$build_base"; then
  # This machine's Node and npm, and the CA bundle it trusts (its egress to the npm registry may
  # pass a proxy with its own CA), over the Debian base.
  context="$work/build-base"
  mkdir -p "$context"
  cp "$(command -v node)" "$context/node"
  cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$context/npm"
  cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$context/ca.crt"
  cat >"$context/Containerfile" <<CF
FROM $runtime_base
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca.crt /usr/local/share/ca-certificates/build-host.crt
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/build-host.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version
CF
  podman build --ulimit "$nofile" --ulimit "$nproc" -t "$build_base" "$context" >"$work/build-base.log" 2>&1 || {
    tail -20 "$work/build-base.log" >&2
    fail "the build stage's base image"
  }
fi

image=localhost/floe:check
echo "check-image: podman build -f deploy/Containerfile"
podman build --network=host --ulimit "$nofile" --ulimit "$nproc" -f deploy/Containerfile \
  --build-arg "BUILD_IMAGE=$build_base" --build-arg "RUNTIME_IMAGE=$runtime_base" \
  -t "$image" . >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log" >&2
  fail "podman build"
}
echo "check-image: built $image ($(podman image inspect "$image" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}'))"

version=$(node -p 'require("./package.json").version')
[[ "$(podman run --rm "$image" --version)" == "$version" ]] || fail "floe --version in the image is not $version"
[[ "$(podman run --rm --entrypoint id "$image" -u)" == "10001" ]] || fail "the image does not run as uid 10001"
[[ "$(podman image inspect "$image" --format '{{json .Config.Volumes}}')" == *'/var/lib/floe'* ]] || fail "no volume /var/lib/floe"
echo "check-image: floe --version is $version, as uid 10001, state volume /var/lib/floe"

# floe serve in the container: probes without a credential, the API only with one, SIGTERM -> 0.
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
podman run -d --name "floe-check-serve-$$" --network=host -e FLOE_UI_PASSWORD='a long passphrase for the check' \
  "$image" serve --state-dir /var/lib/floe/serve --listen "127.0.0.1:$port" >/dev/null
ready=""
for _ in $(seq 1 120); do
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)" == "200" ]]; then
    ready=yes
    break
  fi
  sleep 0.5
done
[[ -n "$ready" ]] || { podman logs "floe-check-serve-$$" >&2; fail "floe serve in the container never answered /readyz"; }
[[ "$(curl -s "http://127.0.0.1:$port/healthz")" == '{"status":"ok"}' ]] || fail "/healthz"
[[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/sources")" == "401" ]] || fail "the API answered without the password"
podman stop -t 20 "floe-check-serve-$$" >/dev/null
code=$(podman inspect "floe-check-serve-$$" --format '{{.State.ExitCode}}')
[[ "$code" == "0" ]] || { podman logs "floe-check-serve-$$" >&2; fail "floe serve exited $code on SIGTERM, not 0"; }
podman logs "floe-check-serve-$$" 2>&1 | grep -q 'a long passphrase' && fail "floe serve printed the password"
echo "check-image: floe serve answers /healthz and /readyz, refuses the API without the password, exits 0 on SIGTERM"

# The containerised floe as the package check's `floe`: the job's folder is mounted at its own path.
mkdir -m 0777 "$work/synced"
cat >"$work/floe" <<SH
#!/usr/bin/env bash
exec podman run --rm -i --network=host -v "$work/synced:$work/synced" -w "$work/synced" "$image" "\$@"
SH
chmod +x "$work/floe"
node_modules/.bin/node scripts/pack-check-sync.ts "$work/floe" "$work/synced/shop" || fail "the containerised floe did not sync right (above)"
echo "check-image: ok in $(($(date +%s) - start)) s"
