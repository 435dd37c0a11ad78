# Sourced by the suite scripts under scripts/test.d (and the other steps of
# scripts/test written as scripts): `result STATUS NAME
# [WHY]` records one test (STATUS pass, fail or skip) for scripts/test to
# count and list, as a line of the file $TOOLWIRE_TEST_RESULTS it names
# (`STATUS NAME`, then a tab and WHY). A suite run on its own records
# nothing. A suite that records nothing counts as one test, passed or failed
# by its exit status; one that fails having recorded no failure counts one
# failure more.
result() {
  [[ -n ${TOOLWIRE_TEST_RESULTS:-} ]] || return 0
  if [[ -n ${3:-} ]]; then
    printf '%s %s\t%s\n' "$1" "$2" "$3" >>"$TOOLWIRE_TEST_RESULTS"
  else
    printf '%s %s\n' "$1" "$2" >>"$TOOLWIRE_TEST_RESULTS"
  fi
}

# note TEXT is a note on the step for scripts/test's table.
note() {
  [[ -n ${TOOLWIRE_TEST_RESULTS:-} ]] || return 0
  printf 'note %s\n' "$1" >>"$TOOLWIRE_TEST_RESULTS"
}

# conformance_summary RC PREFIX LOG records each scenario of a conformance
# suite run (LOG, its output; RC, its exit status) from the summary it prints
# ("✓ name: 3 passed, 0 failed", "✗ ...", "- name: skipped"), named PREFIX
# and the scenario. A failed scenario of a run that passed is an expected
# failure (in the run's baseline), counted as skipped; a scenario with no
# check is counted as skipped too. A run that failed with no failed scenario
# in its summary (a stale baseline entry, a crash) is one failure more.
# PREFIX may be empty.
conformance_summary() {
  local rc=$1 p=${2:+$2 } log=$3 line mark name passed failed rest fails=0 in=0
  while IFS= read -r line; do
    if [[ $line =~ ^===\ (SUITE\ )?SUMMARY\ ===$ ]]; then
      in=1
      continue
    fi
    [[ $in -eq 1 ]] || continue
    if [[ $line =~ ^-\ ([^[:space:]]+):\ skipped ]]; then
      result skip "$p${BASH_REMATCH[1]}" "the suite skipped it"
      continue
    fi
    [[ $line =~ ^(✓|✗)\ ([^[:space:]]+):\ ([0-9]+)\ passed,\ ([0-9]+)\ failed(.*)$ ]] || continue
    mark=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} passed=${BASH_REMATCH[3]} failed=${BASH_REMATCH[4]} rest=${BASH_REMATCH[5]}
    if [[ $mark == ✓ && $passed -eq 0 && $failed -eq 0 ]]; then
      result skip "$p$name" "no check ran"
    elif [[ $mark == ✓ ]]; then
      result pass "$p$name"
    elif [[ $rc -eq 0 ]]; then
      result skip "$p$name" "expected failure (in the baseline): $passed passed, $failed failed$rest"
    else
      result fail "$p$name" "$passed passed, $failed failed$rest"
      fails=$((fails + 1))
    fi
  done <"$log"
  if [[ $rc -ne 0 && $fails -eq 0 ]]; then
    result fail "${2:-suite}" "the suite exited with status $rc, no scenario failed in its summary (see its log)"
  fi
}
