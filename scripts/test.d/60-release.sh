#!/usr/bin/env bash
# Release and deployment files, checked as a user would use them. Each part
# counts as a test under scripts/test:
#   goreleaser    `goreleaser check` of .goreleaser.yaml, then a snapshot
#                 build of one non-host target (linux/arm64 on amd64) and of
#                 the host's, and `toolwire version` of both (the non-host one
#                 under qemu-user) printing the stamped snapshot version
#                 (the six-target release is scripts/release-snapshot)
#   helm          `helm lint --strict` of deploy/helm/toolwire-gateway with
#                 its defaults and each ci/ value set (single SQLite; 3
#                 replicas with Redis and PostgreSQL; OAuth and keys from
#                 Secrets), `helm template` of each, and the deploy module's
#                 Go tests (the rendered manifests, the Compose topology)
#   helm-config   the gateway.yaml each value set renders, through
#                 `toolwire gateway --check`
#   systemd       `systemd-analyze verify` of deploy/systemd's unit (its
#                 ExecStart pointed at the snapshot binary) and its offline
#                 security exposure, at most 2.0
#   compose       `toolwire gateway --check` of deploy/compose/gateway.yaml
#   image         the Dockerfile's final stage built without a registry
#                 (buildah, from a rootfs made by deploy/image/rootfs.sh with
#                 the snapshot binary), inspected (user, entrypoint, command,
#                 health check, volume, labels, size), then run with podman:
#                 `toolwire version`, and the default command (the embedded
#                 default) answering /readyz, its health check and a
#                 tools/list, all inside the container's own network
#                 namespace (no address off loopback is used)
# Tools: goreleaser and helm are built from their Go modules once
# (scripts/lib/release-tools.sh); the Debian packages podman, buildah,
# runc, qemu-user-static, busybox-static, ca-certificates and systemd are
# installed when missing (as root with apt-get). A tool that cannot be had
# fails its part with the error; without root (outside CI) the parts
# needing a missing package skip, saying which.
set -uo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/results.sh
source scripts/lib/release-tools.sh

work=$(mktemp -d)
image="" ctr=""
cleanup() {
  [[ -n $ctr ]] && podman rm -f "$ctr" >/dev/null 2>&1
  [[ -n $image ]] && podman rmi -f "$image" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

status=0
# part NAME FUNCTION: runs one part, records it, shows its output (all of
# it when it failed). FUNCTION returns 0 (pass), 77 (skip: the reason is
# its last line) or anything else (fail: the last line says why).
part() {
  local name=$1 fn=$2 start=$SECONDS rc
  echo "-- $name"
  "$fn" >"$work/$name.log" 2>&1
  rc=$?
  local last
  last=$(tail -n 1 "$work/$name.log")
  case $rc in
  0)
    sed 's/^/   /' "$work/$name.log"
    echo "-- $name: ok ($((SECONDS - start))s)"
    result pass "$name"
    ;;
  77)
    sed 's/^/   /' "$work/$name.log"
    echo "-- $name: SKIPPED: $last"
    result skip "$name" "$last"
    ;;
  *)
    sed 's/^/   /' "$work/$name.log" >&2
    echo "-- $name: FAILED ($((SECONDS - start))s): $last" >&2
    result fail "$name" "$last"
    status=1
    ;;
  esac
}

