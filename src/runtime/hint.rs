//! Prefetch hints for lines another CPU holds.
//!
//! A root that writes a posted broadcast's lines writes lines its readers read in an earlier
//! call: each store waits for its line to be taken from the reader's cache, and the stores
//! leave the store buffer in order, so those transfers overlapped little (a loop of 1 KiB
//! posts, 17 lines, took about 20 ns a line). [`for_write`] asks for every line at once first
//! (PREFETCHW), so the transfers overlap. It is a hint: it loads nothing a program sees,
//! orders nothing, and a line taken away again before its store only costs the transfer once
//! more.
//!
//! Measured on the development VM (2 ranks with CPUs of their own, herald in process against
//! MPICH, `herald-mpi bench --herald inproc`, builds alternating; docs/runtime.md,
//! "Sixty-eighth session: a posting root asks for its lines at once"): a back-to-back loop of
//! 1 KiB posted broadcasts took 0.16 µs with the hint against 0.35–0.38 without. The small
//! allreduce's deposit, the same pattern among ranks that all write at once, measured 10–20 %
//! slower with it, and does without.
//!
//! A single copy's reader asks for its destination's lines the same way where the other CPU
//! read them last (a held copy) and the chunk is at most 4 KiB (`direct.rs`, `HINTED_UPTO`):
//! 2–4 KiB broadcasts with alternating roots 6–25 % faster (docs/runtime.md, "Sixty-ninth
//! session: a held copy asks for its lines at once").

/// Whether this CPU has PREFETCHW (CPUID leaf `0x8000_0001`, ECX bit 8), asked once.
#[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
fn has_prefetchw() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // CPUID is available on every x86-64 CPU; leaf 0x8000_0000 gives the highest extended
    // leaf.
    *HAS.get_or_init(|| {
        core::arch::x86_64::__cpuid(0x8000_0000).eax >= 0x8000_0001
            && core::arch::x86_64::__cpuid(0x8000_0001).ecx & (1 << 8) != 0
    })
}

/// An address in each 64-byte line `items` spans, the first line's start first.
#[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
fn lines_of<T>(items: &[T]) -> impl Iterator<Item = *const u8> {
    let start = items.as_ptr().cast::<u8>();
    let len = std::mem::size_of_val(items);
    // Offsets from the start of the first byte's line; none for an empty slice.
    let skew = if len == 0 { 0 } else { start as usize & 63 };
    (0..len + skew)
        .step_by(64)
        .map(move |offset| start.wrapping_sub(skew).wrapping_add(offset))
}

/// Asks the CPU to fetch the lines `items` spans for writing (PREFETCHW), where it has the
/// instruction; nothing elsewhere.
#[inline]
pub(crate) fn for_write<T>(items: &[T]) {
    #[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
    if has_prefetchw() {
        for line in lines_of(items) {
            // SAFETY: PREFETCHW (this CPU has it, checked above) is a hint: it faults on no
            // address, writes nothing, and no load or store a program makes sees it; the
            // address lies in a line `items` spans besides.
            unsafe {
                std::arch::asm!(
                    "prefetchw [{line}]",
                    line = in(reg) line,
                    options(nostack, preserves_flags, readonly),
                );
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(herald_loom), not(miri))))]
    let _ = items;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instruction runs (it would fault or corrupt here if encoded wrongly) and changes no
    /// byte: a slice hinted reads as written, at lengths around a line's edges.
    #[test]
    fn hints_leave_every_byte_as_it_was() {
        for len in [0usize, 1, 63, 64, 65, 1000, 4096] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let before = bytes.clone();
            for_write(&bytes);
            assert_eq!(bytes, before);
        }
    }

    /// One address per line spanned, each a line's start: a slice's lines counted from
    /// its first and last bytes' lines, at every offset from a line's start.
    #[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
    #[test]
    fn a_slice_spans_the_lines_of_its_first_to_its_last_byte() {
        #[repr(C, align(64))]
        struct Lines([u8; 512]);
        let lines = Lines([0; 512]);
        let base = lines.0.as_ptr() as usize;
        for skip in [0usize, 1, 8, 63, 64, 100] {
            for len in [0usize, 1, 63, 64, 65, 128, 200] {
                let items = &lines.0[skip..skip + len];
                let got: Vec<usize> = lines_of(items).map(|p| p as usize - base).collect();
                let want: Vec<usize> = if len == 0 {
                    Vec::new()
                } else {
                    (skip / 64..=(skip + len - 1) / 64)
                        .map(|l| l * 64)
                        .collect()
                };
                assert_eq!(got, want, "{len} bytes from {skip}");
            }
        }
    }
}
