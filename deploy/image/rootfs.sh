#!/bin/sh
# Lays out the container image's whole filesystem in OUT from a static
# toolwire binary: the Dockerfile's build stage runs it, and so does the
# registry-free build in scripts/test.d/60-release.sh, so both images hold
# the same files.
#   usage: rootfs.sh TOOLWIRE_BINARY BUSYBOX_STATIC CA_BUNDLE OUT
# Files: /usr/local/bin/toolwire; /bin/wget (a static busybox, called by its
# applet name: the only tool in the image, for the health check on /readyz);
# /etc/ssl/certs/ca-certificates.crt (for https upstreams and OAuth);
# /etc/passwd and /etc/group naming the unprivileged user 65532 (toolwire);
# /tmp (1777). The state directory /data (a volume) is laid out apart, in
# OUT-data, for the Dockerfile to copy with --chown: a directory a COPY
# creates is owned by the --chown user, one that exists already is not.
set -eu
if [ $# -ne 4 ]; then
  echo "usage: $0 TOOLWIRE_BINARY BUSYBOX_STATIC CA_BUNDLE OUT" >&2
  exit 2
fi
bin=$1 busybox=$2 ca=$3 out=$4
mkdir -p "$out/usr/local/bin" "$out/bin" "$out/etc/ssl/certs" "$out/tmp" "$out-data"
install -m 0755 "$bin" "$out/usr/local/bin/toolwire"
install -m 0755 "$busybox" "$out/bin/wget"
install -m 0644 "$ca" "$out/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\ntoolwire:x:65532:65532:toolwire:/data:/sbin/nologin\n' >"$out/etc/passwd"
printf 'root:x:0:\ntoolwire:x:65532:\n' >"$out/etc/group"
chmod 0644 "$out/etc/passwd" "$out/etc/group"
chmod 0700 "$out-data"
chmod 1777 "$out/tmp"