# The Debian packages: what is missing is installed, else named.
declare -A debian_have=(
  [podman]="command -v podman"
  [buildah]="command -v buildah"
  [runc]="command -v runc"
  [qemu-user-static]="command -v qemu-aarch64-static"
  [busybox-static]="test -x /bin/busybox && file -L /bin/busybox | grep -q 'statically linked'"
  [ca-certificates]="test -f /etc/ssl/certs/ca-certificates.crt"
  [systemd]="command -v systemd-analyze"
  [file]="command -v file"
)
debian_missing=()
debian() {
  local p missing=()
  for p in "${!debian_have[@]}"; do
    eval "${debian_have[$p]}" >/dev/null 2>&1 || missing+=("$p")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "Debian packages present: ${!debian_have[*]}"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    debian_missing=("${missing[@]}")
    echo "not installed (not root or no apt-get): ${missing[*]}; install with: apt-get install --no-install-recommends ${missing[*]}"
    [[ -n ${CI:-} ]] && return 1
    return 77
  fi
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get update -qq || ! apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    debian_missing=("${missing[@]}")
    echo "apt-get could not install: ${missing[*]}"
    return 1
  fi
}
part debian debian
need() { # need PACKAGE...: skip (or fail in CI) when one could not be installed
  local p
  for p in "$@"; do
    if printf '%s\n' "${debian_missing[@]}" | grep -qx "$p"; then
      echo "needs the Debian package $p, not installed"
      [[ -n ${CI:-} ]] && return 1
      return 77
    fi
  done
}

host_os=$(go env GOOS) host_arch=$(go env GOARCH)
other_arch=arm64 qemu=qemu-aarch64-static
if [[ $host_arch == arm64 ]]; then other_arch=amd64 qemu=qemu-x86_64-static; fi
bin="" version=""

goreleaser_part() {
  local gr
  gr=$(release_tool goreleaser) || { echo "cannot install goreleaser"; return 1; }
  "$gr" check || { echo "goreleaser check failed"; return 1; }
  local target
  for target in "linux/$other_arch" "$host_os/$host_arch"; do
    # The committed config with only dist: changed, one target each.
    { echo "dist: $work/dist-${target/\//-}"; cat .goreleaser.yaml; } >"$work/goreleaser.yaml"
    GOOS=${target%/*} GOARCH=${target#*/} "$gr" build --snapshot --single-target \
      --config "$work/goreleaser.yaml" || { echo "goreleaser build $target failed"; return 1; }
  done
  version=v$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$work/dist-$host_os-$host_arch/metadata.json")
  bin=$(ls "$work/dist-$host_os-$host_arch"/toolwire_*/toolwire)
  local other out
  other=$(ls "$work/dist-linux-$other_arch"/toolwire_*/toolwire)
  file "$other"
  file "$other" | grep -q 'statically linked' || { echo "linux/$other_arch binary not static"; return 1; }
  for b in "$bin" "$qemu $other"; do
    out=$($b version) || { echo "$b version failed: $out"; return 1; }
    echo "\$ ${b#"$work/"} version"
    echo "$out"
    [[ $(head -n 1 <<<"$out") == "toolwire $version" ]] || { echo "want 'toolwire $version'"; return 1; }
  done
  cp "$bin" "$work/toolwire"
  bin=$work/toolwire
}

