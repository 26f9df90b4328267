//! A parallel iterative computation with herald's collectives, checked against a sequential
//! run: Jacobi sweeps on the 1-D Poisson problem `-u'' = π² sin(πx)` on `(0, 1)`, `u(0) = u(1)
//! = 0` (exact solution `sin(πx)`), on `N` interior points split into contiguous blocks, one
//! per rank of a 4-rank team.
//!
//! ```text
//! cargo run --release --example allreduce
//! ```
//!
//! Each sweep, every rank
//!
//! 1. learns the values just beyond its block's two ends from an `allgather` of every block's
//!    first and last value (the collective layer has no point-to-point call, and for a handful
//!    of ranks gathering `2 × ranks` numbers is as cheap as asking two neighbours);
//! 2. updates its block, `u_j ← (u_{j-1} + u_{j+1} + h² f_j) / 2`, and measures its largest
//!    change;
//! 3. takes the largest change of all ranks with `allreduce(change, f64::max)`; all ranks stop
//!    together when it falls below `1e-10`.
//!
//! At the end, `allreduce(…, f64::max)` also gives the largest error against `sin(πx)` (the
//! discretisation error, `O(h²)`).
//!
//! The sequential run is the same solver on one block holding every point, with the
//! communication replaced by nothing. The two must agree **bit for bit**, not within a
//! tolerance: every update is the same floating-point expression of the same operands, and the
//! only reduction is a maximum, which is exact in any grouping (an `allreduce` of sums would
//! combine in rank order but group the partial sums as a tree, and could differ from a
//! left-to-right sequential sum in the last bits). The example prints both runs and exits with
//! an error if the solutions, sweep counts, last changes or errors differ.

use herald::{runtime::CollectiveError, Comm, CommRank, Team};
use std::error::Error;
use std::f64::consts::PI;
use std::ops::Range;

/// Stop when no point changes by this much in a sweep.
const TOL: f64 = 1e-10;
/// Stop after this many sweeps in any case.
const MAX_SWEEPS: u32 = 1_000_000;

/// What a solve ends with: the same on every rank except `u`, the rank's block.
#[derive(Debug, Clone)]
struct Solution {
    /// The values at this block's points.
    u: Vec<f64>,
    /// Sweeps done.
    sweeps: u32,
    /// The largest change of any point in the last sweep.
    change: f64,
    /// The largest error against the exact solution `sin(πx)`.
    error: f64,
}

impl Solution {
    /// Whether `self` and `other` agree bit for bit.
    fn same_bits(&self, other: &Solution) -> bool {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        bits(&self.u) == bits(&other.u)
            && self.sweeps == other.sweeps
            && self.change.to_bits() == other.change.to_bits()
            && self.error.to_bits() == other.error.to_bits()
    }
}

/// How a block talks to the others: the sequential run is one block with nobody to talk to.
trait Neighbours {
    /// The values just beyond the block's ends, given the block's first and last values.
    fn halo(&mut self, first: f64, last: f64) -> Result<(f64, f64), CollectiveError>;
    /// The largest `x` over all blocks.
    fn max(&mut self, x: f64) -> Result<f64, CollectiveError>;
}

/// The sequential run: the block is the whole domain, bounded by `u(0) = u(1) = 0`.
struct Alone;

impl Neighbours for Alone {
    fn halo(&mut self, _: f64, _: f64) -> Result<(f64, f64), CollectiveError> {
        Ok((0.0, 0.0))
    }

    fn max(&mut self, x: f64) -> Result<f64, CollectiveError> {
        Ok(x)
    }
}

impl Neighbours for CommRank<'_> {
    fn halo(&mut self, first: f64, last: f64) -> Result<(f64, f64), CollectiveError> {
        let ends = self.allgather([first, last])?;
        let r = self.rank();
        let left = if r == 0 { 0.0 } else { ends[r - 1][1] };
        let right = ends.get(r + 1).map_or(0.0, |e| e[0]);
        Ok((left, right))
    }

    fn max(&mut self, x: f64) -> Result<f64, CollectiveError> {
        self.allreduce(x, f64::max)
    }
}

/// The interior points of rank `r` of `ranks` (contiguous blocks, the first `points % ranks`
/// one point longer).
fn block(points: usize, ranks: usize, r: usize) -> Range<usize> {
    let (base, extra) = (points / ranks, points % ranks);
    let start = r * base + r.min(extra);
    start..start + base + usize::from(r < extra)
}

