//! Hierarchical execution (in progress).
