//! `herald-mpi run`: herald schedules over MPI point-to-point, every byte verified on request.

use crate::output::{print_json, FlatRunJson, HierRunJson, RunJson, TimesNs};
use crate::Failure;
use herald::{
    generate,
    model::{Assumptions, KPort, OnePort},
    runtime::Spread,
    Algorithm, Collective, LogP, Model, Postal, Profile, Ratio, Request, Schedule,
};
use herald_mpi::adapt::{Chooser, Kind, Way};
use herald_mpi::allreduce::{AllreduceChoice, AllreducePlans};
use herald_mpi::{
    contribution, payload, post::PostShape, sum_of_contributions, BroadcastPlan, Cluster,
    CombinePlan, CombineScratch, Error, Post, World,
};
use mpi::collective::CommunicatorCollectives;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A flat cost model from flags (for generating a schedule by name).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// Cost model for --algo: postal, logp, oneport or kport (default: with --profile the job's
    /// model under the profile, combines priced by their bytes; else oneport for broadcasts,
    /// postal λ = 2 for reduce and allreduce).
    #[arg(long)]
    model: Option<String>,
    /// Postal latency λ.
    #[arg(long)]
    lambda: Option<Ratio>,
    /// LogP latency L.
    #[arg(long = "L")]
    l: Option<Ratio>,
    /// LogP overhead o.
    #[arg(long = "o")]
    o: Option<Ratio>,
    /// LogP gap g.
    #[arg(long = "g")]
    g: Option<Ratio>,
    /// LogGP gap per byte G.
    #[arg(long = "G")]
    big_g: Option<Ratio>,
    /// k-port: ports K.
    #[arg(long)]
    ports: Option<u32>,
}

impl ModelArgs {
    /// The model, or `None` if no model flag was given.
    pub(crate) fn model(&self) -> Result<Option<Model>, Error> {
        let usage = |s: String| Error::Usage(s);
        let Some(name) = self.model.as_deref() else {
            if self.lambda.is_some() || self.l.is_some() || self.ports.is_some() {
                return Err(usage("model parameters need --model".into()));
            }
            return Ok(None);
        };
        let need = |v: Option<Ratio>, flag: &str| {
            v.ok_or_else(|| usage(format!("--model {name} needs {flag}")))
        };
        Ok(Some(match name {
            "postal" => {
                Model::from(Postal::new(need(self.lambda, "--lambda")?).map_err(Error::herald)?)
            }
            "logp" => Model::from(
                LogP::new(
                    need(self.l, "--L")?,
                    need(self.o, "--o")?,
                    need(self.g, "--g")?,
                    self.big_g.unwrap_or(Ratio::ZERO),
                )
                .map_err(Error::herald)?,
            ),
            "oneport" => Model::from(OnePort),
            "kport" => Model::from(
                KPort::new(
                    self.ports
                        .ok_or_else(|| usage("--model kport needs --ports".into()))?,
                )
                .map_err(Error::herald)?,
            ),
            other => {
                return Err(usage(format!(
                    "unknown --model {other:?} (postal, logp, oneport, kport)"
                )))
            }
        }))
    }
}

/// Arguments of `herald-mpi run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The algorithm (herald's names: binomial, optimal, chain, …, reduce, allreduce), or auto:
    /// the planner's choice under the MPI profile.
    #[arg(long, default_value = "auto")]
    algo: String,
    #[command(flatten)]
    model: ModelArgs,
    /// Blocks the payload is cut into (generated broadcasts).
    #[arg(short = 'm', long, default_value_t = 1)]
    blocks: u32,
    /// Radix of knomial, degree of dtree/fibonacci.
    #[arg(long, default_value_t = 2)]
    radix: u32,
    /// The root (broadcast, reduce).
    #[arg(long, default_value_t = 0)]
    root: u32,
    /// Payload bytes (a multiple of 8 for reduce and allreduce: u64 elements summed).
    #[arg(long, default_value_t = 64)]
    bytes: usize,
    /// Collectives to time.
    #[arg(long, default_value_t = 100)]
    iters: usize,
    /// Check every byte on every rank in every iteration (exit 1 on a mismatch).
    #[arg(long)]
    verify: bool,
    /// Print one JSON object (rank 0).
    #[arg(long)]
    json: bool,
    /// An MPI profile (herald-mpi calibrate) for --algo auto; with another --algo, the
    /// profile's message pieces are used (how long messages are cut).
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Accept a profile of other hosts.
    #[arg(long)]
    force: bool,
    /// With --algo auto, a broadcast and every rank on one node: choose between posting in a
    /// shared window and the planner's tree by timing both as the run goes, starting on the
    /// profile's choice (where the profile's two times are within 2× of each other and the
    /// faster is 25 µs or more; herald_mpi::adapt).
    #[arg(long)]
    adapt: bool,
    /// The number of MPI processes expected (fails clearly when mpirun started another number).
    #[arg(short = 'n')]
    n: Option<usize>,
    /// Hierarchical: each MPI process is a node running this many ranks as herald threads;
    /// MPI among node leaders, herald's in-process runtime inside, planned by herald.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// With --threads: herald's profile of this machine (herald calibrate) for the in-process
    /// costs (default: herald's default profile).
    #[arg(long, value_name = "FILE")]
    thread_profile: Option<PathBuf>,
}

