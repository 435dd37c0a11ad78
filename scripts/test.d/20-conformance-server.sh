#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/npm) against
# toolwire's conformance fixture server, both ways: --spec-version 2025-11-25
# (stateful sessions) and 2026-07-28 (stateless), --suite all. Each run may
# fail only the scenarios listed in conformance/server/expected-failures-*.yml;
# anything else failing, or a listed scenario passing, fails this script.
# Under scripts/test each scenario of each run counts as a test.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/conformance.sh
source scripts/lib/results.sh

conformance_scratch

go build -o "$work/conformance-server" ./conformance/server
# Port 0: the server picks a free loopback port and prints its URL.
"$work/conformance-server" -addr 127.0.0.1:0 >"$work/url" 2>"$work/server.log" &
server_pid=$!
server_url() { head -n 1 "$work/url" 2>/dev/null || true; }
conformance_wait_url "conformance server"

status=0
for version in 2025-11-25 2026-07-28; do
  echo "== conformance server --suite all --spec-version $version"
  set +e
  "$NODE" "$SUITE" server --url "$url" --suite all --spec-version "$version" \
    --expected-failures "conformance/server/expected-failures-$version.yml" \
    -o "$work/results-$version" >"$work/run-$version.log" 2>&1
  rc=$?
  set -e
  # The summary and the baseline verdict; the per-scenario log is long.
  sed -n '/=== SUMMARY ===/,$p' "$work/run-$version.log"
  conformance_summary "$rc" "$version" "$work/run-$version.log"
  if [[ $rc -ne 0 ]]; then
    echo "conformance $version: FAILED (exit $rc); full log:" >&2
    cat "$work/run-$version.log" >&2
    status=1
  else
    echo "conformance $version: OK (only the expected failures)"
  fi
done

# The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) scenarios are
# off the spec timeline, so --suite all leaves them out: each is run here by
# name with --force. They are taken from the suite's own list, so one added
# later runs too. They exist for 2026-07-28 only (they discover the server
# and expect the extension's flat task results); 2025-11-25 tasks are tested
# by the Go tests (server/task_test.go, the durability test of the binary).
# Any failed or warned check fails the run; a scenario the suite skips
# (tasks-status-notifications: "pending subscriptions/listen rewrite") is
# reported as skipped by the suite itself.
mapfile -t task_scenarios < <("$NODE" "$SUITE" list 2>/dev/null |
  sed -n '/^Server scenarios/,/^Client scenarios/p' | sed -n 's/^  - \(tasks-[a-z0-9-]*\) \[extension\]$/\1/p')
if [[ ${#task_scenarios[@]} -lt 10 ]]; then
  echo "expected at least 10 tasks scenarios in the suite's list, found ${#task_scenarios[@]}" >&2
  result fail "2026-07-28 tasks scenarios" "the suite lists ${#task_scenarios[@]}, expected at least 10"
  status=1
fi
for sc in "${task_scenarios[@]}"; do
  set +e
  "$NODE" "$SUITE" server --url "$url" --scenario "$sc" --force >"$work/$sc.log" 2>&1
  rc=$?
  set -e
  summary=$(grep -E '^Passed: ' "$work/$sc.log" | tail -n 1 || true)
  if [[ $rc -ne 0 || -z $summary || ! $summary =~ \ 0\ failed,\ 0\ warnings ]]; then
    echo "conformance $sc: FAILED (exit $rc)" >&2
    cat "$work/$sc.log" >&2
    result fail "2026-07-28 $sc" "${summary:-no summary} (exit $rc)"
    status=1
  elif [[ $summary =~ ^Passed:\ 0/0, ]]; then
    echo "conformance $sc (extension): $summary (skipped by the suite)"
    result skip "2026-07-28 $sc" "the suite skips it: no check ran"
  else
    echo "conformance $sc (extension): $summary"
    result pass "2026-07-28 $sc"
  fi
done

conformance_server_alive "conformance server" || status=1
exit $status
