//! `herald-mpi selftest`: the checks that need several ranks, run under `mpirun` (by
//! `tests/mpirun.rs` and `scripts/test.sh`; `cargo test` cannot start ranks).
//!
//! Every check's expectation is independent of the code under test: a broadcast must leave the
//! root's bytes (a per-iteration pseudo-random payload) on every rank; a reduce or allreduce
//! must leave the wrapping sum of every rank's contribution, computed by each rank from the
//! contributions' definition; a calibration must produce a measured level for each level where
//! two ranks meet, with finite, positive one-way times.
//!
//! `--die R` and `--stall R` make rank `R` exit abruptly, or stop answering, in the middle of a
//! broadcast: the checks of the error paths (every other rank must report it or be ended by the
//! launcher, never hang).

use crate::Failure;
use herald::{
    generate,
    model::{LevelCost, OnePort},
    Algorithm, LogP, Model, Postal, Ratio, Request,
};
use herald_mpi::allreduce::AllreduceChoice;
use herald_mpi::bench::{bench, BenchOptions, Collective as BenchColl, HeraldSide, Variant};
use herald_mpi::calibrate::{calibrate, share_profile, CalibrateOptions};
use herald_mpi::{
    contribution, hier, payload, sum_of_contributions, BroadcastPlan, Channel, Cluster,
    CombinePlan, CombineScratch, Error, HalvingAllreduce, Post, RingAllreduce, World,
};
use mpi::collective::CommunicatorCollectives;
use std::time::Duration;

/// Arguments of `herald-mpi selftest`.
#[derive(Debug, clap::Args)]
pub(crate) struct SelftestArgs {
    /// Rank that exits abruptly (no MPI_Finalize) in the middle of a broadcast.
    #[arg(long)]
    die: Option<usize>,
    /// Rank that stops answering (sleeps) in the middle of a broadcast.
    #[arg(long)]
    stall: Option<usize>,
    /// Skip the calibration and bench checks (faster).
    #[arg(long)]
    quick: bool,
    /// With --die or --stall: the collectives are posted in a shared window: broadcasts
    /// (`--posted`, `--posted bcast`: more of them than its slots, so the root waits for the
    /// victim) or allreduces (`--posted allreduce`: every rank waits for the victim's part).
    #[arg(long, value_name = "COLL", num_args = 0..=1, default_missing_value = "bcast")]
    posted: Option<String>,
    /// With --die or --stall: the rank dies or stops answering instead of joining a collective
    /// of the MPI library (`MPI_Barrier`), which the others are waiting in.
    #[arg(long, conflicts_with = "posted")]
    in_library: bool,
}

fn fail(what: String) -> Failure {
    Failure::Here(Error::Verify(what))
}

/// Broadcasts of every shape, every byte checked on every rank.
fn broadcasts(world: &World, chan: &Channel) -> Result<usize, Failure> {
    let n = world.size() as u32;
    let me = world.rank();
    let oneport = Model::from(OnePort);
    let postal = Model::from(Postal::new(Ratio::integer(3)).map_err(Error::herald)?);
    let shapes: Vec<(Algorithm, u32, &Model)> = vec![
        (Algorithm::Binomial, 1, &oneport),
        (Algorithm::Binary, 1, &oneport),
        (Algorithm::Chain, 1, &oneport),
        (Algorithm::Star, 1, &oneport),
        (Algorithm::Knomial { radix: 3 }, 1, &oneport),
        (Algorithm::Optimal, 4, &oneport),
        (Algorithm::Fibonacci { d: None }, 5, &oneport),
        (Algorithm::ScatterAllgather, 3, &oneport),
        (Algorithm::Optimal, 1, &postal),
        (Algorithm::Pipeline, 3, &postal),
        (Algorithm::Greedy, 4, &postal),
        (Algorithm::Dtree { d: 2 }, 6, &postal),
    ];
    let mut checked = 0;
    for (algo, m, model) in shapes {
        for root in [0, n - 1] {
            let s = match generate(&Request::broadcast(algo, n, m, root), model) {
                Ok(s) => s,
                Err(_) => continue, // not applicable to this n (e.g. fibonacci's parameters)
            };
            let plan = BroadcastPlan::new(&s)?;
            for bytes in [0usize, 1, 7, 100, 4097, 100_003] {
                let mut buf = vec![0u8; bytes];
                for it in 0..3u64 {
                    let seed = it * 7919 + bytes as u64 + u64::from(root);
                    if me == root as usize {
                        payload(&mut buf, seed);
                    } else {
                        buf.fill(0);
                    }
                    plan.run(chan, &mut buf)?;
                    let mut want = vec![0u8; bytes];
                    payload(&mut want, seed);
                    if let Some(at) = buf.iter().zip(&want).position(|(x, y)| x != y) {
                        return Err(fail(format!(
                            "{algo} m={m} root {root}, {bytes} bytes: rank {me} differs at byte {at}"
                        )));
                    }
                    checked += 1;
                }
            }
        }
    }
    Ok(checked)
}