impl RunArgs {
    /// The arguments every rank must share.
    fn canonical(&self) -> String {
        format!(
            "run algo={} model={:?} m={} radix={} root={} bytes={} iters={} verify={} profile={:?} \
             threads={} thread_profile={:?} adapt={}",
            self.algo,
            self.model,
            self.blocks,
            self.radix,
            self.root,
            self.bytes,
            self.iters,
            self.verify,
            self.profile,
            self.threads,
            self.thread_profile,
            self.adapt
        )
    }
}

/// What is run.
enum Chosen {
    Broadcast(BroadcastPlan),
    Combine(CombinePlan),
}

/// What [`choose`] chose: the schedule, its model, its label, its predicted time (ns) where
/// known, and the profile with the job's cluster where one was read (for the message pieces).
type Choice = (
    Schedule,
    Model,
    String,
    Option<f64>,
    Option<(Profile, Cluster)>,
);

/// The schedule the arguments name, its label and its predicted time (ns) where known.
fn choose(world: &World, a: &RunArgs) -> Result<Choice, Error> {
    let n = world.size() as u32;
    if a.algo == "auto" {
        let profile = world.agree_result(
            "profile",
            load_mpi_profile(world, a.profile.as_deref(), a.force),
        )?;
        let cluster = Cluster::gather(world)?;
        let (s, c, model) = cluster.plan(&profile, a.bytes as u64, a.root)?;
        let label = format!("{} (planned, {} block(s))", c.label, c.blocks);
        let predicted = Some(c.makespan.to_f64());
        return Ok((s, model, label, predicted, Some((profile, cluster))));
    }
    let with_profile = match &a.profile {
        Some(path) => {
            let p = world.agree_result("profile", load_mpi_profile(world, Some(path), a.force))?;
            Some((p, Cluster::gather(world)?))
        }
        None => None,
    };
    let algo: Algorithm = a.algo.parse().map_err(Error::herald)?;
    let algo = algo.with_params(a.radix, Some(a.radix));
    let combining = matches!(
        algo,
        Algorithm::Reduce | Algorithm::Allreduce | Algorithm::AllreducePaper
    );
    let bytes = a.bytes as u64;
    let flags = a.model.model()?;
    let job = with_profile.as_ref().filter(|_| flags.is_none());
    let model = match (flags, job) {
        (Some(m), _) => m,
        (None, Some((profile, cluster))) if combining => {
            herald_mpi::allreduce::combine_model(cluster, profile, bytes)?
        }
        (None, Some((profile, cluster))) => herald::plan::block_model(
            &cluster.model(profile, &Assumptions::default())?,
            bytes,
            a.blocks,
        )
        .map_err(Error::herald)?,
        (None, None) if combining => {
            Model::from(Postal::new(Ratio::integer(2)).map_err(Error::herald)?)
        }
        (None, None) => Model::from(OnePort),
    };
    let s =
        generate(&Request::broadcast(algo, n, a.blocks, a.root), &model).map_err(Error::herald)?;
    let predicted = match job {
        Some((profile, cluster)) => predicted_ns(&s, &model, algo, (profile, cluster), bytes)?,
        None => None,
    };
    Ok((s, model, algo.to_string(), predicted, with_profile))
}

