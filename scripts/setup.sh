#!/usr/bin/env bash
# Installs what herald needs beyond Rust on a Debian machine: the hwloc 2.x library and pkg-config.
set -euo pipefail
need=()
dpkg -s libhwloc-dev >/dev/null 2>&1 || need+=(libhwloc-dev)
dpkg -s pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