/// The coordinate of interior point `j` (0-based) of `points`.
fn x(points: usize, j: usize) -> f64 {
    (j + 1) as f64 / (points + 1) as f64
}

/// One Jacobi sweep of a block: `new[k] = (old[k-1] + old[k+1] + rhs[k]) / 2`, with `left` and
/// `right` standing beyond its ends. Returns the largest change.
fn sweep(old: &[f64], (left, right): (f64, f64), rhs: &[f64], new: &mut [f64]) -> f64 {
    let n = old.len();
    let mut change = 0.0f64;
    for k in 0..n {
        let l = if k == 0 { left } else { old[k - 1] };
        let r = if k + 1 == n { right } else { old[k + 1] };
        new[k] = 0.5 * (l + r + rhs[k]);
        change = change.max((new[k] - old[k]).abs());
    }
    change
}

/// Jacobi on the points `range` of `points`, from `u = 0`, until the largest change over all
/// blocks is below [`TOL`].
fn jacobi(
    points: usize,
    range: Range<usize>,
    net: &mut impl Neighbours,
) -> Result<Solution, CollectiveError> {
    let h = 1.0 / (points + 1) as f64;
    let rhs: Vec<f64> = range
        .clone()
        .map(|j| h * h * PI * PI * (PI * x(points, j)).sin())
        .collect();
    let (mut u, mut next) = (vec![0.0; range.len()], vec![0.0; range.len()]);
    let mut sweeps = 0;
    let change = loop {
        let ends = net.halo(u[0], u[u.len() - 1])?;
        let change = net.max(sweep(&u, ends, &rhs, &mut next))?;
        std::mem::swap(&mut u, &mut next);
        sweeps += 1;
        if change < TOL || sweeps == MAX_SWEEPS {
            break change;
        }
    };
    let local_error = u
        .iter()
        .zip(range)
        .map(|(v, j)| (v - (PI * x(points, j)).sin()).abs())
        .fold(0.0, f64::max);
    let error = net.max(local_error)?;
    Ok(Solution {
        u,
        sweeps,
        change,
        error,
    })
}

/// The sequential run.
fn sequential(points: usize) -> Result<Solution, CollectiveError> {
    jacobi(points, 0..points, &mut Alone)
}

/// The parallel run on `ranks` ranks; the blocks are joined in rank order.
fn parallel(ranks: usize, points: usize) -> Result<Solution, Box<dyn Error>> {
    if points < ranks {
        return Err(format!("{points} points cannot fill {ranks} blocks").into());
    }
    let mut team = Team::new(ranks)?;
    let mut comm = Comm::new(ranks)?;
    let mut endpoints = comm.ranks();
    let parts = team.run_with(&mut endpoints, |_, rank| {
        jacobi(points, block(points, rank.size(), rank.rank()), rank)
    });
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut whole = parts[0].clone();
    whole.u = parts.iter().flat_map(|p| p.u.iter().copied()).collect();
    Ok(whole)
}

/// Runs both and compares them bit for bit; prints both unless `quiet`.
fn run(ranks: usize, points: usize, quiet: bool) -> Result<(), Box<dyn Error>> {
    let par = parallel(ranks, points)?;
    let seq = sequential(points)?;
    if !quiet {
        println!("Jacobi on -u'' = pi^2 sin(pi x), {points} interior points");
        for (name, s) in [
            (format!("{ranks} ranks"), &par),
            ("sequential".into(), &seq),
        ] {
            println!(
                "{name:>10}: {} sweeps, last change {:.3e}, max error vs sin(pi x) {:.3e}, u(1/2) ~ {:.9}",
                s.sweeps,
                s.change,
                s.error,
                s.u[points / 2]
            );
        }
    }
    if !par.same_bits(&seq) {
        return Err("the parallel and sequential runs differ".into());
    }
    if !quiet {
        println!("the parallel and sequential runs agree bit for bit");
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    run(4, 31, false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parallel_equals_sequential() {
        super::run(4, 31, true).unwrap();
    }

    #[test]
    fn uneven_blocks() {
        super::run(3, 20, true).unwrap();
    }
}
