#!/usr/bin/env bash
# Installs what herald needs beyond Rust on a Debian machine: the hwloc 2.x library, pkg-config,
# and libudev (hwlocality links hwloc statically, which pulls in -ludev).
set -euo pipefail
need=()
dpkg -s libhwloc-dev >/dev/null 2>&1 || need+=(libhwloc-dev)
dpkg -s pkg-config >/dev/null 2>&1 || need+=(pkg-config)
dpkg -s libudev-dev >/dev/null 2>&1 || need+=(libudev-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
