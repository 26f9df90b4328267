//! Timing one case: barrier then one broadcast, repeated; interleaved slices over all cases.

use super::cases::{Case, Measured};
use crate::CliError;
use herald::model::Transport;
use herald::runtime::CollectiveError;
use herald::{Comm, CommOptions, CommRank, Hierarchy, Team};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Repetitions per measurement: at least this many…
const MIN_REPS: u64 = 3;
/// …and at most this many.
const MAX_REPS: u64 = 2_000;
/// Round trips of the raw hop that names a measurement's latency mode.
const HOP_ROUND_TRIPS: u64 = 300;
/// Untimed round trips just before them, which wake the hop's two workers.
const HOP_WARM_ROUND_TRIPS: u64 = 20;
/// A pause after the raw hop, so that its two workers park before the measurement starts:
/// idle workers yield for at least 100 µs (`runtime::wait`), sharing the measured ranks' CPUs.
const HOP_SETTLE: Duration = Duration::from_micros(300);
/// A pause when the measured team changes: the previous team's workers yield at least 64 times
/// before they park, and with many workers per CPU each yield is a turn of the others (16 ranks
/// on 2 CPUs: about 0.7 ms). Measured without it, a 4-rank broadcast right after a 16-rank one
/// took 11–17 µs instead of 3.2 µs.
const TEAM_SETTLE: Duration = Duration::from_millis(5);

/// The OS CPU of each of `n` ranks: round-robin over the machine's PUs in compact order (the
/// ranks of `n ≤ PUs` have a PU each, in the order the planner's model places them).
fn cpus_for(h: &Hierarchy, n: u32) -> Vec<usize> {
    let pus = h.os_indices();
    (0..n as usize).map(|r| pus[r % pus.len()]).collect()
}

/// The communicator options of `transport` (a posted case calls `CommRank::broadcast`, which
/// posts every size up to a slot's on this communicator, whether or not ranks share CPUs; the
/// others call `broadcast_with`, which never posts).
fn options(transport: Transport) -> CommOptions {
    let direct_min_bytes = match transport {
        Transport::Stream | Transport::Posted => usize::MAX,
        Transport::Direct => 1,
    };
    CommOptions {
        direct_min_bytes,
        posted_broadcast: transport == Transport::Posted,
        shared_posted_bytes: Some(0..=herald::runtime::SHARED_POSTED_LIMIT),
        ..CommOptions::default()
    }
}

/// A payload for measurement `seed`.
fn pattern(bytes: usize, seed: u64) -> Vec<u8> {
    (0..bytes)
        .map(|i| (i as u64).wrapping_mul(31).wrapping_add(seed * 7 + 3) as u8)
        .collect()
}

/// Rewrites every byte of `buf` for repetition `i` of measurement `seed`.
fn fresh(buf: &mut [u8], seed: u64, i: u64) {
    let salt = (seed * 7 + i * 13 + 3) as u8;
    for (j, b) in buf.iter_mut().enumerate() {
        *b = (j as u8).wrapping_mul(31) ^ salt;
    }
}

/// The stamp of repetition `i` of measurement `seed`: the first (up to) 8 bytes.
fn stamp(buf: &mut [u8], seed: u64, i: u64) {
    let w = buf.len().min(8);
    buf[..w].copy_from_slice(&((seed << 24) ^ i ^ 0xA5A5_0000).to_le_bytes()[..w]);
}

/// Whether `buf` carries repetition `i`'s stamp.
fn stamped(buf: &[u8], seed: u64, i: u64) -> bool {
    let w = buf.len().min(8);
    buf[..w] == ((seed << 24) ^ i ^ 0xA5A5_0000).to_le_bytes()[..w]
}

/// The clock as the measurement reads it: one read's cost, taken off every timed interval, and
/// its step, over which each measurement's median is spread
/// ([`herald::stats::smoothed_median`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// One read, ns ([`herald::calibrate::clock_overhead`]).
    pub(crate) overhead_ns: f64,
    /// The step between its reads' values, ns ([`herald::calibrate::clock_resolution`]).
    pub(crate) step_ns: f64,
}

/// One rank's record of a measurement: the root's start instants, its own return instants,
/// and whether every byte arrived.
type RankRecord = (Vec<Instant>, Vec<Instant>, bool);