/// Reduce and allreduce schedules under two models: the sums checked where they must be.
fn combining(world: &World, chan: &Channel) -> Result<usize, Failure> {
    let n = world.size() as u32;
    let me = world.rank();
    let r = Ratio::integer;
    let logp = Model::from(LogP::new(r(6), r(2), r(4), r(0)).map_err(Error::herald)?);
    let postal =
        Model::from(Postal::new("5/2".parse().map_err(Error::herald)?).map_err(Error::herald)?);
    let mut checked = 0;
    let mut scratch = CombineScratch::default();
    for model in [&logp, &postal] {
        for (algo, root) in [
            (Algorithm::Reduce, 0),
            (Algorithm::Reduce, n - 1),
            (Algorithm::Allreduce, 0),
        ] {
            let s =
                generate(&Request::broadcast(algo, n, 1, root), model).map_err(Error::herald)?;
            let plan = CombinePlan::new(&s, model)?;
            for len in [1usize, 100, 10_001] {
                let seed = len as u64 + u64::from(root) * 31;
                let mut value = vec![0u64; len];
                contribution(&mut value, me, seed);
                plan.run(chan, &mut scratch, &mut value)?;
                if plan.has_result(me) && value != sum_of_contributions(n as usize, len, seed) {
                    return Err(fail(format!(
                        "{} {algo} root {root}, {len} elements: rank {me} has a wrong sum",
                        model.as_dyn().name()
                    )));
                }
                checked += 1;
            }
        }
    }
    // The ring allreduce, for values shorter than the ring (empty chunks) and longer.
    let ring = RingAllreduce::new(n as usize)?;
    for len in [1usize, 3, 100, 10_001] {
        let seed = len as u64 + 7;
        let mut value = vec![0u64; len];
        contribution(&mut value, me, seed);
        ring.run(chan, &mut scratch, &mut value)?;
        if value != sum_of_contributions(n as usize, len, seed) {
            return Err(fail(format!(
                "ring allreduce, {len} elements: rank {me} has a wrong sum"
            )));
        }
        checked += 1;
    }
    // Recursive halving: every rank count the job has (a power of two or not), for values
    // shorter than the participants and longer.
    let halving = HalvingAllreduce::new(n as usize)?;
    for len in [1usize, 3, 100, 10_001] {
        let seed = len as u64 + 11;
        let mut value = vec![0u64; len];
        contribution(&mut value, me, seed);
        halving.run(chan, &mut scratch, &mut value)?;
        if value != sum_of_contributions(n as usize, len, seed) {
            return Err(fail(format!(
                "halving allreduce, {len} elements: rank {me} has a wrong sum"
            )));
        }
        checked += 1;
    }
    Ok(checked)
}