helm_part() {
  local helm v
  helm=$(release_tool helm) || { echo "cannot install helm"; return 1; }
  local chart=deploy/helm/toolwire-gateway
  "$helm" lint --strict "$chart" || { echo "helm lint --strict failed (defaults)"; return 1; }
  for v in "$chart"/ci/*.yaml; do
    "$helm" lint --strict "$chart" -f "$v" >/dev/null || { echo "helm lint --strict -f $v failed"; return 1; }
    echo "helm lint --strict -f $v: ok"
    "$helm" template tw "$chart" -f "$v" >"$work/$(basename "$v" .yaml).rendered.yaml" ||
      { echo "helm template -f $v failed"; return 1; }
    echo "helm template -f $v: $(grep '^kind:' "$work/$(basename "$v" .yaml).rendered.yaml" | cut -d' ' -f2 | sort | paste -sd' ')"
  done
  (cd deploy && go vet ./... && go test -count=1 -v ./...) >"$work/deploy-test.log" 2>&1
  local rc=$?
  grep -E '^(--- |ok|FAIL)' "$work/deploy-test.log"
  [[ $rc -eq 0 ]] || { cat "$work/deploy-test.log"; echo "the deploy module's tests failed"; return 1; }
}

needbin() { [[ -n $bin ]] || { echo "no snapshot binary (the goreleaser part failed)"; return 1; }; }

# The gateway.yaml of a rendered ConfigMap, through --check (the URLs and
# key hashes the Secrets would give are stand-ins).
helm_config_part() {
  needbin || return 1
  local f cfg
  for f in "$work"/*.rendered.yaml; do
    cfg="$work/$(basename "$f" .rendered.yaml).gateway.yaml"
    sed -n '/^  gateway.yaml: |$/,/^---/p' "$f" | sed '1d;/^---/d;s/^    //' |
      sed 's#^data_dir: /data$#data_dir: '"$work/data-$(basename "$f")"'#' >"$cfg"
    check_config "$cfg" || return 1
  done
}
check_config() {
  local h=sha256:2130b7fa35085cf73cef349f2f903d23d661a89ffe627a547384c005af1417f9
  PATH="$work:$PATH" REDIS_URL=redis://redis.invalid:6379/0 DATABASE_URL=postgres://u:p@postgres.invalid/audit \
    TOOLWIRE_ADMIN_KEY_HASH=sha256:93be90c0069c4d320658ab9325a5e8aa69adff773ae67b8f835a376cca914104 \
    TOOLWIRE_API_KEY_CI_BOT=$h \
    "$bin" gateway --check --config "$1" >"$work/check.log" 2>&1
  local rc=$?
  echo "toolwire gateway --check --config ${1#"$work/"}: exit $rc, $(grep -c '__' "$work/check.log") tools; $(grep '^access:' "$work/check.log")"
  [[ $rc -eq 0 ]] || { cat "$work/check.log"; echo "toolwire gateway --check failed on $1"; return 1; }
}

systemd_part() {
  need systemd || return
  needbin || return 1
  local unit=$work/toolwire-gateway.service
  sed "s#/usr/local/bin/toolwire#$bin#" deploy/systemd/toolwire-gateway.service >"$unit"
  systemd-analyze verify "$unit" || { echo "systemd-analyze verify failed"; return 1; }
  echo "systemd-analyze verify deploy/systemd/toolwire-gateway.service: ok"
  systemd-analyze security --offline=true --threshold=20 "$unit" >"$work/security.log" 2>&1
  local rc=$?
  grep 'Overall exposure' "$work/security.log"
  [[ $rc -eq 0 ]] || { cat "$work/security.log"; echo "exposure above 2.0"; return 1; }
}

compose_part() {
  needbin || return 1
  local d=$work/compose
  mkdir -p "$d"
  # The compose file's own paths (data_dir /data) made local.
  sed "s#^data_dir: /data#data_dir: $d/data#" deploy/compose/gateway.yaml >"$d/gateway.yaml"
  check_config "$d/gateway.yaml"
}

# podman run as this machine allows: runc (crun refuses cgroup v1+v2
# hybrids), limits no higher than the process's own (raising them needs
# CAP_SYS_RESOURCE, which a sandbox may lack), no health check timer (that
# needs systemd; `podman healthcheck run` runs the check once), and no
# network but the container's own loopback.
podman_run() {
  podman run --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 --health-interval disable \
    --network none "$@"
}

image_part() {
  need podman buildah runc busybox-static ca-certificates || return
  needbin || return 1
  local ctx=$work/image
  mkdir -p "$ctx"
  sh deploy/image/rootfs.sh "$bin" /bin/busybox /etc/ssl/certs/ca-certificates.crt "$ctx/rootfs" ||
    { echo "deploy/image/rootfs.sh failed"; return 1; }
  # The Dockerfile's final stage, its files from the local rootfs.
  awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' Dockerfile |
    sed 's#^COPY --from=build \(--chown=[^ ]* \)\{0,1\}/rootfs\(-data\)\{0,1\}/#COPY \1rootfs\2/#' >"$ctx/Containerfile"
  grep -q '^FROM scratch' "$ctx/Containerfile" && ! grep -q -- '--from=' "$ctx/Containerfile" ||
    { cat "$ctx/Containerfile"; echo "the Dockerfile's final stage is not FROM scratch with files from /rootfs/"; return 1; }
  image=localhost/toolwire-test:${version//+/_}
  buildah bud --quiet --format docker --build-arg "VERSION=$version" -t "$image" -f "$ctx/Containerfile" "$ctx" ||
    { echo "buildah bud failed"; return 1; }
  local fmt='user={{.Config.User}} entrypoint={{json .Config.Entrypoint}} cmd={{json .Config.Cmd}} volumes={{json .Config.Volumes}} healthcheck={{json .Config.Healthcheck.Test}} version={{index .Config.Labels "org.opencontainers.image.version"}} size={{.Size}}'
  local info
  info=$(podman image inspect --format "$fmt" "$image") || { echo "podman image inspect failed"; return 1; }
  echo "image $image: $info"
  local want
  for want in 'user=65532:65532' 'entrypoint=["/usr/local/bin/toolwire"]' \
    'cmd=["gateway","--listen","0.0.0.0:8090","--admin-listen","0.0.0.0:8091"]' '"/data":{}' \
    'http://127.0.0.1:8091/readyz' "version=$version"; do
    [[ $info == *"$want"* ]] || { echo "the image lacks $want"; return 1; }
  done
  local size=${info##*size=}
  [[ $size -lt 80000000 ]] || { echo "image size $size bytes, want under 80 MB"; return 1; }

  # Run it: its version, then the default command.
  local out
  if ! out=$(podman_run --rm "$image" version 2>"$work/podman.err"); then
    out=$(cat "$work/podman.err")
    echo "$out"
    if grep -qiE 'operation not permitted|permission denied|not supported|cgroup' <<<"$out"; then
      echo "containers cannot run here: $(tail -n 1 <<<"$out")"
      return 77
    fi
    echo "podman run $image version failed"
    return 1
  fi
  echo "\$ podman run $image version"
  echo "$out"
  [[ $(head -n 1 <<<"$out") == "toolwire $version" ]] || { echo "want 'toolwire $version'"; return 1; }
  ctr=toolwire-test-$$
  podman_run -d --name "$ctr" "$image" >/dev/null || { echo "podman run -d $image failed"; return 1; }
  local ready="" i
  for i in $(seq 1 100); do
    ready=$(podman exec "$ctr" /bin/wget -q -O - http://127.0.0.1:8091/readyz 2>/dev/null) && break
    ready=""
    sleep 0.2
  done
  [[ $ready == *'"ready":true'* ]] || { podman logs "$ctr"; echo "/readyz never answered ready in the container"; return 1; }
  echo "/readyz in the container: $ready"
  podman healthcheck run "$ctr" || { echo "podman healthcheck run: unhealthy"; return 1; }
  echo "podman healthcheck run: healthy"
  out=$(podman exec "$ctr" toolwire tools http://127.0.0.1:8090/mcp 2>&1) ||
    { echo "$out"; echo "tools/list on the container's gateway failed"; return 1; }
  echo "tools/list on the default command: $(grep -cE '^(reference|serve)__' <<<"$out") tools, e.g. $(grep -oE '^reference__echo|^serve__get-sum' <<<"$out" | paste -sd' ')"
  grep -q '^reference__echo' <<<"$out" && grep -q '^serve__get-sum' <<<"$out" ||
    { echo "$out"; echo "want reference__echo and serve__get-sum in the tool list"; return 1; }
  local user
  user=$(podman top "$ctr" user 2>/dev/null | tail -n +2 | sort -u | paste -sd' ')
  echo "process user in the container: ${user:-?}"
}

part goreleaser goreleaser_part
part helm helm_part
part helm-config helm_config_part
part systemd systemd_part
part compose compose_part
part image image_part
exit $status