/// Times `k` barrier-then-one broadcasts of case `c` (its program; posted:
/// `CommRank::broadcast` from the program's root) on `ranks`: the
/// per-repetition ns (root's start to the latest return, less `clock`, one clock read) and the
/// ns per repetition including the barriers. `Err` if a byte arrived wrong or a call failed.
fn measure(
    team: &mut Team,
    ranks: &mut [CommRank<'_>],
    c: &Case,
    k: u64,
    seed: u64,
    clock: f64,
) -> Result<(Vec<f64>, f64), CliError> {
    let (program, bytes) = (&c.program, c.bytes);
    let posted = c.transport == Transport::Posted || c.timed;
    let root = program.root() as usize;
    let out = team.run_with(ranks, |_, c| -> Result<RankRecord, CollectiveError> {
        let me = c.rank();
        let call = |c: &mut CommRank<'_>, buf: &mut [u8]| {
            if posted {
                c.broadcast(root, buf)
            } else {
                c.broadcast_with(program, buf)
            }
        };
        let mut buf = if me == root {
            pattern(bytes, seed)
        } else {
            vec![0; bytes]
        };
        // Untimed: warms the rings, the caches and the barrier.
        c.barrier()?;
        call(c, &mut buf)?;
        let (mut starts, mut ends) = (Vec::new(), Vec::with_capacity(k as usize));
        let mut ok = true;
        for i in 0..k {
            if me == root {
                // Fresh data every repetition, written on the root's core (untimed): what a
                // broadcast of newly produced data moves. Rewriting only a stamp would leave
                // the rest of the payload cached on every reader after the first repetition,
                // and a single-copy read would then copy from its own cache.
                fresh(&mut buf, seed, i);
                stamp(&mut buf, seed, i);
            }
            c.barrier()?;
            // A second barrier: the first wakes the ranks that parked while the root wrote
            // the data, so every rank is running when the timed call starts (the model's
            // condition; a wake-up is not part of a broadcast's cost, docs/fidelity.md).
            c.barrier()?;
            if me == root {
                starts.push(Instant::now());
            }
            call(c, &mut buf)?;
            ends.push(Instant::now());
            ok &= stamped(&buf, seed, i);
        }
        // Every rank is done with the last timed call before any checks its bytes: a rank
        // that returned early would otherwise build and compare its expected payload (a few
        // hundred µs at 256 KiB) on a CPU whose other ranks are still in that call. Without
        // this the last repetition of 8 ranks on 2 CPUs at 256 KiB took 200–310 µs against
        // 35–40 (docs/fidelity.md, run AG).
        c.barrier()?;
        let mut want = pattern(bytes, seed);
        fresh(&mut want, seed, k - 1);
        stamp(&mut want, seed, k - 1);
        Ok((starts, ends, ok && buf == want))
    });
    let mut records = Vec::with_capacity(out.len());
    for (rank, r) in out.into_iter().enumerate() {
        let r = r.map_err(|e| CliError::Failed(format!("rank {rank}: {e}")))?;
        if !r.2 {
            return Err(CliError::Failed(format!(
                "{bytes} bytes on {} ranks: rank {rank} holds wrong bytes",
                program.n()
            )));
        }
        records.push(r);
    }
    let starts = &records[root].0;
    let times: Vec<f64> = (0..k as usize)
        .map(|i| {
            let last = records.iter().map(|r| r.1[i]).max().expect("ranks");
            (last.saturating_duration_since(starts[i]).as_nanos() as f64 - clock).max(0.0)
        })
        .collect();
    let last = records.iter().map(|r| r.1[k as usize - 1]).max();
    let span = last.map_or(0.0, |l| {
        l.saturating_duration_since(starts[0]).as_nanos() as f64
    });
    Ok((times, span / k as f64))
}

/// The seed of the slices' orders (fixed: a run's order is the same every time).
const ORDER_SEED: u64 = 0x6865_7261_6c64;

/// The order of slice `s` over cases whose rank counts are `ns`: the rank counts' groups in
/// turn, starting with group `s` (one team after another: a team change costs a pause), and
/// each group's cases in a random order drawn from `rng`.
///
/// Not a rotation of one order: that kept every case behind the same neighbour in every slice,
/// the first case of each group (mostly the planner's pick) behind another group's last, and a
/// neighbour changes what a measurement finds (caches, the team's threads' waits). With 16
/// ranks on 2 CPUs the 256 KiB one-block star, which always came right after the 32 KiB line
/// stream, measured 79–112 µs in nine runs (median 88) against 79–84 (80) for two blocks;
/// shuffled, 80–92 (83) against 82–94 (88) in eight (docs/fidelity.md, "Forty-eighth
/// session").
fn slice_order(ns: &[u32], s: usize, rng: &mut StdRng) -> Vec<usize> {
    let mut groups: Vec<u32> = Vec::new();
    for &n in ns {
        if !groups.contains(&n) {
            groups.push(n);
        }
    }
    let turn = |n: u32| {
        let g = groups.iter().position(|&m| m == n).expect("group");
        (g + groups.len() - s % groups.len()) % groups.len()
    };
    let mut order: Vec<usize> = (0..ns.len()).collect();
    order.shuffle(rng);
    // Stable: each group keeps its shuffled order.
    order.sort_by_key(|&j| turn(ns[j]));
    order
}

