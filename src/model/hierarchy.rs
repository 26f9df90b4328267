//! The machine hierarchy as plain data (filled from hwloc by `topology`).
