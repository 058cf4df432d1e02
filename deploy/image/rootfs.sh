#!/usr/bin/env bash
# rootfs.sh BINARY DIR: lays out the collector image's root filesystem in DIR:
# the binary at /otelcol-containerstats, the shared libraries it links
# (ldd: glibc's libc.so.6 and the dynamic loader; go-nvml dlopen()s
# libnvidia-ml.so.1, which the NVIDIA container toolkit mounts in from the
# host on GPU nodes), deploy/config.yaml as the default /etc/otelcol/config.yaml,
# an empty /tmp, and nothing else (no shell, no package manager).
set -euo pipefail
bin=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir"
mkdir -p "$dir/etc/otelcol" "$dir/tmp"
chmod 1777 "$dir/tmp"
install -m 0755 "$bin" "$dir/otelcol-containerstats"
install -m 0644 "$here/../config.yaml" "$dir/etc/otelcol/config.yaml"
# Each library ldd resolves (a path after "=>", or the loader's own path),
# copied to the same path with symlinks resolved.
ldd "$bin" | awk '/=> \//{print $3} /^[[:space:]]*\/[^ ]+ \(/{print $1}' | sort -u | while read -r lib; do
  mkdir -p "$dir$(dirname "$lib")"
  cp -L "$lib" "$dir$lib"
done
# The loader is found through /lib64 -> usr/lib64 style paths on Debian;
# ldd prints the path the binary names (/lib64/ld-linux-x86-64.so.2), so
# the copy above is enough. nsswitch-free: the collector resolves no users.
