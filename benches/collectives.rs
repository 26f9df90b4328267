//! Criterion: herald's collectives against peers (filled in below).
fn main() {}
