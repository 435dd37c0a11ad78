#!/usr/bin/env bash
# Runs every fuzz target of the root module for a few seconds each (the
# strict JSON decoding above all: jsonrpc's envelope against its fallback and
# against an independent strict reference, the scanner, the wire decoder's
# case check, DecodeValue, Check against validation of the decoded tree,
# content blocks). The seed corpora already run in
# `go test`; this looks a little further on every run. A finding fails the
# script; the failing input is left under the package's testdata/fuzz/ for
# `go test -run=FuzzName/<id>` to replay. The targets are listed explicitly,
# and a target missing from the list fails the script (after the listed ones
# ran), so none is forgotten. Under scripts/test each target counts as a test.
# FUZZTIME (default 4s) sets the time per target, or with an x suffix the
# executions (FUZZTIME=1000000x is the long run RELIABILITY.md records);
# FUZZ_ONLY, a regular expression, picks targets by name.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/results.sh

fuzztime=${FUZZTIME:-4s}

# package target
targets=(
  "./jsonrpc FuzzDecodeStrict"
  "./jsonrpc FuzzDecodeMatchesReference"
  "./jsonrpc FuzzEncodeRoundTrip"
  "./internal/jsonstr FuzzAppend"
  "./internal/uritemplate FuzzTemplateMatch"
  "./internal/jsonscan FuzzSkipAgreesWithValid"
  "./internal/jsonscan FuzzMembersAgreesWithJSONText"
  "./internal/jsonscan FuzzNestedAgreesWithValid"
  "./internal/wirejson FuzzUnmarshalCaseCheck"
  "./internal/wirejson FuzzElements"
  "./internal/wirejson FuzzDiscardObject"
  "./schema FuzzDecodeValue"
  "./schema FuzzCheckMatchesTree"
  "./mcp FuzzDecodeContent"
  "./mcp FuzzAppendString"
  "./mcp FuzzDecodeWireResults"
  "./mcp FuzzDecodeTasks"
  "./server FuzzInputRound"
  "./client FuzzSSEReader"
  "./client FuzzDecodeTask"
  "./client FuzzResolveEndpoint"
  "./oauth FuzzParseWWWAuthenticate"
  "./oauth FuzzDecodeMetadata"
  "./oauth FuzzDecodeTokenResponse"
  "./otc FuzzParseCall"
  "./transport/stdio FuzzConnRead"
  "./transport/streamable FuzzHTTPPost"
  "./oauth FuzzDecodeExchangeResponse"
  "./auth FuzzPeekTarget"
  "./gateway/config FuzzParse"
  "./internal/units FuzzParseDuration"
  "./internal/units FuzzParseSize"
  "./gateway FuzzClean"
  "./gateway FuzzTargetDecidedIsForwarded"
  "./gateway/policy FuzzGlob"
  "./gateway/audit FuzzRedact"
  "./gateway/audit FuzzJournalEntry"
  "./gateway/enrich FuzzApply"
  "./flow FuzzParse"
  "./internal/yamlsrc FuzzParse"
  "./server FuzzResumeSession"
  "./redisstore FuzzEventID"
  "./redisstore FuzzLimiterReply"
  "./transport/streamable/filestore FuzzOpen"
)

# Every fuzz target in the module (bench/ is a module of its own) must be listed.
missing=0
while IFS=: read -r file name; do
  pkg="./$(dirname "${file#./}")"
  if ! printf '%s\n' "${targets[@]}" | grep -qx "$pkg $name"; then
    echo "fuzz target $name in $file is not listed in $0" >&2
    result fail "$name ($pkg)" "not listed in $0"
    missing=1
  fi
done < <(grep -roE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' --exclude-dir=bench --exclude-dir=node_modules . |
  sed -E 's/:func /:/')

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  if [[ -n ${FUZZ_ONLY:-} ]] && ! [[ $name =~ $FUZZ_ONLY ]]; then
    continue
  fi
  start=$SECONDS
  corpus="$pkg/testdata/fuzz/$name"
  before=$(ls "$corpus" 2>/dev/null | sort || true)
  # A long minimization of a new interesting input would stall a short run,
  # hence -fuzzminimizetime; a failing input is still minimized that long.
  set +e
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s "$pkg" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -n 1 || true)
  after=$(ls "$corpus" 2>/dev/null | sort || true)
  if [[ $rc -eq 0 ]]; then
    echo "-- $name ($pkg): ok, ${execs:-execs: ?} in $((SECONDS - start))s (budget $fuzztime)"
    result pass "$name ($pkg)"
  elif [[ $before == "$after" ]] && ! grep -q 'Failing input written' "$log" &&
    [[ $(grep -v -e '^fuzz: ' -e '^warning: ' -e '^--- FAIL: ' -e '^FAIL' -e '^exit status ' "$log" | tr -d ' \t') == contextdeadlineexceeded ]]; then
    # Go's fuzz coordinator (up to go1.26) can report the end of a
    # -fuzztime budget as a failure when a worker is mid-call under CPU
    # contention: golang/go#75804. No input failed; nothing was written.
    echo "-- $name ($pkg): ok, ${execs:-execs: ?} in $((SECONDS - start))s (budget $fuzztime) (ignored the coordinator's spurious \"context deadline exceeded\", golang/go#75804)"
    result pass "$name ($pkg)"
  else
    echo "-- $name ($pkg): FAILED" >&2
    grep -v '^fuzz: elapsed: ' "$log" >&2 || true
    failed+=("$name")
    result fail "$name ($pkg)" "see its output above"
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzzing found failures in: ${failed[*]}" >&2
fi
if [[ ${#failed[@]} -gt 0 || $missing -ne 0 ]]; then
  exit 1
fi
echo "fuzz-short: ${#targets[@]} targets, $fuzztime each, no findings"