/// The predicted time (ns) of a named schedule generated under the profile's model: its
/// simulated makespan, as `--algo auto` predicts its pick; for the allreduce with combining,
/// the prediction the bench's choice among allreduces makes ([`AllreducePlans`], which adds the
/// work of ranks sharing CPUs); none for a reduce of ranks sharing CPUs, which nothing predicts.
fn predicted_ns(
    s: &Schedule,
    model: &Model,
    algo: Algorithm,
    (profile, cluster): (&Profile, &Cluster),
    bytes: u64,
) -> Result<Option<f64>, Error> {
    let shared = cluster.oversubscribed();
    Ok(match algo {
        Algorithm::Allreduce => Some(
            AllreducePlans::new(cluster, profile, bytes)?
                .candidate(AllreduceChoice::Combining)
                .predicted_ns,
        ),
        Algorithm::Reduce | Algorithm::AllreducePaper if shared => None,
        _ => {
            let r = herald::check(s, model).map_err(Error::herald)?;
            Some(r.base().to_f64(r.makespan()))
        }
    })
}

/// Runs `herald-mpi run`.
pub(crate) fn run(world: &World, a: &RunArgs) -> Result<(), Failure> {
    if let Some(n) = a.n {
        world.expect_size(n)?;
    }
    if world.size() < 2 {
        return Err(Error::Launcher(
            "herald-mpi run needs at least 2 ranks: start it with mpirun -np N".into(),
        )
        .into());
    }
    if a.iters == 0 || a.blocks == 0 {
        return Err(Error::Usage("--iters and -m must be at least 1".into()).into());
    }
    world.agree(&a.canonical())?;
    if a.threads > 1 {
        return run_hier(world, a);
    }
    if a.thread_profile.is_some() {
        return Err(
            Error::Usage("--thread-profile applies with --threads T (T ≥ 2)".into()).into(),
        );
    }
    let (schedule, model, label, predicted, with_profile) = choose(world, a)?;
    let chosen = match schedule.collective() {
        Collective::Broadcast { .. } => Chosen::Broadcast(BroadcastPlan::new(&schedule)?),
        Collective::Reduce { .. } | Collective::Allreduce => {
            if a.bytes == 0 || a.bytes % 8 != 0 {
                return Err(Error::Usage(format!(
                    "--bytes {} for {}: a positive multiple of 8 (u64 elements are summed)",
                    a.bytes,
                    schedule.collective().name()
                ))
                .into());
            }
            Chosen::Combine(CombinePlan::new(&schedule, &model)?)
        }
        other => {
            return Err(Error::Usage(format!(
                "herald-mpi runs broadcast, reduce and allreduce schedules, not {}",
                other.name()
            ))
            .into())
        }
    };
    // Every rank built the same schedule (same inputs, exact arithmetic); check it anyway.
    world.agree(&format!("schedule {} {}", label, digest(&schedule)))?;
    let chan = world.channel()?;
    if let Some((profile, cluster)) = &with_profile {
        cluster.apply_pieces(&chan, profile);
    }
    // The planner's broadcast is posted in a shared window where the profile measured that
    // faster at this size and rank count (every rank on one node).
    let posts = a.algo == "auto"
        && matches!(chosen, Chosen::Broadcast(_))
        && with_profile
            .as_ref()
            .is_some_and(|(p, c)| c.posts(p, a.bytes as u64));
    // --adapt: the profile's (posted, tree) times, where the choice goes by timing
    let adapt = match &with_profile {
        Some((p, c)) if a.adapt && a.algo == "auto" && c.hosts().len() == 1 => match &chosen {
            Chosen::Broadcast(_) => p.posted_ns(world.size() as u32, a.bytes as u64),
            Chosen::Combine(_) => None,
        },
        _ => None,
    };
    if a.adapt && adapt.is_none() {
        return Err(Error::Usage(
            "--adapt chooses between posting and the planner's tree: it needs --algo auto, a \
             broadcast, every rank on one node and a profile that timed posting there \
             (herald-mpi calibrate)"
                .into(),
        )
        .into());
    }
    let chooser = with_profile
        .as_ref()
        .filter(|_| adapt.is_some())
        .map(|(p, _)| Chooser::for_profile(p, world.size() as u32));
    let posts = posts && adapt.is_none();
    let post = if posts || adapt.is_some() {
        Some(Post::new(&chan, PostShape::for_ranks(chan.size())).map_err(Error::from)?)
    } else {
        None
    };
    let label = if posts {
        "posted in a shared window (the profile measured it faster than the planner's tree)"
            .to_owned()
    } else {
        label
    };
    let predicted = match (&with_profile, posts) {
        (Some((p, _)), true) => p
            .posted_ns(world.size() as u32, a.bytes as u64)
            .map(|t| t.0),
        _ => predicted,
    };
    let me = world.rank();
    let mut times = Vec::with_capacity(a.iters);
    let mut bad: Option<String> = None;
    match &chosen {
        Chosen::Broadcast(plan) => {
            let mut buf = vec![0u8; a.bytes];
            let mut want = vec![0u8; if a.verify { a.bytes } else { 0 }];
            for i in 0..a.iters {
                let seed = i as u64 + 1;
                if me == plan.root() {
                    payload(&mut buf, seed);
                } else if a.verify {
                    buf.fill(0);
                }
                chan.barrier().map_err(Error::from)?;
                let t0 = Instant::now();
                match (&post, &chooser, adapt) {
                    (Some(post), Some(chooser), Some(times)) => {
                        let (root, buf) = (a.root as usize, &mut buf);
                        chooser.call((Kind::Broadcast, a.bytes), times, (post, &chan), |way| {
                            match way {
                                Way::Posted => {
                                    post.broadcast(&chan, buf, root).map_err(Error::from)
                                }
                                Way::OverMpi => plan.run(&chan, buf),
                            }
                        })?;
                    }
                    (Some(post), _, _) => post
                        .broadcast(&chan, &mut buf, a.root as usize)
                        .map_err(Error::from)?,
                    (None, _, _) => plan.run(&chan, &mut buf)?,
                }
                times.push(t0.elapsed());
                if a.verify && me != plan.root() && bad.is_none() {
                    payload(&mut want, seed);
                    if let Some(at) = buf.iter().zip(&want).position(|(x, y)| x != y) {
                        bad = Some(format!("iteration {i}: rank {me} differs at byte {at}"));
                    }
                }
            }
        }
        Chosen::Combine(plan) => {
            let len = a.bytes / 8;
            let mut value = vec![0u64; len];
            let mut scratch = CombineScratch::default();
            for i in 0..a.iters {
                let seed = i as u64 + 1;
                value.resize(len, 0);
                contribution(&mut value, me, seed);
                chan.barrier().map_err(Error::from)?;
                let t0 = Instant::now();
                plan.run(&chan, &mut scratch, &mut value)?;
                times.push(t0.elapsed());
                if a.verify && plan.has_result(me) && bad.is_none() {
                    let want = sum_of_contributions(world.size(), len, seed);
                    if let Some(at) = value.iter().zip(&want).position(|(x, y)| x != y) {
                        bad = Some(format!("iteration {i}: rank {me} differs at element {at}"));
                    }
                }
            }
        }
    }
    // --adapt: the way the choice settled on (the profile's where the class was not timed),
    // its label and the profile's time for it
    let (label, predicted) = match (&chooser, adapt) {
        (Some(c), Some((posted_ns, tree_ns))) => {
            let settled = c.settled((Kind::Broadcast, a.bytes), (posted_ns, tree_ns));
            let how = c.describe(Kind::Broadcast, a.bytes).unwrap_or_else(|| {
                "the profile's choice (not timed: the profile's two times are more than \
                     2× apart, or under 25 µs)"
                    .into()
            });
            (
                format!("posted in a shared window or {label}, {how}"),
                Some(match settled {
                    Way::Posted => posted_ns,
                    Way::OverMpi => tree_ns,
                }),
            )
        }
        _ => (label, predicted),
    };
    // Every rank learns whether any rank saw a wrong byte; each reports its own.
    let any_bad = any_rank(world, bad.is_some());
    if let Some(b) = &bad {
        return Err(Failure::Everywhere(Error::Verify(b.clone())));
    }
    if any_bad {
        return Err(Failure::Everywhere(Error::Verify(
            "another rank received wrong bytes".into(),
        )));
    }
    let iteration = max_over_ranks(world, &times);
    let Some(spread) = Spread::of(&iteration) else {
        return Ok(());
    };
    if me != 0 {
        return Ok(());
    }
    let (kind, m) = match &chosen {
        Chosen::Broadcast(p) => ("broadcast", p.blocks()),
        Chosen::Combine(p) => (p.collective().name(), 1),
    };
    let times = TimesNs::of(&spread);
    if a.json {
        let out = FlatRunJson {
            m,
            predicted_ns: predicted,
            measured_over_predicted: predicted.map(|p| times.median_ns / p),
            run: RunJson {
                collective: kind,
                algorithm: label,
                n: world.size(),
                root: a.root,
                bytes: a.bytes,
                iters: a.iters,
                verified: a.verify,
                library: world.library().to_owned(),
                times,
            },
        };
        print_json(&out)?;
    } else {
        println!(
            "{kind} of {} bytes over MPI ({}), n = {}, {label}{}, {} iterations{}",
            a.bytes,
            world.library(),
            world.size(),
            if posts || adapt.is_some() {
                String::new()
            } else {
                format!(" ({} sends)", schedule.len())
            },
            a.iters,
            if a.verify {
                ", every byte verified"
            } else {
                ""
            }
        );
        println!("time per {kind} (slowest rank): {spread}");
        if let Some(p) = predicted {
            println!(
                "predicted {p:.0} ns, measured median {:.0} ns: measured/predicted = {:.2}",
                times.median_ns,
                times.median_ns / p
            );
        }
    }
    Ok(())
}

