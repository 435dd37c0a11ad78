#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios (pinned in
# conformance/npm, --suite all) against toolwire's conformance client
# (conformance/client). Only the scenarios listed in
# conformance/client/expected-failures.yml (none) may fail; anything else
# failing, or a listed scenario passing, fails this script. Prints the suite's
# summary. Under scripts/test each scenario counts as a test.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/conformance.sh
source scripts/lib/results.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/conformance-client" ./conformance/client

status=0
"$NODE" "$SUITE" client \
  --command "$work/conformance-client" \
  --suite all \
  --expected-failures conformance/client/expected-failures.yml \
  -o "$work/results" >"$work/out.log" 2>&1 || status=$?
conformance_summary "$status" "" "$work/out.log"

# The full log is long (every check of every scenario); show the summary, and
# everything when the run failed.
if [[ $status -ne 0 ]]; then
  cat "$work/out.log"
  echo "conformance client suite FAILED (exit $status)" >&2
  exit "$status"
fi
sed -n '/=== SUITE SUMMARY ===/,$p' "$work/out.log"
