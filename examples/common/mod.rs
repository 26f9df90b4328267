//! Helpers shared by the examples (a folder without `main.rs`, so not an example itself).

/// The command line's first `N` arguments as numbers: the `i`-th, or `defaults[i]` where it is
/// missing.
///
/// # Errors
/// Any argument that is not a number.
pub(crate) fn numbers<const N: usize>(
    defaults: [u32; N],
) -> Result<[u32; N], std::num::ParseIntError> {
    let mut v = defaults;
    for (i, a) in std::env::args().skip(1).enumerate() {
        let x = a.parse()?; // every argument is a number, also those past the N used
        if let Some(slot) = v.get_mut(i) {
            *slot = x;
        }
    }
    Ok(v)
}