/// The MPI profile at `path`, else at the default path of this MPI library (local: no
/// communication; follow with [`World::agree_result`]).
pub(crate) fn load_mpi_profile(
    world: &World,
    path: Option<&std::path::Path>,
    force: bool,
) -> Result<herald::Profile, Error> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => herald_mpi::calibrate::default_profile_path(world.library()).ok_or_else(|| {
            Error::Usage("no MPI profile: give --profile FILE (or set HERALD_MPI_PROFILE)".into())
        })?,
    };
    if !path.exists() {
        return Err(Error::Usage(format!(
            "no MPI profile at {}: run herald-mpi calibrate first, or give --profile FILE or \
             --algo NAME",
            path.display()
        )));
    }
    herald_mpi::calibrate::load_profile(&path, force)
}

/// `herald-mpi run --threads T`: the hierarchical broadcast (see `herald_mpi::hier`).
fn run_hier(world: &World, a: &RunArgs) -> Result<(), Failure> {
    use herald_mpi::hier;
    if a.algo != "auto" || a.model.model.is_some() || a.blocks != 1 {
        return Err(Error::Usage(
            "--threads plans with the profiles: --algo, --model and -m do not apply".into(),
        )
        .into());
    }
    let (p, t) = (world.size(), a.threads);
    let n = p * t;
    if a.root as usize >= n {
        return Err(Error::Usage(format!("--root {} of {n} ranks", a.root)).into());
    }
    let mpi_profile = world.agree_result(
        "profile",
        load_mpi_profile(world, a.profile.as_deref(), a.force),
    )?;
    let thread_profile = world.agree_result("thread profile", {
        let path = a
            .thread_profile
            .clone()
            .or_else(herald::model::default_profile_path);
        match path {
            Some(p) if p.exists() => herald_mpi::calibrate::load_profile(&p, a.force),
            _ => Err(Error::Usage(
                "no herald profile of this machine: run herald calibrate, or give --thread-profile"
                    .into(),
            )),
        }
    })?;
    let cluster = Cluster::gather(world)?;
    // this process's threads: round robin over the CPUs it was allowed, from its local rank
    let allowed = herald::Team::available_cpus();
    let (local, local_size) = world.local();
    let cpu_of = |j: usize| allowed.get(j % allowed.len().max(1)).copied().unwrap_or(0);
    let cpus: Vec<usize> = (0..t).map(|i| cpu_of(local * t + i)).collect();
    // every thread of every process of this host, for the in-process costs: when they
    // outnumber the host's CPUs (several processes of T threads on one host, as in the tests),
    // the costs are herald's oversubscribed model, whatever one process's threads alone would be
    let host_cpus: Vec<usize> = (0..local_size * t).map(cpu_of).collect();
    let machine = world.agree_result(
        "topology",
        herald::TopologySource::Machine
            .load()
            .map_err(Error::herald),
    )?;
    let (mpi_cost, mpi_src) =
        world.agree_result("mpi cost", hier::mpi_cost(&mpi_profile, &cluster))?;
    let (thread_cost, thread_src) = world.agree_result(
        "thread cost",
        hier::thread_cost(&thread_profile, &machine, &host_cpus),
    )?;
    world.agree(&format!("costs {mpi_cost} / {thread_cost}"))?;
    let model = hier::model(p, t, mpi_cost, thread_cost)?;
    let choice = hier::choose(&model, a.bytes as u64, a.root)?;
    world.agree(&format!(
        "schedule {} {}",
        choice.chosen.label,
        digest(&choice.schedule)
    ))?;
    let plan = hier::HierPlan::new(&choice.schedule, p, t)?;
    let mut team = herald::Team::builder()
        .cores(cpus.clone())
        .build()
        .map_err(Error::herald)?;
    let mut comm = herald::Comm::new(t).map_err(Error::herald)?;
    let mut chan = world.channel()?;
    let root = a.root as usize;
    let verify = a.verify;
    let (times, ok) = hier::run(
        &plan,
        &mut team,
        &mut comm,
        &mut chan,
        a.bytes,
        a.iters,
        |i, buf| payload(buf, i as u64 + 1),
        |i, buf| {
            if !verify {
                return true;
            }
            let mut want = vec![0u8; buf.len()];
            payload(&mut want, i as u64 + 1);
            buf == &want[..]
        },
    )
    .map_err(Failure::Here)?;
    if any_rank(world, !ok) {
        return Err(Failure::Everywhere(Error::Verify(format!(
            "a rank received wrong bytes (this process: {})",
            if ok { "all right" } else { "wrong" }
        ))));
    }
    let times = max_over_ranks(world, &times);
    let Some(spread) = Spread::of(&times) else {
        return Ok(());
    };
    if world.rank() != 0 {
        return Ok(());
    }
    let predicted = choice.chosen.makespan.to_f64();
    let times = TimesNs::of(&spread);
    if a.json {
        let out = HierRunJson {
            hierarchical: true,
            processes: p,
            threads: t,
            blocks: choice.chosen.blocks,
            overall_best: choice.overall.as_ref().map(|c| c.label.clone()),
            overall_best_ns: choice.overall.as_ref().map(|c| c.makespan.to_f64()),
            mpi_cost: model.levels()[0].cost.map(|c| c.to_string()),
            mpi_cost_source: mpi_src,
            thread_cost: model.levels()[1].cost.map(|c| c.to_string()),
            thread_cost_source: thread_src,
            predicted_ns: predicted,
            measured_over_predicted: times.median_ns / predicted,
            run: RunJson {
                collective: "broadcast",
                algorithm: choice.chosen.label.clone(),
                n,
                root: a.root,
                bytes: a.bytes,
                iters: a.iters,
                verified: verify,
                library: world.library().to_owned(),
                times,
            },
        };
        print_json(&out)?;
    } else {
        println!(
            "hierarchical broadcast of {} bytes: {p} processes × {t} threads = {n} ranks, root {root}, \
             {} iterations{}",
            a.bytes,
            a.iters,
            if verify { ", every byte verified" } else { "" }
        );
        if let Some(c) = model.levels()[0].cost {
            println!(
                "  between processes (MPI, {}): {c} ns — {mpi_src}",
                world.library()
            );
        }
        if let Some(c) = model.levels()[1].cost {
            println!("  between threads (herald in process): {c} ns — {thread_src}");
        }
        println!(
            "  herald's choice with the node split: {} with {} block(s), predicted {:.0} ns",
            choice.chosen.label, choice.chosen.blocks, predicted
        );
        if let Some(o) = &choice.overall {
            println!(
                "  (the planner's overall best is {} at {:.0} ns, which does not split at the node)",
                o.label,
                o.makespan.to_f64()
            );
        }
        println!(
            "time per broadcast (slowest rank): median {:?}, p10 {:?}, p90 {:?}; measured/predicted = {:.2}",
            spread.median,
            spread.p10,
            spread.p90,
            times.median_ns / predicted
        );
    }
    Ok(())
}