/// A message shorter than its receive is reported as such, by both ways of receiving: rank 0
/// sends 8 bytes twice to rank 1, which expects 16, once through a posted receive
/// ([`Channel::irecv`]) and once waiting at once ([`Channel::recv`]); the other ranks wait.
/// (Cut into pieces, a shorter message leaves pieces that no receive matches once the first
/// one fails, which MPI libraries warn about when the job ends; the whole message is the path
/// every small message takes.)
fn short_message(world: &World, chan: &Channel) -> Result<(), Failure> {
    const TAG: u16 = 31_999; // no other check's tag
    for posted in [true, false] {
        match world.rank() {
            0 => chan.send(&[7u8; 8], 1, TAG).map_err(Error::from)?,
            1 => {
                let mut buf = [0u8; 16];
                let got = if posted {
                    let req = chan.irecv(&mut buf, 0, TAG).map_err(Error::from)?;
                    req.wait().map(|_| ())
                } else {
                    chan.recv(&mut buf, 0, TAG)
                };
                let expected = herald_mpi::P2pErrorKind::Length {
                    peer: 0,
                    got: 8,
                    want: 16,
                };
                if got.as_ref().err().map(herald_mpi::P2pError::kind) != Some(&expected) {
                    return Err(fail(format!(
                        "8 bytes sent where 16 were expected (posted receive: {posted}): \
                         {got:?}, not {expected}"
                    )));
                }
            }
            _ => {}
        }
    }
    world.barrier();
    Ok(())
}

/// Broadcasts and allreduces posted in a shared window ([`Post`]): slots of 64 B (without,
/// then with 2 bulk slots of 1000 B) and of 4 KiB (with 4 bulk slots of 64 KiB), lengths from
/// 0 to past three slots of each board and 100 003 B, roots changing every call, every fourth
/// call an allreduce (each slot of each rank reused many times), every byte and element
/// checked on every rank; then a reader that expects another length gets
/// [`herald_mpi::P2pErrorKind::Length`] while the others finish, an allreduce with one rank's
/// value longer gets it on every rank, and every rank still frees the windows. `None` where
/// the ranks span several nodes (no window to share).
fn posted(world: &World, chan: &Channel) -> Result<Option<usize>, Failure> {
    let (me, n) = (world.rank(), world.size());
    let mut checked = 0;
    for (slots, slot, bulk_slots, bulk) in [
        (3usize, 64usize, 0, 0),
        (3, 64, 2, 1000),
        (64, 4096, 4, 65536),
    ] {
        let shape = herald_mpi::post::PostShape {
            slots,
            slot_bytes: slot,
            bulk_slots,
            bulk_slot_bytes: bulk,
        };
        let post = match Post::new(chan, shape) {
            Ok(p) => p,
            Err(e) if matches!(e.kind(), herald_mpi::P2pErrorKind::Invalid(_)) => return Ok(None),
            Err(e) => return Err(Error::from(e).into()),
        };
        let cap = post.slot_bytes();
        let mut lens = vec![
            0usize,
            1,
            7,
            8,
            48,
            49,
            // One further line whole, and one and a quarter (the whole lines and the partial
            // one are copied apart).
            112.min(cap),
            128.min(cap),
            cap - 1,
            cap,
            cap + 1,
            3 * cap + 5,
            100_003,
        ];
        if let Some(big) = post.bulk_slot_bytes() {
            lens.extend([big - 1, big, big + 1, 3 * big + 5]);
        }
        for (i, &len) in lens.iter().cycle().take(3 * lens.len()).enumerate() {
            let root = (i * 5 + i / 3) % n;
            let seed = (slot * 1000 + bulk * 100_000 + i) as u64;
            if i % 4 == 3 {
                let elements = len.div_ceil(8);
                let mut value = vec![0u64; elements];
                contribution(&mut value, me, seed);
                post.allreduce(chan, &mut value).map_err(Error::from)?;
                let want = sum_of_contributions(n, elements, seed);
                if let Some(at) = value.iter().zip(&want).position(|(a, b)| a != b) {
                    return Err(fail(format!(
                        "posted allreduce ({slot} B slots) of {elements} elements: element {at} differs on rank {me}"
                    )));
                }
                checked += 1;
                continue;
            }
            let mut want = vec![0u8; len];
            payload(&mut want, seed);
            let mut buf = if me == root {
                want.clone()
            } else {
                vec![0; len]
            };
            post.broadcast(chan, &mut buf, root).map_err(Error::from)?;
            if let Some(at) = buf.iter().zip(&want).position(|(a, b)| a != b) {
                return Err(fail(format!(
                    "posted broadcast ({slot} B slots) of {len} B from rank {root}: byte {at} differs on rank {me}"
                )));
            }
            checked += 1;
        }
    }
    // Mismatched lengths: rank n − 1 expects 8 bytes more than root 0 posts.
    let post = Post::new(chan, herald_mpi::post::PostShape::default()).map_err(Error::from)?;
    let len = 100;
    let mut buf = vec![1u8; if me == n - 1 { len + 8 } else { len }];
    let got = post.broadcast(chan, &mut buf, 0);
    if me == n - 1 {
        let expected = herald_mpi::P2pErrorKind::Length {
            peer: 0,
            got: len,
            want: len + 8,
        };
        if got.as_ref().err().map(herald_mpi::P2pError::kind) != Some(&expected) {
            return Err(fail(format!(
                "a posted broadcast of {len} B where {} were expected: {got:?}, not {expected}",
                len + 8
            )));
        }
    } else {
        got.map_err(Error::from)?;
    }
    drop(post); // every rank frees it, the one that failed included

    // Mismatched lengths in an allreduce: rank n − 1 has one element more, and every rank
    // finds a part of another length (rank n − 1 in rank 0's, the others in rank n − 1's).
    let post = Post::new(chan, herald_mpi::post::PostShape::default()).map_err(Error::from)?;
    let len = 10;
    let mut value = vec![1u64; if me == n - 1 { len + 1 } else { len }];
    let got = post.allreduce(chan, &mut value);
    let expected = if me == n - 1 {
        herald_mpi::P2pErrorKind::Length {
            peer: 0,
            got: 8 * len,
            want: 8 * (len + 1),
        }
    } else {
        herald_mpi::P2pErrorKind::Length {
            peer: n - 1,
            got: 8 * (len + 1),
            want: 8 * len,
        }
    };
    if got.as_ref().err().map(herald_mpi::P2pError::kind) != Some(&expected) {
        return Err(fail(format!(
            "a posted allreduce of {} elements on rank {me}: {got:?}, not {expected}",
            value.len()
        )));
    }
    drop(post);
    world.barrier();
    Ok(Some(checked))
}

