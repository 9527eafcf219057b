#!/usr/bin/env bash
# The documents' commands no test file can run (issue 47: "no command shown in any document that a
# test does not run"): those that need the network, root, or minutes of load. Run by .ci/run after
# the build, each line as the document shows it (test/docs/commands.test.ts names each one here):
# - the Bun installs, in a copy of the checkout (a throwaway node_modules);
# - the install to /usr/local/bin, from the same copy, as root (or with passwordless sudo); after,
#   /usr/local/bin/switchyard is as it was (removed, or the one there before put back); as anyone
#   else it is skipped with a printed line;
# - Caddy from Debian's mirror (apt-get download needs no root), and the c=1 lane with a baseline
#   tree of `main`;
# - every `bun run bench` line at a smoke size (SWITCHYARD_BENCH_SMOKE=1, scripts/bench/options.ts),
#   its flags parsed: each section flag runs its own section, and the plain line starts and stops
#   every other section once, about a second of load each (SWITCHYARD_BENCH_SMOKE_ALONE names the
#   lines beside it); `--quick` and `--binary` run only what the flag changes
#   (scripts/bench/alone.ts: QUICK's plan on the closed loop; dist/switchyard served and one short
#   closed-loop round against it), not every section again.
# A command that fails fails CI. Usage: bash .ci/doc-commands.sh (from anywhere; PATH has bun).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export SWITCHYARD_BENCH_SMOKE=1

# One document line, echoed and run by bash from the current directory; then its seconds (CI's
# budget is 15 minutes: these lines are the part that grows).
# Its status is the command's (also where set -e does not act: in an `if` or beside `||`).
doc() {
  echo "\$ $1"
  local t0=$SECONDS rc=0
  bash -c "$1" || rc=$?
  echo "($(($SECONDS - t0)) s: $1)"
  return "$rc"
}
skip() { echo "skipped: $*"; }

echo "== install.md: the Bun installs, in a copy of the checkout =="
copy=$(mktemp -d)
# The started server's process group, once there is one: `kill -- -0` would signal this script's
# own group (.ci/run and whatever started it).
start_pid=""
# 1 while /tmp/caddy and /tmp/base are this run's (the Caddy block below).
made_tmp=0
# What /usr/local/bin/switchyard was before the install line: "" not touched yet, "none" absent,
# else the path of its copy.
bin_aside=""
restore_bin() {
  case "$bin_aside" in
    "") ;;
    none) sudo rm -f /usr/local/bin/switchyard ;;
    *) sudo cp -p "$bin_aside" /usr/local/bin/switchyard && rm -f "$bin_aside" ;;
  esac
  bin_aside=""
}
cleanup() {
  [ -z "$start_pid" ] || kill -- -"$start_pid" 2>/dev/null || true
  restore_bin
  rm -rf "$copy"
  [ "$made_tmp" -eq 0 ] || rm -rf /tmp/caddy /tmp/base
}
trap cleanup EXIT
git ls-files -z | xargs -0 cp --parents -t "$copy"
cd "$copy"
# `bun run start` serves the starter config on 8080 until stopped: up, /healthz, stopped. Whatever
# answers on 8080 before it starts would pass the check for it: then the line is skipped, saying so.
if curl -s -o /dev/null --max-time 5 http://127.0.0.1:8080/; then
  skip "bun install --no-save && bun run start: something already answers on 127.0.0.1:8080"
else
  echo '$ bun install --no-save && bun run start'
  setsid bash -c 'bun install --no-save && bun run start' > "$copy/start.log" 2>&1 &
  start_pid=$!
  up=0
  for _ in $(seq 1 600); do
    # The answer counts only while the started process lives (not a server that came up meanwhile).
    if curl -sf http://127.0.0.1:8080/healthz > /dev/null && kill -0 "$start_pid" 2>/dev/null; then
      up=1
      break
    fi
    kill -0 "$start_pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -- -"$start_pid" 2>/dev/null || true
  wait "$start_pid" 2>/dev/null || true
  start_pid=""
  [ "$up" -eq 1 ] || { cat "$copy/start.log"; echo "bun run start did not serve /healthz on 8080"; exit 1; }
  echo "bun run start served /healthz on 8080"
