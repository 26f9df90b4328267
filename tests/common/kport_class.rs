//! The closed form of `docs/kport-reading.md` ("Which n stream"): the `(k, n)` at which the
//! rotation's row plan does **not** spread every block in `D = ⌈log_{k+1} n⌉` rounds. Derived by
//! hand from the plan's port count, never from the generator. Shared by
//! `tests/kport_row_class.rs` and `examples/kport_every_m.rs`.

/// `⌈log_b x⌉` and `b^⌈log_b x⌉`.
pub(crate) fn clog(b: u64, x: u64) -> (u64, u64) {
    let (mut l, mut p) = (0, 1u64);
    while p < x {
        p *= b;
        l += 1;
    }
    (l, p)
}

/// The proof's class: does the row plan spread every block in `D` rounds? (`2 ≤ k ≤ n − 1`.)
pub(crate) fn streams(k: u64, n: u64) -> bool {
    let (d, p) = clog(k + 1, n);
    if d < 2 || n + k < p + 2 {
        return true;
    }
    // n = P − k + 1 + c, i.e. H = c + 1 helpers, the row one short of the full nice size
    let c = n + k - 1 - p;
    if c > k - 2 {
        return true;
    }
    let a = k / c;
    k.div_ceil(a) <= c + 1
}
