//! Hierarchical execution: herald's in-process runtime inside a node, MPI among node leaders.
//!
//! A *node* is one MPI process (start one per host: `mpirun --map-by ppr:1:node`) running `T`
//! ranks as pinned threads of a [`Team`] with a [`Comm`]; the job has `P · T` ranks, rank
//! `p · T + t` being thread `t` of process `p`. The broadcast is herald's *leaders* schedule
//! with its first split at the node: stage 1 among one leader per node (over MPI, herald's
//! schedule run by [`BroadcastPlan`] between the processes), then the later stages inside each
//! node (herald's [`CommRank::broadcast_with`] over the node's rings, any number of stages and
//! blocks).
//!
//! # Who chooses
//!
//! herald's hierarchical planner, on a model with two kinds of messages: between processes,
//! the MPI profile's costs (`herald-mpi calibrate`: the level where the processes' CPUs meet;
//! a level it did not measure is assumed twice the nearest finer measured level, herald's
//! stated default), and between the threads of a process, herald's own profile of the machine
//! (`herald calibrate`: the level where the threads' CPUs meet; threads outnumbering their CPUs
//! make it herald's oversubscribed model). The model is `machine → group (one node per process,
//! T ranks) → core → pu` ([`model`]); the planner ranks every candidate — flat trees, the
//! earliest-arrival tree, leaders splits with each stage's tree chosen by simulating it — and
//! the execution takes the best candidate whose first split is the node (those are the ones
//! that run as "MPI among leaders, herald inside"), reporting the overall winner beside it.
//!
//! The execution runs the stages one after the other: a leader receives every block from the
//! network before the node's stage starts. The model pipelines blocks through the stages, so
//! with several blocks its prediction is optimistic.
//!
//! # How this relates to MPI libraries
//!
//! See `docs/mpi.md`: Open MPI's HAN and MPICH's topology-aware trees make the same split
//! (a node-local stage and an inter-node stage among leaders), chosen by size thresholds and
//! tuning tables; here the split and every stage's tree come from simulating the calibrated
//! model.

use crate::cluster::Cluster;
use crate::error::Error;
use crate::exec::BroadcastPlan;
use crate::p2p::Channel;
use herald::{
    model::{Hier, HierLevel, LevelCost, LevelKind, Pick},
    plan,
    plan::{schedule_of, Candidate},
    Collective, Comm, CommRank, Hierarchy, Model, PlanRequest, Profile, Program, Schedule, Team,
};
use std::time::{Duration, Instant};

/// The planning model of `processes` nodes of `threads` ranks: `mpi` between nodes, `thread`
/// inside (see the module docs).
///
/// # Errors
/// [`Error::Herald`] for an invalid hierarchy or model.
///
/// ```
/// use herald::{LogP, Ratio, model::LevelCost};
/// let logp = |l, o, g| LevelCost::LogP(LogP::new(Ratio::integer(l), Ratio::integer(o), Ratio::integer(g), Ratio::ZERO).unwrap());
/// let m = herald_mpi::hier::model(4, 8, logp(500, 300, 200), logp(20, 30, 10))?;
/// assert_eq!(m.hierarchy().pu_count(), 32);
/// # Ok::<(), herald_mpi::Error>(())
/// ```
pub fn model(
    processes: usize,
    threads: usize,
    mpi: LevelCost,
    thread: LevelCost,
) -> Result<Hier, Error> {
    let h = Hierarchy::uniform(&[
        (LevelKind::Group, processes),
        (LevelKind::Core, threads),
        (LevelKind::Pu, 1),
    ])
    .map_err(Error::herald)?;
    let levels = vec![
        HierLevel::new(mpi),
        HierLevel::new(thread),
        HierLevel::default(),
        HierLevel::default(),
    ];
    Hier::compact(h, levels).map_err(Error::herald)
}

/// The node split's depth in [`model`]'s hierarchy.
const NODE_DEPTH: usize = 1;

