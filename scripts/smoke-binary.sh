#!/usr/bin/env bash
# Runs the compiled binary from an empty directory holding only it and a config:
# --help, config check, accounts/keys via its own CLI, serve, /healthz and /v1/usage, and the
# console: its page and assets come out of the binary, sign-in gives a session cookie that reads
# the admin API.
set -euo pipefail
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
cp "$bin" "$work/switchyard"
cp "$root/switchyard.example.yaml" "$work/switchyard.yaml"
cd "$work"
./switchyard --help | head -3
./switchyard config check
./switchyard accounts create smoke --plan free --json >/dev/null
key=$(./switchyard keys create smoke --json | sed -n 's/.*"key": "\(sk-sy-[A-Za-z0-9]*\)".*/\1/p')
[ -n "$key" ] || { echo "no key printed"; exit 1; }
export SWITCHYARD_ADMIN_TOKEN=smoke-admin-token-0123456789abcdefghijkl
./switchyard serve --port 0 --json > serve.out 2> serve.err &
pid=$!
for _ in $(seq 1 100); do [ -s serve.out ] && break; sleep 0.1; done
port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' serve.out)
[ -n "$port" ] || { echo "serve did not start"; cat serve.err; exit 1; }
curl -fsS "http://127.0.0.1:$port/healthz"; echo
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/usage" | grep -q '"is_enabled":true'
curl -fsS -H "Authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"model":"demo/echo","messages":[{"role":"user","content":"hello binary"}]}' \
  "http://127.0.0.1:$port/v1/chat/completions" | grep -q 'hello binary'
base="http://127.0.0.1:$port"
html=$(curl -fsS "$base/console")
echo "$html" | grep -q '<title>Switchyard console</title>'
for asset in $(echo "$html" | grep -o '\(src\|href\)="/[^"]*\.\(js\|css\)"' | sed 's/.*="\(.*\)"/\1/'); do
  size=$(curl -fsS "$base$asset" | wc -c)
  [ "$size" -gt 1000 ] || { echo "console asset $asset is $size bytes"; exit 1; }
  echo "console asset $asset: $size bytes"
done
curl -fsS "$base/console/me" | grep -q '<title>My usage'
cookie=$(curl -fsS -D - -o /dev/null -H 'content-type: application/json' -H "origin: $base" \
  -d "{\"token\":\"$SWITCHYARD_ADMIN_TOKEN\"}" "$base/console/session" | sed -n 's/^set-cookie: \(sy_console=[^;]*\).*/\1/ip')
[ -n "$cookie" ] || { echo "console sign-in gave no cookie"; exit 1; }
curl -fsS -H "cookie: $cookie" "$base/admin/v1/usage/series?group_by=model" | grep -q '"requests":1'
echo "binary smoke test: ok (port $port)"
ls -l "$work"
