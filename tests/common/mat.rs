//! 2×2 matrices of wrapping u64s: an associative, non-commutative operation for checking that
//! combining collectives fold in rank order.

/// A 2×2 matrix of wrapping u64s, row major: its product is associative, not commutative.
pub(crate) type Mat = [u64; 4];

/// The wrapping matrix product `a · b`.
pub(crate) fn mul(a: Mat, b: Mat) -> Mat {
    let m = |x: u64, y: u64| x.wrapping_mul(y);
    [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ]
}