/// What the planner chose.
#[derive(Debug, Clone)]
pub struct Choice {
    /// The executed candidate (leaders with the node split).
    pub chosen: Candidate,
    /// Its schedule over all `P · T` ranks.
    pub schedule: Schedule,
    /// The overall winner, if it is another candidate (e.g. a flat tree).
    pub overall: Option<Candidate>,
}

/// Plans a broadcast of `bytes` from global rank `root` under `hier` (see the module docs).
///
/// # Errors
/// [`Error::Herald`] if planning fails or no candidate splits at the node.
pub fn choose(hier: &Hier, bytes: u64, root: u32) -> Result<Choice, Error> {
    let n = hier.hierarchy().pu_count() as u32;
    let model = Model::from(hier.clone());
    let req = PlanRequest {
        n,
        root,
        bytes: bytes.max(1),
        blocks: None,
    };
    let p = plan(&model, &req).map_err(Error::herald)?;
    let chosen = p
        .ranked
        .iter()
        .find(|c| {
            c.leaders
                .as_ref()
                .is_some_and(|l| l.split.first() == Some(&NODE_DEPTH))
        })
        .cloned()
        .ok_or_else(|| Error::Herald("no leaders candidate splits at the node".into()))?;
    let overall = p.best().filter(|b| **b != chosen).cloned();
    let schedule = schedule_of(&model, &chosen, n, root).map_err(Error::herald)?;
    Ok(Choice {
        chosen,
        schedule,
        overall,
    })
}

/// A leaders schedule split into its MPI stage and each node's in-process stages.
#[derive(Debug, Clone)]
pub struct HierPlan {
    processes: usize,
    threads: usize,
    /// Stage 1 among the processes.
    mpi: BroadcastPlan,
    /// Per process: its leader thread and its in-process program.
    nodes: Vec<(usize, Program)>,
}