/// Hierarchical broadcasts: each process a node of 2 threads, under given costs.
fn hierarchical(world: &World, chan: &mut Channel) -> Result<usize, Failure> {
    let (p, t) = (world.size(), 2usize);
    let logp = |l: u64, o: u64, g: u64| -> Result<LevelCost, Error> {
        Ok(LevelCost::LogP(
            LogP::new(
                Ratio::integer(l),
                Ratio::integer(o),
                Ratio::integer(g),
                Ratio::ZERO,
            )
            .map_err(Error::herald)?,
        ))
    };
    let model = hier::model(p, t, logp(2000, 300, 400)?, logp(20, 40, 10)?)?;
    let cpus: Vec<usize> = (0..t)
        .map(|i| {
            herald::Team::available_cpus()
                .get(i % herald::Team::available_cpus().len().max(1))
                .copied()
                .unwrap_or(0)
        })
        .collect();
    let mut team = herald::Team::with_cores(cpus).map_err(Error::herald)?;
    let mut comm = herald::Comm::new(t).map_err(Error::herald)?;
    let mut checked = 0;
    for (bytes, root) in [(64usize, 0u32), (5000, (p * t - 1) as u32), (200_000, 1)] {
        let choice = hier::choose(&model, bytes as u64, root)?;
        let plan = hier::HierPlan::new(&choice.schedule, p, t)?;
        let (_, ok) = hier::run(
            &plan,
            &mut team,
            &mut comm,
            chan,
            bytes,
            3,
            |i, buf| payload(buf, i as u64 + bytes as u64),
            |i, buf| {
                let mut want = vec![0u8; buf.len()];
                payload(&mut want, i as u64 + bytes as u64);
                buf == &want[..]
            },
        )?;
        if !ok {
            return Err(fail(format!(
                "hierarchical {} root {root}, {bytes} bytes: process {} has wrong bytes",
                choice.chosen.label,
                world.rank()
            )));
        }
        checked += 1;
    }
    Ok(checked)
}

