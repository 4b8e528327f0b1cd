#!/usr/bin/env bash
# Interop: drive `labwright serve <id>` for EVERY instrument of examples/lab.yaml with clients
# nobody here wrote:
#   1. the MCP Inspector CLI (stdio, then streamable HTTP with and without the bearer token);
#   2. the official MCP conformance suite over streamable HTTP, against interop/conformance-baseline.yml
#      (one baseline for every server: the same scenarios fail for the same reasons).
# Node 22 and both tools come from npm through npx (nothing installed globally). Every server gets a
# fresh LABWRIGHT_STATE_DIR and a free port; all servers are killed on exit. Exit 1 on any mismatch.
# Usage: bash interop/run.sh   (or `make interop`); KEEP=1 keeps the work directory for inspection;
# ONLY="lh1 arm1" limits the run to those instruments.
set -uo pipefail

INSPECTOR_VERSION=2.12.0   # @modelcontextprotocol/inspector (npm view @modelcontextprotocol/inspector version)
CONFORMANCE_VERSION=0.1.16 # @modelcontextprotocol/conformance
NODE_PKG=node@22

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/interop
LABWRIGHT=$ROOT/.venv/bin/labwright
PY=$ROOT/.venv/bin/python
CONFIG=$ROOT/examples/lab.yaml
BASELINE=$HERE/conformance-baseline.yml
SERVER_WAIT_S=${SERVER_WAIT_S:-30}
STEP_TIMEOUT_S=${STEP_TIMEOUT_S:-180} # one npx call, including a cold download

die() { echo "interop: $*" >&2; exit 2; }
[ -x "$LABWRIGHT" ] || die "$LABWRIGHT missing: run 'make install' (or 'make interop')"
command -v npx >/dev/null || die "npx not found: install Node.js (any version; Node 22 comes via npx)"
command -v python3 >/dev/null || die "python3 not found"

START=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/labwright-interop.XXXXXX")
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "interop: work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The inspector keeps a catalog and OAuth state under $HOME: give it a throwaway one, but keep the
# real npm cache so npx downloads once. Run npx's shell commands with bash (quoting below is %q).
NPM_CACHE=$(npm config get cache 2>/dev/null || echo "$HOME/.npm")
export npm_config_cache=$NPM_CACHE npm_config_script_shell=$(command -v bash)
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
mkdir -p "$WORK/home"

RESULTS=()
FAILED=0
record() { # record NAME STATUS DETAIL
  RESULTS+=("$(printf '%-4s  %-44s %s' "$2" "$1" "$3")")
  [ "$2" = PASS ] || FAILED=1
  printf '[%s] %s: %s\n' "$2" "$1" "$3"
}