impl HierPlan {
    /// Splits a broadcast schedule over `processes · threads` ranks (rank `p · T + t` is
    /// thread `t` of process `p`).
    ///
    /// # Errors
    /// [`Error::Usage`] if the schedule is not a leaders schedule with its first split at the
    /// node (a process receives from the network on two threads, or sends to another process
    /// from a thread that is not its leader); [`Error::Herald`] if a part does not compile.
    pub fn new(schedule: &Schedule, processes: usize, threads: usize) -> Result<HierPlan, Error> {
        let Collective::Broadcast { root, blocks } = schedule.collective() else {
            return Err(Error::Usage("a hierarchical run broadcasts".into()));
        };
        let (t, root) = (threads, root as usize);
        if schedule.n() as usize != processes * t {
            return Err(Error::Usage(format!(
                "the schedule has {} ranks, not {processes} × {t}",
                schedule.n()
            )));
        }
        let node = |r: u32| r as usize / t;
        let mut leader: Vec<Option<usize>> = vec![None; processes];
        leader[node(root as u32)] = Some(root % t);
        let not_leaders =
            |why: String| Error::Usage(format!("not a node-split leaders schedule: {why}"));
        for s in schedule.sends().filter(|s| node(s.from) != node(s.to)) {
            let (q, thread) = (node(s.to), s.to as usize % t);
            match leader[q] {
                Some(l) if l != thread => {
                    return Err(not_leaders(format!(
                        "process {q} receives on threads {l} and {thread}"
                    )))
                }
                _ => leader[q] = Some(thread),
            }
        }
        let leader: Vec<usize> = leader.into_iter().map(|l| l.unwrap_or(0)).collect();
        let mut inter = Schedule::builder(
            processes as u32,
            Collective::Broadcast {
                root: node(root as u32) as u32,
                blocks,
            },
            schedule.base(),
        )
        .map_err(Error::herald)?;
        let mut intra: Vec<_> = (0..processes)
            .map(|p| {
                Schedule::builder(
                    t as u32,
                    Collective::Broadcast {
                        root: leader[p] as u32,
                        blocks,
                    },
                    schedule.base(),
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::herald)?;
        for s in schedule.sends() {
            let (p, q) = (node(s.from), node(s.to));
            if p != q {
                if s.from as usize % t != leader[p] {
                    return Err(not_leaders(format!(
                        "rank {} sends to process {q} but leads no node",
                        s.from
                    )));
                }
                inter.push(s.at, p as u32, q as u32, s.what);
            } else {
                intra[p].push(s.at, s.from % t as u32, s.to % t as u32, s.what);
            }
        }
        let mpi = BroadcastPlan::new(&inter.build().map_err(Error::herald)?)?;
        let nodes = intra
            .into_iter()
            .zip(leader)
            .map(|(b, l)| {
                let s = b.build().map_err(Error::herald)?;
                Ok((l, Program::compile(&s).map_err(Error::herald)?))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(HierPlan {
            processes,
            threads: t,
            mpi,
            nodes,
        })
    }

    /// Processes (nodes).
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// Threads per process.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Process `p`'s leader thread.
    pub fn leader(&self, p: usize) -> usize {
        self.nodes[p].0
    }

    /// The MPI stage among the processes.
    pub fn mpi_stage(&self) -> &BroadcastPlan {
        &self.mpi
    }

    /// Process `p`'s in-process program.
    pub fn node_program(&self, p: usize) -> &Program {
        &self.nodes[p].1
    }
}

/// One thread's state in [`run`].
#[derive(Debug)]
struct ThreadState<'c, 'm> {
    rank: CommRank<'c>,
    chan: Option<&'m mut Channel>,
    buf: Vec<u8>,
}

/// Runs `iters` hierarchical broadcasts of `bytes` bytes on this process's `team` (one thread
/// per rank of the node); `chan` connects the processes. Before each, the root fills its buffer
/// with `fill(i, buf)`; after each, every thread calls `check(i, buf)`. Returns this process's
/// per-iteration time (its slowest thread, from a barrier of all processes and threads) and
/// whether every check passed.
///
/// # Errors
/// [`Error::Usage`] if the team or channel does not fit the plan; [`Error::P2p`] if a message
/// fails; [`Error::Herald`] if an in-process collective fails.
#[allow(clippy::too_many_arguments)]
pub fn run(
    plan: &HierPlan,
    team: &mut Team,
    comm: &mut Comm,
    chan: &mut Channel,
    bytes: usize,
    iters: usize,
    fill: impl Fn(usize, &mut [u8]) + Sync,
    check: impl Fn(usize, &[u8]) -> bool + Sync,
) -> Result<(Vec<Duration>, bool), Error> {
    let (p, t) = (chan.rank(), plan.threads);
    if chan.size() != plan.processes || team.size() != t || comm.size() != t {
        return Err(Error::Usage(format!(
            "the plan is for {} processes of {t} threads; this job has {} processes, a team of {}",
            plan.processes,
            chan.size(),
            team.size()
        )));
    }
    let leader = plan.leader(p);
    let program = plan.node_program(p);
    let is_root_process = p == plan.mpi.root();
    let mut chan = Some(chan);
    let mut states: Vec<ThreadState<'_, '_>> = comm
        .ranks()
        .into_iter()
        .enumerate()
        .map(|(i, rank)| ThreadState {
            rank,
            chan: if i == leader { chan.take() } else { None },
            buf: vec![0u8; bytes],
        })
        .collect();
    let out = team.run_with(
        &mut states,
        |ctx, st| -> Result<(Vec<Duration>, bool), Error> {
            let me = ctx.rank();
            let mut times = Vec::with_capacity(iters);
            let mut ok = true;
            for i in 0..iters {
                if me == leader && is_root_process {
                    fill(i, &mut st.buf);
                } else {
                    st.buf.fill(0);
                }
                if let Some(ch) = st.chan.as_deref() {
                    ch.barrier()?;
                }
                st.rank.barrier().map_err(Error::herald)?;
                let t0 = Instant::now();
                if let Some(ch) = st.chan.as_deref() {
                    plan.mpi.run(ch, &mut st.buf)?;
                }
                st.rank
                    .broadcast_with(program, &mut st.buf)
                    .map_err(Error::herald)?;
                times.push(t0.elapsed());
                ok &= check(i, &st.buf);
            }
            Ok((times, ok))
        },
    );
    let mut worst = vec![Duration::ZERO; iters];
    let mut all_ok = true;
    for r in out {
        let (times, ok) = r?;
        all_ok &= ok;
        for (w, t) in worst.iter_mut().zip(times) {
            *w = (*w).max(t);
        }
    }
    Ok((worst, all_ok))
}

/// The LogGP costs of `profile`'s level `name`, else of the nearest finer measured level of
/// `hierarchy` × 2 (herald's stated default for a level it did not measure), with the source.
///
/// # Errors
/// [`Error::Herald`] if no level at or below `depth` was measured.
pub fn level_cost(
    profile: &Profile,
    hierarchy: &Hierarchy,
    depth: usize,
) -> Result<(LevelCost, String), Error> {
    for d in depth..hierarchy.depth() {
        let name = hierarchy.level(d).name();
        if let Some(l) = profile.measured_levels().find(|l| l.name == name) {
            let cost = LevelCost::LogP(l.logp(Pick::Dominant).map_err(Error::herald)?);
            if d == depth {
                return Ok((cost, format!("measured ({name})")));
            }
            let two = herald::Ratio::integer(2);
            let cost = cost.scaled(two).map_err(Error::herald)?;
            return Ok((cost, format!("assumed 2 × {name} (not measured)")));
        }
    }
    Err(Error::Herald(format!(
        "the profile measured no level at or below {}",
        hierarchy.level(depth).name()
    )))
}

/// The inter-process cost for this job from an MPI profile: the coarsest level any two of the
/// processes meet at in the cluster hierarchy.
///
/// # Errors
/// As [`level_cost`]; [`Error::Usage`] for a job of one process.
pub fn mpi_cost(profile: &Profile, cluster: &Cluster) -> Result<(LevelCost, String), Error> {
    let n = cluster.rank_pus().len();
    let depth = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .map(|(a, b)| cluster.level_of(a, b))
        .min()
        .ok_or_else(|| Error::Usage("a hierarchical run needs at least 2 processes".into()))?;
    level_cost(profile, cluster.hierarchy(), depth)
}

/// The in-process cost from herald's profile of this machine for threads on `cpus` (OS
/// indices; pass every thread of the host, of every process there): the coarsest level two of
/// them meet at; when threads outnumber their CPUs, herald's oversubscribed model.
///
/// # Errors
/// As [`level_cost`].
pub fn thread_cost(
    profile: &Profile,
    machine: &Hierarchy,
    cpus: &[usize],
) -> Result<(LevelCost, String), Error> {
    let mut distinct = cpus.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < cpus.len() {
        let m = herald::plan::oversubscribed_model(profile, machine, cpus.len() as u32)
            .map_err(Error::herald)?;
        return match m {
            Model::LogP(l) => Ok((LevelCost::LogP(l), "oversubscribed (herald's model)".into())),
            other => Err(Error::Herald(format!(
                "unexpected model {}",
                other.as_dyn().name()
            ))),
        };
    }
    let pu = |os: usize| machine.pu_of_os(os);
    let depth = distinct
        .iter()
        .flat_map(|&a| distinct.iter().map(move |&b| (a, b)))
        .filter(|(a, b)| a < b)
        .filter_map(|(a, b)| Some(machine.lca_level(pu(a)?, pu(b)?)))
        .min()
        .unwrap_or(machine.pu_level());
    level_cost(
        profile,
        machine,
        depth.min(machine.pu_level().saturating_sub(1)),
    )
}