/// A short calibration: every level where ranks meet is measured, with sane numbers. Returns
/// the profile (on every rank) for the bench check. On a loaded host (more ranks than CPUs) a
/// short run can see no usable round trip at a level; it is repeated with twice the time, up
/// to three runs, before the self-test fails. (Every rank sees the same shared profile, so all
/// decide alike.)
fn calibration(
    world: &World,
    chan: &Channel,
    cluster: &Cluster,
) -> Result<(usize, herald::Profile), Failure> {
    let n = cluster.rank_pus().len();
    let mut want: Vec<usize> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .map(|(a, b)| cluster.level_of(a, b))
        .filter(|&d| d < cluster.hierarchy().pu_level())
        .collect();
    want.sort_unstable();
    want.dedup();
    let mut scale = 1;
    loop {
        let quick = CalibrateOptions::quick();
        let opts = CalibrateOptions {
            probe: herald::calibrate::CalibrateOptions {
                min_time: Duration::from_millis(200 * scale),
                budget: Duration::from_millis(600 * scale),
                slice: Duration::from_millis(5),
                ..quick.probe
            },
            large: vec![64, 256],
            pieces: true,
            posted: true,
        };
        let profile = share_profile(
            world,
            calibrate(world, chan, cluster, &opts, |_| {})?.as_ref(),
        )?;
        // Usable means what the bench then needs: a positive one-way time and a LogP model.
        let missing = want.iter().find(|&&d| {
            let level = &profile.levels[d];
            let one_way = level.one_way_ns.as_ref().map(|x| x.median);
            !one_way.is_some_and(|v| v.is_finite() && v > 0.0)
                || level.logp(herald::model::Pick::Dominant).is_err()
        });
        // Checked first: such a calibration also skips the posted comparison (it has no tree
        // to compare with), and a longer run is the remedy for both.
        match missing {
            None => {}
            Some(&d) if scale >= 4 => {
                return Err(fail(format!(
                    "calibration: level {} has no usable one-way time or LogP model (3 runs)",
                    profile.levels[d].name
                )))
            }
            Some(_) => {
                scale *= 2;
                continue;
            }
        }
        // The combine's times: two sizes, each positive and finite (1 MiB cannot be added in
        // no time), the larger value taking longer.
        let combine: Vec<(u64, f64)> = profile
            .combine_ns
            .iter()
            .map(|p| (p.bytes, p.ns.median))
            .collect();
        let sane = combine.len() == 2
            && combine.iter().all(|&(_, t)| t.is_finite() && t > 0.0)
            && combine[0].0 < combine[1].0
            && combine[0].1 < combine[1].1;
        if !sane {
            return Err(fail(format!(
                "calibration: combines (bytes, ns) measured {combine:?}"
            )));
        }
        // Posted against the tree, and against the predicted allreduce: every size once, for
        // this job's ranks, in order, with positive finite times (on one host; none where the
        // ranks span hosts).
        let sizes: Vec<u64> = herald_mpi::calibrate::POSTED_BYTES
            .iter()
            .map(|&b| b as u64)
            .collect();
        for (what, points) in [
            ("tree", &profile.posted),
            ("allreduce", &profile.posted_allreduce),
        ] {
            let posted: Vec<(u32, u64, f64, f64)> = points
                .iter()
                .map(|p| (p.ranks, p.bytes, p.posted_ns.median, p.tree_ns.median))
                .collect();
            let sane = if cluster.hosts().len() == 1 {
                posted.iter().map(|p| p.1).collect::<Vec<_>>() == sizes
                    && posted.iter().all(|&(r, _, a, b)| {
                        r as usize == world.size()
                            && [a, b].iter().all(|t| t.is_finite() && *t > 0.0)
                    })
            } else {
                posted.is_empty()
            };
            if !sane {
                return Err(fail(format!(
                    "calibration: posted against {what} (ranks, bytes, ns, ns) measured {posted:?}"
                )));
            }
            // Broadcasts alone after a barrier: timed where the ranks have CPUs of their own,
            // for broadcasts only.
            let alone = what == "tree" && !cluster.oversubscribed();
            let times: Vec<(Option<f64>, Option<f64>)> = points
                .iter()
                .map(|p| {
                    (
                        p.posted_one_ns.as_ref().map(|d| d.median),
                        p.tree_one_ns.as_ref().map(|d| d.median),
                    )
                })
                .collect();
            let sane = times.iter().all(|&(a, b)| {
                [a, b]
                    .iter()
                    .all(|t| t.is_some() == alone && t.is_none_or(|t| t.is_finite() && t > 0.0))
            });
            if !sane {
                return Err(fail(format!(
                    "calibration: posted against {what} alone after a barrier (ns, ns) measured \
                     {times:?} (expected: {})",
                    if alone { "every size" } else { "none" }
                )));
            }
        }
        return Ok((want.len(), profile));
    }
}

