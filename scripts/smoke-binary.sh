#!/usr/bin/env bash
# Runs the compiled binary as a new operator would, from an empty directory holding only it:
# --version, per-command --help, init (the starter config), config check, accounts/keys via its
# own CLI, serve, /healthz, /v1/usage, a completion, a count_tokens (o200k's table), the CLI from
# another folder with --config, the console (its page and assets come out of the binary; sign-in gives a session
# cookie that reads the admin API), then SIGTERM → exit 0; and serve on a taken port → non-zero
# exit within 5 s.
set -euo pipefail
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/vm" "$work/elsewhere"
cp "$bin" "$work/vm/switchyard"
cd "$work/vm"
fail() { echo "binary smoke test FAILED: $*"; exit 1; }

./switchyard --version | grep -Eq '^switchyard [0-9]+\.[0-9]+\.[0-9]+' || fail "--version"
./switchyard keys --help | grep -q -- '--name LABEL' || fail "keys --help does not show keys' flags"
[ "$(ls)" = "switchyard" ] || fail "the folder is not empty before init"
./switchyard init
[ -s switchyard.yaml ] || fail "init wrote no switchyard.yaml"
if ./switchyard init 2>/dev/null; then fail "init overwrote its config"; fi
./switchyard config check
./switchyard accounts create smoke --plan free --json >/dev/null
key=$(./switchyard keys create smoke --json 2>/dev/null | sed -n 's/.*"key": "\(sk-sy-[A-Za-z0-9]*\)".*/\1/p')
[ -n "$key" ] || fail "no key printed"

export SWITCHYARD_ADMIN_TOKEN=smoke-admin-token-0123456789abcdefghijkl
./switchyard serve --port 0 --json > serve.out 2> serve.err &
pid=$!
for _ in $(seq 1 100); do [ -s serve.out ] && break; sleep 0.1; done
port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' serve.out)
[ -n "$port" ] || { cat serve.err; fail "serve did not start"; }
curl -fsS "http://127.0.0.1:$port/healthz"; echo
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/usage" | grep -q '"is_enabled":true'
curl -fsS -H "Authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"model":"demo/echo","messages":[{"role":"user","content":"hello binary"}]}' \
  "http://127.0.0.1:$port/v1/chat/completions" | grep -q 'hello binary'
# A count the gateway makes itself (the demo provider cannot count), with the o200k table inside
# the binary: "user", "hello", " binary", 3 for the message and 3 for the reply.
counted=$(curl -fsS -H "Authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"model":"demo/echo","messages":[{"role":"user","content":"hello binary"}]}' \
  "http://127.0.0.1:$port/v1/messages/count_tokens")
echo "$counted" | grep -q '"input_tokens":9' || fail "count_tokens answered $counted"

# The console, from inside the binary.
base="http://127.0.0.1:$port"
html=$(curl -fsS "$base/console")
echo "$html" | grep -q '<title>Switchyard console</title>' || fail "GET /console is not the console"
for asset in $(echo "$html" | grep -o '\(src\|href\)="/[^"]*\.\(js\|css\)"' | sed 's/.*="\(.*\)"/\1/'); do
  size=$(curl -fsS "$base$asset" | wc -c)
  [ "$size" -gt 1000 ] || fail "console asset $asset is $size bytes"
  echo "console asset $asset: $size bytes"
done
curl -fsS "$base/console/me" | grep -q '<title>My usage' || fail "GET /console/me is not the key holder page"
cookie=$(curl -fsS -D - -o /dev/null -H 'content-type: application/json' -H "origin: $base" \
  -d "{\"token\":\"$SWITCHYARD_ADMIN_TOKEN\"}" "$base/console/session" | sed -n 's/^set-cookie: \(sy_console=[^;]*\).*/\1/ip')
[ -n "$cookie" ] || fail "console sign-in gave no cookie"
# Outcomes and their rollups are written in batches (usage.flush_ms), so the chat above shows up
# in the series within a flush interval, not at once.
seen=""
for _ in $(seq 1 30); do
  if curl -fsS -H "cookie: $cookie" "$base/admin/v1/usage/series?group_by=model" | grep -q '"requests":1'; then
    seen=1; break
  fi
  sleep 0.1
done
[ -n "$seen" ] || fail "the console session does not read usage"

# The CLI from another folder sees the same database (database.path follows the config file).
(cd "$work/elsewhere" && "$work/vm/switchyard" accounts list --config ../vm/switchyard.yaml) | grep -q smoke \
  || fail "the CLI from another folder does not see the account"
[ ! -e "$work/elsewhere/data" ] || fail "the CLI created a database in the current folder"

# The port is taken now: a second serve must fail fast.
start=$(date +%s)
if ./switchyard serve --port "$port" 2>/dev/null; then fail "serve on a taken port exited 0"; fi
[ $(( $(date +%s) - start )) -le 5 ] || fail "serve on a taken port took more than 5 s to exit"

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
[ "$code" -eq 0 ] || { cat serve.err; fail "serve exited $code after SIGTERM"; }
grep -q '"msg":"access"' serve.err || fail "no access log line"
echo "binary smoke test: ok (port $port)"
ls -l "$work/vm"