fi
# The test script with one folder: the whole suite has just run through `npm test`.
doc 'bun install --no-save && bun run test test/docs'

echo "== install.md: the binary to /usr/local/bin, from the same copy =="
# In the copy, so that `npm install` may rewrite its package-lock.json, not the checkout's.
if [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
  # As root on a machine without sudo, `sudo` runs its command (root needs no elevation).
  if [ "$(id -u)" -eq 0 ] && ! command -v sudo > /dev/null; then
    sudo() { "$@"; }
    export -f sudo
  fi
  # A switchyard already installed there is someone's: kept aside, put back by the EXIT trap.
  if [ -e /usr/local/bin/switchyard ]; then
    cp -p /usr/local/bin/switchyard "$copy.switchyard-was-installed"
    bin_aside="$copy.switchyard-was-installed"
  else
    bin_aside=none
  fi
  doc 'npm install && npm run build && sudo install -m 755 dist/switchyard /usr/local/bin/switchyard'
  /usr/local/bin/switchyard --version
  restore_bin
else
  skip "sudo install -m 755 dist/switchyard /usr/local/bin/switchyard: not root and no passwordless sudo"
fi
cd "$repo"

echo "== BENCHMARKS.md: every bench command, at a smoke size =="
benches=()
for args in '' '--quick' '--binary' '--soak 10' '--waterfall' '--hostile' '--signals' '--aliases' '--c1' '--gemini'; do
  benches+=("bun run bench${args:+ $args}")
done
# The plain line leaves out the sections these lines run alone (`--waterfall`, `--c1`, …): each
# section is smoke-run once, by its own line, not twice (scripts/bench/options.ts).
export SWITCHYARD_BENCH_SMOKE_ALONE="${benches[*]}"
for line in "${benches[@]}"; do
  doc "$line"
done

echo "== benchmarks/2026-11-29-tail.md: Caddy and a baseline tree for the c=1 lane =="
if ! command -v apt-get > /dev/null; then
  skip "apt-get download caddy: no apt-get here"
elif ! git rev-parse -q --verify main > /dev/null; then
  skip "git archive main: this checkout has no branch main"
elif [ -e /tmp/caddy ] || [ -e /tmp/base ]; then
  # The document's paths are shared /tmp ones: never extract over nor delete someone else's.
  skip "the Caddy and baseline lines: /tmp/caddy or /tmp/base is already there (not ours to overwrite)"
else
  # Both made by this run from here on: removed on the way out, whatever happens.
  made_tmp=1
  dl=$(mktemp -d)
  caddy() { (cd "$dl" && doc 'apt-get download caddy && dpkg -x caddy_*.deb /tmp/caddy'); }
  # A fresh image may hold no package lists yet: fetch them once (as root, or with sudo -n as
  # .ci/run's apt_install does) and try again. Not downloadable (no network, no package, no
  # mirror): a printed skip, and the lane below runs without its Caddy row (it says so).
  elevate=""
  [ "$(id -u)" -eq 0 ] || elevate="sudo -n"
  if ! caddy && ! { $elevate apt-get update -qq && caddy; }; then
    skip "apt-get download caddy: not downloadable here; the lane's Caddy row is skipped"
  fi
  rm -rf "$dl"
  doc 'mkdir -p /tmp/base && git archive main src package.json switchyard.example.yaml | tar -x -C /tmp/base'
  doc 'ln -s "$PWD/node_modules" /tmp/base/node_modules'
  doc 'CADDY=/tmp/caddy/usr/bin/caddy bun run bench --c1 --baseline /tmp/base'
  rm -rf /tmp/caddy /tmp/base
  made_tmp=0
fi
echo "the documents' commands ran"