/// A short bench of both herald sides, then of each of herald's allreduces over MPI: all must
/// verify.
fn benches(
    world: &World,
    chan: &Channel,
    cluster: &Cluster,
    profile: &herald::Profile,
) -> Result<usize, Failure> {
    let mut rows = 0;
    for side in [HeraldSide::Mpi, HeraldSide::Inproc] {
        let opts = BenchOptions {
            herald: side,
            collectives: vec![BenchColl::Bcast, BenchColl::Allreduce],
            variants: vec![Variant::Loop, Variant::Pingpong, Variant::Barrier],
            sizes: vec![8, 4096, 65536],
            rounds: 2,
            target: Duration::from_micros(300),
            algo: None,
            allreduce: None,
            post: herald_mpi::bench::PostChoice::Auto,
        };
        rows += bench(world, chan, cluster, Some(profile), &opts, |_| {})?.len();
    }
    for choice in AllreduceChoice::ALL {
        let opts = BenchOptions {
            herald: HeraldSide::Mpi,
            collectives: vec![BenchColl::Allreduce],
            variants: vec![Variant::Loop],
            sizes: vec![8, 4096, 65536],
            rounds: 1,
            target: Duration::from_micros(300),
            algo: None,
            allreduce: Some(choice),
            post: herald_mpi::bench::PostChoice::Auto,
        };
        rows += bench(world, chan, cluster, Some(profile), &opts, |_| {})?.len();
    }
    Ok(rows)
}

/// On rank `victim`: exits abruptly (`die`) or stops answering (sleeps an hour); elsewhere
/// nothing.
fn fall(world: &World, victim: usize, die: bool) {
    if world.rank() != victim {
        return;
    }
    if die {
        herald_cli_common::say(&format!(
            "herald-mpi: rank {victim}: selftest --die: exiting now"
        ));
        std::process::exit(9);
    }
    herald_cli_common::say(&format!(
        "herald-mpi: rank {victim}: selftest --stall: sleeping"
    ));
    std::thread::sleep(Duration::from_secs(3600));
}