/// Measures every case `slices` times, interleaved: each slice runs every case once, the
/// rank counts in turn and each one's cases in a random order ([`slice_order`]), each
/// measurement preceded by a raw hop on the first two PUs and repeating its case about
/// `target_ns` worth (barriers included; at least [`MIN_REPS`], at most [`MAX_REPS`] times).
///
/// # Errors
/// A usage error if a team cannot start; `Failed` if a byte arrives wrong or a call fails.
pub(crate) fn run_slices(
    h: &Hierarchy,
    planned: &CommOptions,
    all: &mut [Case],
    slices: usize,
    target_ns: f64,
    clock: Clock,
) -> Result<(), CliError> {
    let pus = h.os_indices();
    let mut hop_team = Team::with_cores(vec![pus[0], pus[1]]).map_err(CliError::usage)?;
    let mut teams: BTreeMap<u32, Team> = BTreeMap::new();
    // (ranks, transport, timed): a run-time choice has a planned communicator of its own.
    let key = |c: &Case| (c.n, if c.timed { None } else { Some(c.transport) });
    let mut keys: Vec<(u32, Option<Transport>)> = Vec::new();
    for c in all.iter() {
        if let std::collections::btree_map::Entry::Vacant(e) = teams.entry(c.n) {
            e.insert(Team::with_cores(cpus_for(h, c.n)).map_err(CliError::usage)?);
        }
        if !keys.contains(&key(c)) {
            keys.push(key(c));
        }
    }
    let mut comms: Vec<Comm> = keys
        .iter()
        .map(|&(n, t)| {
            let o = t.map_or_else(|| planned.clone(), options);
            Comm::with_options(n as usize, o).map_err(CliError::usage)
        })
        .collect::<Result<_, _>>()?;
    // Endpoints live for the whole run, as an application's would: warm rings.
    let mut ends: Vec<Vec<CommRank<'_>>> = comms.iter_mut().map(Comm::ranks).collect();
    let slot = |c: &Case| keys.iter().position(|&k| k == key(c)).expect("key");
    let mut seed = 0u64;
    // A first pass checks every case and sizes its repetitions to about `target_ns`.
    let mut reps = Vec::with_capacity(all.len());
    for c in all.iter() {
        seed += 1;
        let team = teams.get_mut(&c.n).expect("team");
        let (_, per) = measure(team, &mut ends[slot(c)], c, 3, seed, clock.overhead_ns)?;
        reps.push(((target_ns / per.max(1.0)) as u64).clamp(MIN_REPS, MAX_REPS));
    }
    let mut last_team = None;
    let mut rng = StdRng::seed_from_u64(ORDER_SEED);
    let ns: Vec<u32> = all.iter().map(|c| c.n).collect();
    for s in 0..slices {
        for j in slice_order(&ns, s, &mut rng) {
            seed += 1;
            let c = &all[j];
            // Idle workers wait for their next job spinning, then yielding, then parked; a
            // team's yielding workers would take the CPUs from the next measurement.
            if last_team.replace(c.n) != Some(c.n) {
                std::thread::sleep(TEAM_SETTLE);
            }
            // Untimed round trips first, in the same run: the hop's workers were parked, and
            // a wake-up inside the timed ones put the fast mode's hop at 92 ns where the
            // calibration's, timed after its own warm-up, is 52 (docs/fidelity.md,
            // "Forty-second session").
            let raw =
                crate::bench::raw_hop_after(&mut hop_team, HOP_WARM_ROUND_TRIPS, HOP_ROUND_TRIPS);
            std::thread::sleep(HOP_SETTLE);
            let team = teams.get_mut(&c.n).expect("team");
            let (times, _) = measure(
                team,
                &mut ends[slot(c)],
                c,
                reps[j],
                seed,
                clock.overhead_ns,
            )?;
            // Spread over the clock's step, as the calibration's runtime probe summarizes its
            // own: the nearest-rank median of single short intervals jumps a step at a time.
            let median = herald::stats::smoothed_median(&times, clock.step_ns);
            // (NaN without repetitions, like the median; a measurement has at least MIN_REPS)
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            all[j].measured.push(Measured { raw, median, mean });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every slice measures every case once, one rank count's cases together, the groups
    /// starting in turn; and a case does not keep one predecessor from slice to slice.
    #[test]
    fn each_slice_is_a_permutation_grouped_by_rank_count_with_changing_neighbours() {
        // Three rank counts, the cases of each not contiguous in the list.
        let ns = [2, 4, 2, 16, 4, 2, 16, 2, 4, 2];
        let mut rng = StdRng::seed_from_u64(ORDER_SEED);
        let mut before_first = std::collections::BTreeSet::new();
        for s in 0..20 {
            let order = slice_order(&ns, s, &mut rng);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..ns.len()).collect::<Vec<_>>(), "slice {s}");
            let runs: Vec<u32> = order.iter().map(|&j| ns[j]).collect();
            let mut groups = runs.clone();
            groups.dedup();
            assert_eq!(groups.len(), 3, "slice {s}: {runs:?}");
            assert_eq!(groups[0], [2, 4, 16][s % 3], "slice {s}: {runs:?}");
            // The case that precedes case 0 (of rank count 2), where one does in its group.
            let at = order.iter().position(|&j| j == 0).expect("case 0");
            if at > 0 && ns[order[at - 1]] == 2 {
                before_first.insert(order[at - 1]);
            }
        }
        // Case 0 has four other cases in its group: over 20 slices it followed several.
        assert!(before_first.len() >= 3, "{before_first:?}");
    }
}
