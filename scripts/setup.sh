#!/usr/bin/env bash
# Installs what herald needs beyond Rust on a Debian machine: the hwloc 2.x library, pkg-config,
# and libudev (hwlocality links hwloc statically, which pulls in -ludev); for herald-mpi, Open MPI
# (the default MPI), MPICH (the second one it is tested against) and libclang (rsmpi's bindgen).
# Open MPI and MPICH coexist: their launchers are called by name (mpirun.openmpi, mpirun.mpich),
# whatever update-alternatives makes the plain `mpirun`.
set -euo pipefail
need=()
for pkg in libhwloc-dev pkg-config libudev-dev \
  openmpi-bin libopenmpi-dev mpich libmpich-dev libclang-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
