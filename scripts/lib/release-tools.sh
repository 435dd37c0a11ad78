# Sourced by scripts/test.d/60-release.sh and scripts/release-snapshot: the
# release tools, pinned, built from their Go modules with `go install` into
# a directory under the Go build cache (TOOLWIRE_TOOLS to put them
# elsewhere), so that a second run finds them built.
#   release_tool goreleaser   prints the binary's path (installing it first)
# On a failed install it prints go install's output on stderr and returns 1.

release_tools_dir=${TOOLWIRE_TOOLS:-$(go env GOCACHE)/toolwire-tools}

# name -> the package to install at its version.
declare -A release_tool_pkg=(
  [goreleaser]=github.com/goreleaser/goreleaser/v2@v2.15.1
  [syft]=github.com/anchore/syft/cmd/syft@v1.57.1
  [helm]=helm.sh/helm/v3/cmd/helm@v3.22.0
)

release_tool() {
  local name=$1 pkg=${release_tool_pkg[$1]:?unknown release tool $1}
  local dir="$release_tools_dir/$name-${pkg##*@}"
  if [[ ! -x $dir/$name ]]; then
    echo "installing $pkg (go install, into $dir)" >&2
    local log
    log=$(mktemp)
    if ! GOBIN=$dir go install "$pkg" >"$log" 2>&1; then
      echo "go install $pkg failed:" >&2
      cat "$log" >&2
      rm -f "$log"
      return 1
    fi
    rm -f "$log"
  fi
  echo "$dir/$name"
}
