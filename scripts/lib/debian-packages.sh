#!/usr/bin/env bash
# Installs the Debian packages the Go tests need when they are missing:
# postgresql, whose server binaries (initdb, postgres) the audit store's tests
# run as their own throwaway server (internal/testenv/postgres.go), and
# chromium, the headless browser the admin page's browser test drives
# (internal/testenv/chromium.go), and redis-server, which the shared-state
# tests run the same way (internal/testenv/redis.go). Quick and quiet when
# they are there.
# Otherwise, as root with apt-get, it runs `apt-get update` and one
# `apt-get install --no-install-recommends` for all that is missing; without
# root or apt-get it says once what is not installed and how to install it,
# and fails only in CI (CI set), where the tests would fail on it anyway.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/results.sh

# Debian puts the server binaries off PATH, in /usr/lib/postgresql/<N>/bin.
have_postgres() {
  command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

# The browser under any of the names internal/testenv/chromium.go looks for.
have_chromium() {
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
    command -v google-chrome >/dev/null 2>&1
}

missing=()
have_postgres || missing+=(postgresql)
have_chromium || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "Debian packages: nothing missing (postgresql, chromium, redis-server)"
  exit 0
fi

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  why="not root"
  command -v apt-get >/dev/null 2>&1 || why="no apt-get"
  note "not installed: ${missing[*]}"
  {
    echo "Debian packages NOT INSTALLED ($why): ${missing[*]}"
    echo "  install them as root with: apt-get install --no-install-recommends ${missing[*]}"
    if [[ -n ${CI:-} ]]; then
      echo "  In CI (CI is set) this fails, and so do the tests that need them."
    else
      echo "  Not in CI, so the run goes on: the tests that need them skip (the summary lists them); in CI this fails."
    fi
  } >&2
  if [[ -n ${CI:-} ]]; then
    exit 1
  fi
  exit 0
fi

echo "installing Debian packages: ${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq >"$log" 2>&1 ||
  ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
  cat "$log" >&2
  echo "apt-get could not install: ${missing[*]}" >&2
  note "apt-get could not install: ${missing[*]}"
  exit 1
fi
if ! have_postgres; then
  echo "postgresql is installed but initdb is in neither PATH nor /usr/lib/postgresql/*/bin" >&2
  exit 1
fi
if ! have_chromium; then
  echo "chromium is installed but none of chromium, chromium-browser, google-chrome is on PATH" >&2
  exit 1
fi
echo "installed: ${missing[*]}"
