#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/npm) against
# `toolwire serve` itself, the reference "everything" server, not the
# conformance fixture server: every scenario of 2025-11-25 and 2026-07-28
# that needs no test_* fixture tool, prompt or resource must pass with no
# failed check and no warning. The scenarios left out are listed below with
# the reason; a scenario the suite lists that is in neither list fails the
# script, so a new one gets a decision. Under scripts/test each scenario run
# counts as a test.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/conformance.sh
source scripts/lib/results.sh

# version:scenario, run one by one.
run=(
  2025-11-25:server-initialize
  2025-11-25:server-session-lifecycle
  2025-11-25:logging-set-level
  2025-11-25:ping
  2025-11-25:tools-list
  2025-11-25:server-sse-multiple-streams
  2025-11-25:resources-list
  2025-11-25:resources-subscribe
  2025-11-25:resources-unsubscribe
  2025-11-25:prompts-list
  2025-11-25:dns-rebinding-protection
  2026-07-28:tools-list
  2026-07-28:server-sse-multiple-streams
  2026-07-28:resources-list
  2026-07-28:sep-2164-resource-not-found
  2026-07-28:prompts-list
  2026-07-28:dns-rebinding-protection
  2026-07-28:caching
  2026-07-28:http-header-validation
  2026-07-28:input-required-result-unsupported-methods
)

# scenario (both versions) = why it is left out.
declare -A skip=(
  [completion-complete]="completes the fixture prompt test_prompt_with_arguments"
  [tools-call-simple-text]="calls the fixture tool test_simple_text"
  [tools-call-image]="calls the fixture tool test_image_content"
  [tools-call-audio]="calls the fixture tool test_audio_content"
  [tools-call-embedded-resource]="calls the fixture tool test_embedded_resource"
  [tools-call-mixed-content]="calls the fixture tool test_multiple_content_types"
  [tools-call-with-logging]="calls the fixture tool test_tool_with_logging"
  [tools-call-error]="calls the fixture tool test_error_handling"
  [tools-call-with-progress]="calls the fixture tool test_tool_with_progress"
  [tools-call-sampling]="calls the fixture tool test_sampling"
  [tools-call-elicitation]="calls the fixture tool test_elicitation"
  [json-schema-2020-12]="lists the fixture tool json_schema_2020_12_tool"
  [elicitation-sep1034-defaults]="calls the fixture tool test_elicitation_sep1034_defaults"
  [elicitation-sep1330-enums]="calls the fixture tool test_elicitation_sep1330_enums"
  [server-sse-polling]="calls the fixture tool test_reconnection"
  [resources-read-text]="reads the fixture resource test://static-text"
  [resources-read-binary]="reads the fixture resource test://static-binary"
  [resources-templates-read]="reads the fixture template test://template/{id}/data"
  [prompts-get-simple]="gets the fixture prompt test_simple_prompt"
  [prompts-get-with-args]="gets the fixture prompt test_prompt_with_arguments"
  [prompts-get-embedded-resource]="gets the fixture prompt test_prompt_with_embedded_resource"
  [prompts-get-with-image]="gets the fixture prompt test_prompt_with_image"
  [server-stateless]="calls structural fixture tools such as test_missing_capability"
  [http-custom-header-server-validation]="needs a fixture tool with x-mcp-header parameters (the reference tools declare none)"
  [input-required-result-basic-elicitation]="calls the fixture tool test_input_required_result_elicitation"
  [input-required-result-basic-sampling]="calls the fixture tool test_input_required_result_sampling"
  [input-required-result-basic-list-roots]="calls the fixture tool test_input_required_result_list_roots"
  [input-required-result-request-state]="calls the fixture tool test_input_required_result_request_state"
  [input-required-result-multiple-input-requests]="calls the fixture tool test_input_required_result_multiple_inputs"
  [input-required-result-multi-round]="calls the fixture tool test_input_required_result_multi_round"
  [input-required-result-missing-input-response]="calls the fixture tool test_input_required_result_elicitation"
  [input-required-result-non-tool-request]="gets the fixture prompt test_input_required_result_prompt"
  [input-required-result-result-type]="calls the fixture tool test_input_required_result_elicitation"
  [input-required-result-tampered-state]="calls the fixture tool test_input_required_result_tampered_state"
  [input-required-result-capability-check]="calls the fixture tool test_input_required_result_capabilities"
  [input-required-result-ignore-extra-params]="calls the fixture tool test_input_required_result_elicitation"
  [input-required-result-validate-input]="calls the fixture tool test_input_required_result_elicitation"
)

conformance_scratch

status=0
# Every scenario the suite lists is either run or left out for a reason.
for version in 2025-11-25 2026-07-28; do
  while read -r scenario; do
    if [[ -z ${skip[$scenario]+x} ]] && ! printf '%s\n' "${run[@]}" | grep -qx "$version:$scenario"; then
      echo "conformance serve: $version scenario $scenario is neither run nor skipped: decide" >&2
      result fail "$version $scenario" "neither run nor left out in $0: decide"
      status=1
    fi
  done < <("$NODE" "$SUITE" list --server --spec-version "$version" | sed -n 's/^ *- \([^ ]*\).*/\1/p')
done

go build -o "$work/toolwire" ./cmd/toolwire
# Port 0: the server picks a free loopback port and logs its URL (url=...)
# on stderr.
"$work/toolwire" serve --addr 127.0.0.1:0 --data-dir "$work/data" --log-level info 2>"$work/server.log" &
server_pid=$!
server_url() { sed -n 's/.*url=\([^ ]*\).*/\1/p' "$work/server.log" | head -n 1; }
conformance_wait_url "toolwire serve"

for entry in "${run[@]}"; do
  version=${entry%%:*} scenario=${entry#*:}
  log="$work/run-$version-$scenario.log"
  set +e
  "$NODE" "$SUITE" server --url "$url" --scenario "$scenario" --spec-version "$version" \
    -o "$work/results-$version-$scenario" >"$log" 2>&1
  rc=$?
  set -e
  summary=$(grep -h '^Passed:' "$log" | tail -n 1)
  if [[ $rc -ne 0 ]] || ! grep -qE '^Passed: [1-9][0-9]*/[0-9]+, 0 failed, 0 warnings' <<<"$summary"; then
    echo "FAIL $version $scenario (exit $rc): ${summary:-no summary}; log:" >&2
    cat "$log" >&2
    result fail "$version $scenario" "${summary:-no summary} (exit $rc)"
    status=1
  else
    echo "ok   $version $scenario: $summary"
    result pass "$version $scenario"
  fi
done
conformance_server_alive "toolwire serve" || status=1
exit $status