/// A short digest of a schedule's sends (FNV-1a).
pub(crate) fn digest(s: &Schedule) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    eat(u64::from(s.n()));
    for x in s.sends() {
        eat(x.at);
        eat(u64::from(x.from));
        eat(u64::from(x.to));
        eat(u64::from(x.what));
    }
    format!("{:016x}/{}", h, s.len())
}

/// Whether any rank saw a wrong byte, `mine` this rank's answer (collective).
fn any_rank(world: &World, mine: bool) -> bool {
    let mut any = 0u8;
    world.bounded("MPI_Allreduce (whether any rank saw a wrong byte)", |c| {
        c.all_reduce_into(
            &u8::from(mine),
            &mut any,
            mpi::collective::SystemOperation::max(),
        )
    });
    any != 0
}

/// Per iteration, the largest of the ranks' own times (collective).
pub(crate) fn max_over_ranks(world: &World, times: &[Duration]) -> Vec<Duration> {
    let mine: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    let mut all = vec![0f64; mine.len()];
    world.bounded("MPI_Allreduce (the slowest rank's times)", |c| {
        c.all_reduce_into(
            &mine[..],
            &mut all[..],
            mpi::collective::SystemOperation::max(),
        )
    });
    all.into_iter().map(Duration::from_secs_f64).collect()
}