# npx_run LOG PKG CMD ARGS... : run CMD from PKG under Node 22; stdout to $LOG.out, stderr to $LOG.err
# (stdin from /dev/null: the loop over instruments reads its list from stdin)
npx_run() {
  local log=$1 pkg=$2
  shift 2
  local cmd
  cmd=$(printf '%q ' "$@")
  HOME=$WORK/home timeout "$STEP_TIMEOUT_S" \
    npx -y -p "$NODE_PKG" -p "$pkg" -c "$cmd" </dev/null >"$log.out" 2>"$log.err"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_http NAME INSTRUMENT [extra serve args...] : sets PORT and SERVER_PID; fails the run if
# the port never opens. Each server gets its own fresh state directory.
start_http() {
  local name=$1 instrument=$2
  shift 2
  PORT=$(free_port)
  mkdir -p "$WORK/state-$name"
  LABWRIGHT_STATE_DIR=$WORK/state-$name "$LABWRIGHT" serve "$instrument" --config "$CONFIG" \
    --transport http --port "$PORT" "$@" </dev/null >"$WORK/server-$name.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  if ! python3 - "$PORT" "$SERVER_PID" "$SERVER_WAIT_S" <<'EOF'; then
import os, socket, sys, time
port, pid, limit = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("server exited before listening")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(f"port {port} not open after {limit:g}s")
EOF
    echo "---- server-$name.log" >&2
    tail -n 30 "$WORK/server-$name.log" >&2
    return 1
  fi
}

# stop_http : stop the server start_http started last (any other is killed on exit)
stop_http() {
  kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  return 0
}

INSPECTOR=@modelcontextprotocol/inspector@$INSPECTOR_VERSION
STEP=0
# inspect NAME CHECK [inspector args...] : run the inspector CLI, judge its JSON with check.py
# as the output of instrument $ID (of kind $KIND)
inspect() {
  local name="$ID $1" check=$2
  shift 2
  STEP=$((STEP + 1))
  local log=$WORK/inspector-$STEP rc detail
  npx_run "$log" "$INSPECTOR" mcp-inspector --cli -q --format json "$@"
  rc=$?
  if [ $rc = 124 ]; then
    record "$name" FAIL "inspector timed out after ${STEP_TIMEOUT_S}s"
  elif detail=$("$PY" "$HERE/check.py" inspector "$check" "$log.out" "$rc" "$ID" "$KIND"); then
    record "$name" PASS "$detail"
  else
    record "$name" FAIL "$detail"
    echo "  ---- inspector: $log.out/.err, exit $rc"
    echo "  ---- inspector stdout (first 20 lines):"; head -n 20 "$log.out" | cut -c1-400 | sed 's/^/  /'
    echo "  ---- inspector stderr (last 20 lines):"; grep -v '^npm warn' "$log.err" | tail -n 20 | sed 's/^/  /'
  fi
}

# The inspector spawns the server with a minimal environment: pass the state directory with -e.
stdio_server() { printf '%s\n' -e "LABWRIGHT_STATE_DIR=$1" -- "$LABWRIGHT" serve "$ID" --config "$CONFIG"; }

# inspector_stdio : every stdio check of instrument $ID ($KIND); the calls of each kind are in
# interop/cases/<kind>.json (error, execute)
inspector_stdio() {
  local s1 s2 tool args label
  mapfile -t s1 < <(stdio_server "$WORK/state-$ID-stdio-1")
  mapfile -t s2 < <(stdio_server "$WORK/state-$ID-stdio-2")
  inspect "stdio tools/list" tools_list --method tools/list "${s1[@]}"
  inspect "stdio tools/call get_state" get_state --method tools/call --tool-name get_state "${s1[@]}"
  if IFS=$'\t' read -r tool args label < <("$PY" "$HERE/check.py" case "$KIND" error) \
    && [ -n "$label" ]; then
    inspect "stdio tools/call error ($label)" tool_error --method tools/call --tool-name "$tool" \
      --tool-args-json "$args" "${s1[@]}"
  else
    record "$ID stdio tools/call error" FAIL "no error case for kind $KIND in interop/cases"
  fi
  # A fresh state dir for the executing call: a server restarted on an old state is STATE_STALE.
  # The next server on that directory must still show the effect (state persisted).
  if IFS=$'\t' read -r tool args label < <("$PY" "$HERE/check.py" case "$KIND" execute) \
    && [ -n "$label" ]; then
    inspect "stdio tools/call $label (execute)" execute --method tools/call --tool-name "$tool" \
      --tool-args-json "$args" "${s2[@]}"
  else
    record "$ID stdio tools/call execute" FAIL "no execute case for kind $KIND in interop/cases"
  fi
  inspect "stdio resources/read state" resource_state --method resources/read \
    --uri "lab://$ID/state" "${s2[@]}"
  inspect "stdio prompts/list" prompts_list --method prompts/list "${s1[@]}"
}

# inspector_http : tools/list over streamable HTTP with the bearer token, and refused without it
inspector_http() {
  local token=interop-$RANDOM$RANDOM url
  if start_http "$ID-token" "$ID" --token "$token"; then
    url=http://127.0.0.1:$PORT/mcp
    inspect "http tools/list (bearer token)" tools_list --transport http --server-url "$url" \
      --header "Authorization: Bearer $token" --method tools/list
    inspect "http tools/list (no token -> 401)" auth_rejected --transport http --server-url "$url" \
      --stored-auth-only --connect-timeout 15000 --method tools/list
    stop_http
  else
    record "$ID http server (token)" FAIL "labwright serve $ID --transport http did not start"
  fi
}

CONF_SUMMARIES=()
# conformance_http : the conformance suite against `labwright serve $ID --transport http`
conformance_http() {
  local name="$ID conformance vs baseline" out=$WORK/conformance-$ID rc vrc
  if ! start_http "$ID-conformance" "$ID"; then
    record "$ID http server (conformance)" FAIL "labwright serve $ID --transport http did not start"
    return
  fi
  # Run from $WORK so the suite's files land there; judge its per-scenario checks.json ourselves
  # (the native --expected-failures would also fail on a baselined scenario that now passes).
  (cd "$WORK" && npx_run "$out" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
    conformance server --url "http://127.0.0.1:$PORT/mcp" -o "$out-results")
  rc=$?
  stop_http
  if [ $rc = 124 ]; then
    record "$name" FAIL "suite timed out after ${STEP_TIMEOUT_S}s"
  elif [ ! -d "$out-results" ]; then
    record "$name" FAIL "no results (suite exit $rc)"
    grep -v '^npm warn' "$out.err" | tail -n 20 >&2
  else
    "$PY" "$HERE/check.py" conformance "$out-results" "$out.out" "$BASELINE" >"$out.verdict"
    vrc=$?
    sed 's/^/  /' "$out.verdict"
    CONF_SUMMARIES+=("$ID $(head -n 1 "$out.verdict")")
    if [ $vrc = 0 ]; then
      record "$name" PASS "no unexpected failures"
    else
      record "$name" FAIL "$(grep -c 'UNEXPECTED FAILURE\|MISMATCH' "$out.verdict") unexpected"
      grep -v '^npm warn' "$out.out" | sed -n '/=== SUMMARY ===/,$p' | head -n 60
    fi
  fi
}

# The instruments of the lab, "id kind" per line, as labwright itself reads the config.
INSTRUMENTS=$("$PY" - "$CONFIG" <<'EOF'
import sys
from device_servers.lab import load
for inst in load(sys.argv[1]).instruments:
    print(inst.id, getattr(inst, "kind", "?"))
EOF
) || die "cannot read the instruments of $CONFIG"
[ -n "$INSTRUMENTS" ] || die "no instruments in $CONFIG"
echo "interop: instruments of examples/lab.yaml: $(echo "$INSTRUMENTS" | tr '\n' ' ')"

while read -r ID KIND; do
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $ID "* ]]; then continue; fi
  echo
  echo "== $ID ($KIND): MCP Inspector CLI $INSPECTOR_VERSION (Node 22 via npx) over stdio"
  inspector_stdio
  echo "== $ID ($KIND): MCP Inspector CLI over streamable HTTP with a bearer token"
  inspector_http
  echo "== $ID ($KIND): conformance suite $CONFORMANCE_VERSION (active server scenarios), streamable HTTP"
  conformance_http
done <<<"$INSTRUMENTS"

echo
echo "== interop summary ($(($(date +%s) - START))s)"
printf '%s\n' "${RESULTS[@]}" "${CONF_SUMMARIES[@]}"
if [ ${#RESULTS[@]} = 0 ]; then
  echo "interop: nothing ran (ONLY=${ONLY:-} names no instrument of the lab)"
  FAILED=1
fi
if [ $FAILED = 0 ]; then
  echo "interop: ALL PASS"
else
  echo "interop: FAILED (see the FAIL lines above)"
fi
exit $FAILED