/// A broadcast (posted: a broadcast or an allreduce) during which rank `victim` dies or stalls.
fn failing(
    world: &World,
    chan: &Channel,
    victim: usize,
    die: bool,
    posted: Option<&str>,
) -> Result<(), Failure> {
    let stop = |i: usize| {
        if i == 10 {
            fall(world, victim, die);
        }
    };
    if let Some(coll) = posted {
        let shape = herald_mpi::post::PostShape::default();
        let post = Post::new(chan, shape).map_err(Error::from)?;
        let mut buf = vec![1u8; 64];
        let mut value = vec![1u64; 8];
        for i in 0..4 * shape.slots {
            stop(i);
            match coll {
                "allreduce" => post.allreduce(chan, &mut value),
                _ => post.broadcast(chan, &mut buf, 0),
            }
            .map_err(Error::from)?;
        }
        return Ok(());
    }
    let n = world.size() as u32;
    let s = generate(
        &Request::broadcast(Algorithm::Chain, n, 4, 0),
        &Model::from(OnePort),
    )
    .map_err(Error::herald)?;
    let plan = BroadcastPlan::new(&s)?;
    let mut buf = vec![1u8; 1 << 16];
    for i in 0..20 {
        stop(i);
        plan.run(chan, &mut buf)?;
    }
    Ok(())
}

/// A barrier of the library that rank `victim` never joins: it dies or stalls first.
fn failing_in_library(world: &World, victim: usize, die: bool) -> Result<(), Failure> {
    fall(world, victim, die);
    world.barrier();
    Ok(())
}

/// Runs `herald-mpi selftest`.
pub(crate) fn run(world: &World, a: &SelftestArgs) -> Result<(), Failure> {
    if world.size() < 2 {
        return Err(Error::Launcher(
            "herald-mpi selftest needs at least 2 ranks: start it with mpirun -np N".into(),
        )
        .into());
    }
    world.agree(&format!("selftest {a:?}"))?;
    let mut chan = world.channel()?;
    if let Some(v) = a.die.or(a.stall) {
        if v >= world.size() {
            return Err(Error::Usage(format!("--die/--stall {v}: no such rank")).into());
        }
        let posted = match a.posted.as_deref() {
            None => None,
            Some(c @ ("bcast" | "allreduce")) => Some(c),
            Some(c) => {
                return Err(Error::Usage(format!("--posted {c:?}: bcast or allreduce")).into())
            }
        };
        if a.in_library {
            return failing_in_library(world, v, a.die.is_some());
        }
        return failing(world, &chan, v, a.die.is_some(), posted);
    }
    if a.posted.is_some() || a.in_library {
        return Err(
            Error::Usage("--posted and --in-library apply with --die or --stall".into()).into(),
        );
    }
    let cluster = Cluster::gather(world)?;
    let mut report = Vec::new();
    report.push(format!("{} broadcasts", broadcasts(world, &chan)?));
    report.push(format!("{} reduce/allreduce", combining(world, &chan)?));
    // The same with every message of 1001 B … 100 000 B cut into pieces of at most 1000 B (a
    // 4097-byte block in 5, a 10 001-element allreduce in 81; longer messages whole).
    let pieces = herald_mpi::Pieces::new(1000, 100_000);
    (0..world.size()).for_each(|p| chan.set_pieces(p, pieces));
    report.push(format!(
        "{} broadcasts and {} reduce/allreduce in pieces",
        broadcasts(world, &chan)?,
        combining(world, &chan)?
    ));
    (0..world.size()).for_each(|p| chan.set_pieces(p, None));
    short_message(world, &chan)?;
    report.push("2 short messages".to_owned());
    match posted(world, &chan)? {
        Some(k) => report.push(format!("{k} posted broadcasts and allreduces")),
        None => report.push("no posted collectives (the ranks span nodes)".to_owned()),
    }
    report.push(format!("{} hierarchical", hierarchical(world, &mut chan)?));
    if !a.quick {
        let (levels, profile) = calibration(world, &chan, &cluster)?;
        report.push(format!("{levels} calibrated levels"));
        report.push(format!(
            "{} bench rows",
            benches(world, &chan, &cluster, &profile)?
        ));
    }
    // every rank passed (a failing rank aborted the job above)
    let mut total = 0u32;
    world.bounded("MPI_Allreduce (the count of ranks that passed)", |c| {
        c.all_reduce_into(&1u32, &mut total, mpi::collective::SystemOperation::sum())
    });
    if world.rank() == 0 {
        println!(
            "selftest passed on {total} ranks ({}): {}",
            world.library(),
            report.join(", ")
        );
    }
    Ok(())
}
