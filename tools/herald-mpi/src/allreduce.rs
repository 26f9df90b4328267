//! Which allreduce herald runs over MPI: three candidates and their predicted times.
//!
//! The candidates, all on `u64` elements summed (wrapping):
//!
//! * **combining**: herald's allreduce with combining ([`Algorithm::Allreduce`]), whole vectors;
//! * **reduce + broadcast**: herald's optimal reduce to rank 0 ([`Algorithm::Reduce`]), then the
//!   planner's broadcast from rank 0 ([`Cluster::plan`]);
//! * **ring**: reduce-scatter and allgather in pieces of `bytes / n` ([`RingAllreduce`]);
//! * **halving**: reduce-scatter by recursive halving and allgather by recursive doubling
//!   (Rabenseifner's algorithm, [`HalvingAllreduce`]): the ring's bytes in `2 log₂ n` steps.
//!
//! # The prediction
//!
//! Each candidate's *path* is its makespan under the job's flat model: the coarsest level the
//! ranks meet at, or herald's [`oversubscribed_model`](herald::plan::oversubscribed_model)
//! when ranks share PUs (its latency charges the wait for a receiver's turn). With a PU per rank
//! that is the prediction.
//!
//! Every message that a rank adds into its value pays the combine of its bytes, as the profile
//! measured it ([`Profile::combine_ns`](herald::Profile::combine_ns), [`sized`]; LogP's
//! constant 1 ns where the profile has no measurement). A combining allreduce or a
//! reduce adds whole values on its path, recursive halving `m/2 + m/4 + … + m/p`, the ring
//! `(n − 1)/n` of one: without it the candidates looked level at 2 ranks (one exchange of `m`
//! against two of `m/2`), where halving measured 0.50–0.84 of the library's time from 1 MiB and
//! combining 0.82–1.08 (docs/mpi.md, "Twenty-fifth session").
//!
//! When ranks share PUs, the path leaves out that the ranks' work is done by fewer CPUs than
//! ranks: LogP lets the 56 messages of a combining allreduce of 8 ranks run 8 at a time, where 2
//! CPUs run 2. herald then adds the work to the path, as Brent's bound does for a greedy
//! execution on `C` processors (time ≤ work / C + critical path):
//!
//! `predicted = path + W / C`, `W = Σ over messages (send_busy + recv_busy [+ combine]) +
//! messages × turn`,
//!
//! with the busy times of the flat model at each message's size, `C` the PUs the ranks run on,
//! and `turn = switch_ns × (k − 1) / k` for `k = ⌈n / C⌉` ranks per PU: a message's receiver
//! is one of `k` processes of its PU, and unless it is the one running, taking the message costs
//! its PU a switch (the profile's [`switch_ns`](herald::Profile::switch_ns), the one-way handoff
//! between two processes of one CPU). docs/mpi.md ("Fifteenth session") gives the measurements
//! this was checked against; the choice among the first three did not change for turns from a
//! quarter to a whole switch.

use crate::cluster::Cluster;
use crate::error::Error;
use crate::exec::{BroadcastPlan, CombinePlan, CombineScratch, RingAllreduce};
use crate::halving::HalvingAllreduce;
use crate::p2p::Channel;
use herald::{
    generate,
    model::{Hier, LevelCost, Pick},
    Algorithm, CostModel, Model, Profile, Ratio, Request, Schedule,
};

/// herald's allreduces over MPI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AllreduceChoice {
    /// herald's allreduce with combining (`Algorithm::Allreduce`): whole vectors.
    Combining,
    /// herald's optimal reduce to rank 0, then the planner's broadcast from rank 0.
    ReduceBcast,
    /// The ring: reduce-scatter and allgather in pieces of `bytes / n`.
    Ring,
    /// Recursive halving, then recursive doubling (Rabenseifner's algorithm).
    Halving,
}

impl AllreduceChoice {
    /// Every candidate, in the order ties are broken.
    pub const ALL: [AllreduceChoice; 4] = [
        AllreduceChoice::Combining,
        AllreduceChoice::ReduceBcast,
        AllreduceChoice::Ring,
        AllreduceChoice::Halving,
    ];
}

impl std::fmt::Display for AllreduceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AllreduceChoice::Combining => "combining",
            AllreduceChoice::ReduceBcast => "reduce-bcast",
            AllreduceChoice::Ring => "ring",
            AllreduceChoice::Halving => "halving",
        })
    }
}

impl std::str::FromStr for AllreduceChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<AllreduceChoice, Error> {
        match s {
            "combining" | "allreduce" => Ok(AllreduceChoice::Combining),
            "reduce-bcast" | "reduce" => Ok(AllreduceChoice::ReduceBcast),
            "ring" => Ok(AllreduceChoice::Ring),
            "halving" | "rabenseifner" => Ok(AllreduceChoice::Halving),
            _ => Err(Error::Usage(format!(
                "unknown allreduce {s:?} (combining, reduce-bcast, ring, halving)"
            ))),
        }
    }
}

/// How the job's ranks share PUs: `cpus` PUs, at most `per_cpu` ranks on one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedCpus {
    /// The PUs the ranks run on.
    pub cpus: u32,
    /// Ranks per PU, `⌈n / cpus⌉` (≥ 2).
    pub per_cpu: u32,
    /// What a message costs its receiver's PU for the receiver's turn, ns:
    /// `switch_ns × (per_cpu − 1) / per_cpu`.
    pub turn_ns: f64,
}

impl SharedCpus {
    /// `n` ranks on `cpus` PUs with the one-way handoff `switch_ns` between two processes of one
    /// PU; `None` when every rank has a PU of its own.
    ///
    /// ```
    /// use herald_mpi::allreduce::SharedCpus;
    /// assert!(SharedCpus::new(2, 2, 4000.0).is_none());
    /// let s = SharedCpus::new(8, 2, 4000.0).unwrap();
    /// assert_eq!((s.cpus, s.per_cpu, s.turn_ns), (2, 4, 3000.0));
    /// ```
    pub fn new(n: u32, cpus: u32, switch_ns: f64) -> Option<SharedCpus> {
        let cpus = cpus.clamp(1, n.max(1));
        let per_cpu = n.div_ceil(cpus);
        (per_cpu >= 2).then(|| SharedCpus {
            cpus,
            per_cpu,
            turn_ns: switch_ns * f64::from(per_cpu - 1) / f64::from(per_cpu),
        })
    }

    /// How `cluster`'s ranks share its PUs, with the switch time of `profile` (0 if it has
    /// none).
    pub fn of(cluster: &Cluster, profile: &Profile) -> Option<SharedCpus> {
        let switch = profile
            .switch_ns
            .as_ref()
            .map_or(0.0, |d| d.pick(Pick::Dominant));
        SharedCpus::new(
            cluster.rank_pus().len() as u32,
            cluster.pus_used() as u32,
            switch,
        )
    }
}

/// One candidate's prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct AllreduceCandidate {
    /// Which allreduce.
    pub choice: AllreduceChoice,
    /// In words, with its broadcast for reduce + broadcast (`reduce + dtree(17) ×1`).
    pub label: String,
    /// Messages of one allreduce, all ranks together.
    pub messages: u64,
    /// The makespan under the flat model, ns.
    pub path_ns: f64,
    /// The work of all ranks, ns (0 when every rank has a PU of its own).
    pub work_ns: f64,
    /// `path_ns + work_ns / cpus` when ranks share PUs, else `path_ns`.
    pub predicted_ns: f64,
}

/// The four candidates for one job and payload, with their schedules.
#[derive(Debug, Clone)]
pub struct AllreducePlans {
    /// The candidates, in [`AllreduceChoice::ALL`]'s order.
    pub candidates: [AllreduceCandidate; 4],
    /// How the ranks share PUs, if they do.
    pub shared: Option<SharedCpus>,
    /// The flat model the schedules were made under (what [`crate::CombinePlan`] needs).
    pub flat: Model,
    /// The combining allreduce.
    pub combining: Schedule,
    /// The reduce to rank 0.
    pub reduce: Schedule,
    /// The broadcast from rank 0 that follows it.
    pub bcast: Schedule,
    /// The ring.
    pub ring: RingAllreduce,
    /// Recursive halving and doubling.
    pub halving: HalvingAllreduce,
}

impl AllreducePlans {
    /// The candidates for an allreduce of `bytes` among `cluster`'s ranks under `profile`.
    ///
    /// # Errors
    /// [`Error::Herald`] if the profile cannot make a model of the job or a schedule fails.
    pub fn new(cluster: &Cluster, profile: &Profile, bytes: u64) -> Result<AllreducePlans, Error> {
        let n = cluster.rank_pus().len() as u32;
        let cost = |b: u64| combine_cost(profile, b);
        let flat = combine_model(cluster, profile, bytes)?;
        let shared = SharedCpus::of(cluster, profile);
        let make = |a: Algorithm| {
            let s = generate(&Request::broadcast(a, n, 1, 0), &flat).map_err(Error::herald)?;
            let r = herald::check(&s, &flat).map_err(Error::herald)?;
            Ok::<_, Error>((r.base().to_f64(r.makespan()), s))
        };
        let (t_all, combining) = make(Algorithm::Allreduce)?;
        let (t_red, reduce) = make(Algorithm::Reduce)?;
        let (bcast, bc, _) = cluster.plan(profile, bytes, 0)?;
        let ring = RingAllreduce::new(n as usize)?;
        let t_ring = ring.predicted(&flat, bytes, &cost)?;
        let halving = HalvingAllreduce::new(n as usize)?;
        let t_halving = halving.predicted(&flat, bytes, &cost)?;
        let halving_groups = halving
            .messages(bytes)
            .iter()
            .map(|g| {
                let busy = busy_ns(&flat, g.bytes.max(1), &cost)?;
                let each = if g.combine {
                    busy.combining()
                } else {
                    busy.plain()
                };
                Ok((g.count, each))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let chunk = bytes.div_ceil(u64::from(n)).max(1);
        let whole = busy_ns(&flat, bytes.max(1), &cost)?;
        let ring_msg = busy_ns(&flat, chunk, &cost)?;
        let bcast_msg = busy_ns(&flat, bc.block_bytes.max(1), &cost)?;
        let ring_messages = 2 * u64::from(n) * u64::from(n - 1);
        let parts = [
            (
                AllreduceChoice::Combining,
                format!("allreduce, {} sends", combining.len()),
                t_all,
                vec![(combining.len() as u64, whole.combining())],
            ),
            (
                AllreduceChoice::ReduceBcast,
                format!("reduce + {} ×{}", bc.label, bc.blocks),
                t_red + bc.makespan.to_f64(),
                vec![
                    (reduce.len() as u64, whole.combining()),
                    (bcast.len() as u64, bcast_msg.plain()),
                ],
            ),
            (
                AllreduceChoice::Ring,
                "ring".to_string(),
                t_ring,
                vec![
                    (ring_messages / 2, ring_msg.combining()),
                    (ring_messages / 2, ring_msg.plain()),
                ],
            ),
            (
                AllreduceChoice::Halving,
                halving_label(&halving),
                t_halving,
                halving_groups,
            ),
        ];
        let candidates = parts.map(|(choice, label, path_ns, groups)| {
            predict(choice, label, path_ns, &groups, shared)
        });
        Ok(AllreducePlans {
            candidates,
            shared,
            flat,
            combining,
            reduce,
            bcast,
            ring,
            halving,
        })
    }

    /// The candidate predicted fastest (the first of [`AllreduceChoice::ALL`] on a tie).
    pub fn best(&self) -> AllreduceChoice {
        let mut best = &self.candidates[0];
        for c in &self.candidates[1..] {
            if c.predicted_ns < best.predicted_ns {
                best = c;
            }
        }
        best.choice
    }

    /// `choice`, ready to run.
    ///
    /// # Errors
    /// [`Error::Herald`] if a schedule does not compile.
    pub fn runner(&self, choice: AllreduceChoice) -> Result<AllreduceRun, Error> {
        Ok(match choice {
            AllreduceChoice::Combining => {
                AllreduceRun::Combining(CombinePlan::new(&self.combining, &self.flat)?)
            }
            AllreduceChoice::ReduceBcast => AllreduceRun::ReduceBcast(Box::new((
                CombinePlan::new(&self.reduce, &self.flat)?,
                BroadcastPlan::new(&self.bcast)?,
            ))),
            AllreduceChoice::Ring => AllreduceRun::Ring(self.ring),
            AllreduceChoice::Halving => AllreduceRun::Halving(self.halving),
        })
    }

    /// The prediction of `choice`.
    pub fn candidate(&self, choice: AllreduceChoice) -> &AllreduceCandidate {
        let i = AllreduceChoice::ALL
            .iter()
            .position(|&c| c == choice)
            .expect("every choice is a candidate");
        &self.candidates[i]
    }

    /// `choice`'s label with every candidate's prediction in µs, `choice` first:
    /// `reduce + dtree(17) ×1 (31.0 µs; combining 79.5, ring 200.1)`.
    pub fn label(&self, choice: AllreduceChoice) -> String {
        let c = self.candidate(choice);
        let others: Vec<String> = self
            .candidates
            .iter()
            .filter(|o| o.choice != choice)
            .map(|o| format!("{} {:.1}", o.choice, o.predicted_ns / 1e3))
            .collect();
        format!(
            "{} ({:.1} µs; {})",
            c.label,
            c.predicted_ns / 1e3,
            others.join(", ")
        )
    }
}

/// One of herald's allreduces over MPI, ready to run ([`AllreducePlans::runner`]).
#[derive(Debug, Clone)]
pub enum AllreduceRun {
    /// herald's allreduce with combining.
    Combining(CombinePlan),
    /// A reduce to rank 0, then a broadcast from rank 0.
    ReduceBcast(Box<(CombinePlan, BroadcastPlan)>),
    /// The ring: reduce-scatter, then allgather.
    Ring(RingAllreduce),
    /// Recursive halving, then recursive doubling.
    Halving(HalvingAllreduce),
}

impl AllreduceRun {
    /// Sums `value` element-wise (wrapping) over every rank of `chan`; collective, every rank
    /// with the same length and the same run.
    ///
    /// # Errors
    /// As [`BroadcastPlan::run`].
    pub fn run(
        &self,
        chan: &Channel,
        scratch: &mut CombineScratch,
        value: &mut Vec<u64>,
    ) -> Result<(), Error> {
        match self {
            AllreduceRun::Combining(plan) => plan.run(chan, scratch, value),
            AllreduceRun::ReduceBcast(two) => {
                two.0.run(chan, scratch, value)?;
                two.1.run(chan, bytemuck::cast_slice_mut(&mut value[..]))
            }
            AllreduceRun::Ring(ring) => ring.run(chan, scratch, value),
            AllreduceRun::Halving(h) => h.run(chan, scratch, value),
        }
    }
}

/// `halving`, or `halving, fold 2` where ranks fold in pairs first.
fn halving_label(h: &HalvingAllreduce) -> String {
    match h.n() - h.participants() {
        0 => "halving".to_string(),
        r => format!("halving, fold {r}"),
    }
}

/// A message's busy time at its sender and receiver, ns, and its receiver's combine.
#[derive(Debug, Clone, Copy)]
struct Busy {
    send_recv: f64,
    combine: f64,
}

impl Busy {
    fn plain(self) -> f64 {
        self.send_recv
    }
    fn combining(self) -> f64 {
        self.send_recv + self.combine
    }
}

fn busy_ns(flat: &Model, bytes: u64, combine: &dyn Fn(u64) -> f64) -> Result<Busy, Error> {
    let m = sized(flat, bytes, combine(bytes))?;
    let base = m.time_base().map_err(Error::herald)?;
    let t = m.timing(base).map_err(Error::herald)?;
    Ok(Busy {
        send_recv: base.to_f64(t.send_busy + t.recv_busy),
        combine: base.to_f64(t.combine),
    })
}

/// One message's latency of `bytes` under a flat `model`, with the receiver's combine (`combine`
/// of the bytes, ns) if there is one, ns.
pub(crate) fn message_ns(
    model: &Model,
    bytes: u64,
    combine: Option<&dyn Fn(u64) -> f64>,
) -> Result<f64, Error> {
    if let Model::Hier(_) = model {
        return Err(Error::Usage(
            "the ring and recursive halving are predicted under a flat model (postal, logp)".into(),
        ));
    }
    let combine_ns = combine.map_or(0.0, |c| c(bytes));
    let model = sized(model, bytes, combine_ns)?;
    let base = model.time_base().map_err(Error::herald)?;
    let t = model.timing(base).map_err(Error::herald)?;
    let ticks = if combine.is_some() {
        t.combining().latency
    } else {
        t.latency
    };
    Ok(base.to_f64(ticks))
}

/// `path + W / C` (see the module docs) for message groups `(count, busy ns per message)`.
fn predict(
    choice: AllreduceChoice,
    label: String,
    path_ns: f64,
    groups: &[(u64, f64)],
    shared: Option<SharedCpus>,
) -> AllreduceCandidate {
    let messages: u64 = groups.iter().map(|&(k, _)| k).sum();
    let (work_ns, predicted_ns) = match shared {
        Some(s) => {
            let w: f64 = groups
                .iter()
                .map(|&(k, busy)| k as f64 * (busy + s.turn_ns))
                .sum();
            (w, path_ns + w / f64::from(s.cpus))
        }
        None => (0.0, path_ns),
    };
    AllreduceCandidate {
        choice,
        label,
        messages,
        path_ns,
        work_ns,
        predicted_ns,
    }
}

/// The model herald generates a reduce or an allreduce of `bytes` under, among `cluster`'s
/// ranks with `profile`'s costs: the flat model of the coarsest level the ranks meet at
/// ([`Cluster::model`]; herald's oversubscribed model where ranks share PUs), for messages of
/// `bytes` whose combine takes what the profile measured for that size ([`sized`],
/// [`Profile::combine_ns`]). The candidates of [`AllreducePlans`] are generated and predicted
/// under it, and so is `herald-mpi run --algo reduce|allreduce --profile P`.
///
/// # Errors
/// As [`Cluster::model`], and [`Error::Herald`] if the model rejects the size.
pub fn combine_model(cluster: &Cluster, profile: &Profile, bytes: u64) -> Result<Model, Error> {
    let n = cluster.rank_pus().len() as u32;
    let model = cluster.model(profile, &herald::model::Assumptions::default())?;
    flat_model(&model, n, bytes, combine_cost(profile, bytes))
}

/// The combine of `bytes` (at least 1) as `profile` measured it, ns; 0 where it has no
/// measurement (then [`sized`] keeps LogP's constant).
fn combine_cost(profile: &Profile, bytes: u64) -> f64 {
    profile
        .combine_ns(bytes.max(1), Pick::Dominant)
        .unwrap_or(0.0)
}

/// herald's flat model for an allreduce of `bytes` among `n` ranks: the costs of the coarsest
/// level ranks meet at, with messages of `bytes` whose combine takes `combine_ns` ([`sized`]).
fn flat_model(model: &Model, n: u32, bytes: u64, combine_ns: f64) -> Result<Model, Error> {
    let flat = match model {
        Model::Hier(h) => coarsest(h, n)?,
        m => m.clone(),
    };
    sized(&flat, bytes, combine_ns)
}

/// A flat LogP `model` for messages of `bytes` (at least 1) whose combine takes `combine_ns`,
/// in whole ns, at least 1 (LogP's default): herald's models charge combining a constant, an
/// allreduce adds every byte it receives. Other models are returned as they are.
///
/// # Errors
/// [`Error::Herald`] if the model rejects the size.
pub fn sized(model: &Model, bytes: u64, combine_ns: f64) -> Result<Model, Error> {
    Ok(match model {
        Model::LogP(l) => {
            let bytes = bytes.max(1);
            let ns = combine_ns.round();
            let combine = Ratio::integer(if ns >= 1.0 { ns as u64 } else { 1 });
            Model::from(
                l.with_bytes(bytes)
                    .map_err(Error::herald)?
                    .with_combine(combine),
            )
        }
        m => m.clone(),
    })
}

fn coarsest(h: &Hier, n: u32) -> Result<Model, Error> {
    let used = h.used_levels(n);
    let d = used
        .iter()
        .position(|&u| u)
        .ok_or_else(|| Error::Herald("no level is used".into()))?;
    match h.levels()[d].cost {
        Some(LevelCost::LogP(l)) => Ok(Model::from(l)),
        Some(LevelCost::Postal(p)) => Ok(Model::from(p)),
        None => Err(Error::Herald(format!("level {d} has no costs"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RankPlace;
    use herald::topology::parse_synthetic;

    /// `n` ranks on the 2 PUs of one host, rank `r` on PU `r mod 2`, under the test profile of
    /// a 2-core machine with its switch time set to `switch_ns`.
    fn job(n: usize, switch_ns: f64) -> (Cluster, Profile) {
        let machine = parse_synthetic("l3:1 core:2 pu:1").unwrap();
        let places: Vec<RankPlace> = (0..n)
            .map(|r| RankPlace {
                host: "h".into(),
                cpu: Some(r % 2),
                local_rank: r,
            })
            .collect();
        let cluster = Cluster::new(&places, &[machine]).unwrap();
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/profile-2core.json"
        ))
        .unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let d = serde_json::json!({ "median": switch_ns, "p10": switch_ns, "p90": switch_ns,
            "samples": 10, "modes": [{ "center": switch_ns, "p10": switch_ns, "p90": switch_ns,
            "share": 1.0, "samples": 10 }], "settled": true });
        v["switch_ns"] = d;
        let profile = Profile::from_json_forced(&v.to_string()).unwrap();
        (cluster, profile)
    }

    /// A posted allreduce where the profile measured it faster at that size and rank count,
    /// and only where every rank is on one host; broadcasts are decided by their own points.
    #[test]
    fn posting_follows_the_profiles_points_on_one_host() {
        let (cluster, mut profile) = job(2, 800.0);
        let ns = |v: f64| {
            serde_json::from_value(serde_json::json!({ "median": v, "p10": v, "p90": v,
                "samples": 1, "modes": [{ "center": v, "p10": v, "p90": v, "share": 1.0,
                "samples": 1 }], "settled": true }))
            .unwrap()
        };
        let at = |bytes: u64, posted: f64, other: f64| herald::model::PostedPoint {
            ranks: 2,
            bytes,
            posted_ns: ns(posted),
            tree_ns: ns(other),
            tree: "ring".into(),
            posted_one_ns: None,
            tree_one_ns: None,
        };
        profile.posted_allreduce = vec![at(8, 100.0, 300.0), at(1 << 20, 2e5, 1e5)];
        assert!(cluster.posts_allreduce(&profile, 8));
        // linear between the points: 294 against 397 ns at 1 KiB, 880 against 689 at 4 KiB
        assert!(cluster.posts_allreduce(&profile, 1024));
        assert!(!cluster.posts_allreduce(&profile, 4096));
        assert!(!cluster.posts_allreduce(&profile, 1 << 20));
        assert!(!cluster.posts(&profile, 8), "no broadcast points");
        let (four, _) = job(4, 800.0);
        assert!(
            !four.posts_allreduce(&profile, 8),
            "measured at 2 ranks only"
        );
        let machine = parse_synthetic("l3:1 core:2 pu:1").unwrap();
        let places: Vec<RankPlace> = ["a", "b"]
            .iter()
            .map(|h| RankPlace {
                host: (*h).into(),
                cpu: Some(0),
                local_rank: 0,
            })
            .collect();
        let two_hosts = Cluster::new(&places, &[machine.clone(), machine]).unwrap();
        assert!(
            !two_hosts.posts_allreduce(&profile, 8),
            "no window spans hosts"
        );
    }

    #[test]
    fn with_a_pu_per_rank_the_prediction_is_the_path() {
        let (cluster, profile) = job(2, 800.0);
        for bytes in [8, 4096, 1 << 20] {
            let p = AllreducePlans::new(&cluster, &profile, bytes).unwrap();
            assert!(p.shared.is_none());
            for c in &p.candidates {
                assert_eq!((c.work_ns, c.predicted_ns), (0.0, c.path_ns), "{c:?}");
            }
            // the combining allreduce's path is its simulated makespan, checked again here
            let r = herald::check(&p.combining, &p.flat).unwrap();
            let want = r.base().to_f64(r.makespan());
            assert_eq!(p.candidate(AllreduceChoice::Combining).path_ns, want);
        }
    }

    /// With ranks sharing PUs, a longer switch adds `(k − 1) / k` of it per message to the work
    /// (of the candidates whose schedule it leaves alone: it also lengthens the latency), and
    /// the work over the PUs to the prediction; the message counts are those of the
    /// algorithms: a reduce and a one-block broadcast send `n − 1` messages each, a ring
    /// `2 n (n − 1)`.
    #[test]
    fn sharing_pus_charges_every_message_its_receiver_s_turn() {
        let n = 8u64;
        for bytes in [8u64, 512, 4096] {
            let (cluster, slow) = job(n as usize, 5000.0);
            let (_, fast) = job(n as usize, 1000.0);
            let a = AllreducePlans::new(&cluster, &slow, bytes).unwrap();
            let b = AllreducePlans::new(&cluster, &fast, bytes).unwrap();
            let s = a.shared.unwrap();
            assert_eq!((s.cpus, s.per_cpu), (2, 4));
            let same = a.candidates.iter().zip(&b.candidates);
            let mut compared = 0;
            for (x, y) in same.filter(|(x, y)| x.label == y.label && x.messages == y.messages) {
                let turns = (x.work_ns - y.work_ns) / (4000.0 * 3.0 / 4.0);
                assert!((turns - x.messages as f64).abs() < 1e-6, "{x:?} {y:?}");
                compared += 1;
            }
            assert!(
                compared >= 1,
                "the ring's messages do not depend on the latency"
            );
            for x in &a.candidates {
                let over = x.predicted_ns - x.path_ns;
                assert!((over - x.work_ns / 2.0).abs() < 1e-6 * x.work_ns, "{x:?}");
            }
            assert_eq!(a.candidate(AllreduceChoice::Ring).messages, 2 * n * (n - 1));
            // 8 ranks halve and double in 3 steps each, every rank sending once per step
            assert_eq!(a.candidate(AllreduceChoice::Halving).messages, 2 * n * 3);
            assert_eq!(
                a.candidate(AllreduceChoice::Combining).messages,
                a.combining.len() as u64
            );
            if a.bcast.len() as u64 == n - 1 {
                assert_eq!(
                    a.candidate(AllreduceChoice::ReduceBcast).messages,
                    2 * (n - 1)
                );
            }
        }
    }

    /// When turns dominate, the candidate with the fewest messages wins; without sharing the
    /// shortest path does.
    #[test]
    fn the_choice_follows_the_messages_when_turns_dominate() {
        let (cluster, profile) = job(8, 1e7);
        let p = AllreducePlans::new(&cluster, &profile, 64).unwrap();
        let fewest = p.candidates.iter().min_by_key(|c| c.messages).unwrap();
        assert_eq!(p.best(), fewest.choice);
        let (cluster, profile) = job(2, 1e7);
        let p = AllreducePlans::new(&cluster, &profile, 64).unwrap();
        let shortest = p
            .candidates
            .iter()
            .min_by(|a, b| a.path_ns.total_cmp(&b.path_ns))
            .unwrap();
        assert_eq!(p.candidate(p.best()).path_ns, shortest.path_ns);
    }

    /// `sized` charges the combine it is given, rounded to whole ns and at least LogP's default
    /// of 1; without a measurement the model is the one before herald measured combines.
    #[test]
    fn the_combine_is_charged_as_given() {
        let (cluster, profile) = job(2, 800.0);
        assert!(profile.combine_ns.is_empty());
        let model = cluster
            .model(&profile, &herald::model::Assumptions::default())
            .unwrap();
        let flat = flat_model(&model, 2, 8, 0.0).unwrap();
        let Model::LogP(l) = &flat else {
            panic!("a flat LogP model")
        };
        assert_eq!(l.combine(), Ratio::ONE);
        for (bytes, ns, want) in [
            (8u64, 0.0, 1u64),
            (8, 0.4, 1),
            (1 << 20, 262_143.6, 1 << 18),
        ] {
            let Model::LogP(s) = sized(&flat, bytes, ns).unwrap() else {
                panic!("still LogP")
            };
            assert_eq!((s.bytes(), s.combine()), (bytes, Ratio::integer(want)));
        }
        assert_eq!(sized(&flat, 0, 5.0).unwrap(), sized(&flat, 1, 5.0).unwrap());
    }

    /// With combines measured at `c` ns per byte, recursive halving's prediction grows by what
    /// its path combines: `c` times `m/2 + m/4 + … + m/p` (each rank adds its partner's half of
    /// its window in every halving step, and nothing in the doubling steps); the combining
    /// allreduce's by at least `c · m`, since every rank adds at least one whole value before
    /// it has the sum.
    #[test]
    fn measured_combines_lengthen_the_paths_by_the_bytes_they_add() {
        let rate = 0.5;
        for n in [2usize, 4, 8] {
            let (cluster, mut profile) = job(n, 800.0);
            let bytes = 1u64 << 20;
            let before = AllreducePlans::new(&cluster, &profile, bytes).unwrap();
            // one point: linear from 0, the same rate beyond
            let ns = rate * bytes as f64;
            let point = serde_json::json!({ "bytes": bytes, "ns": { "median": ns, "p10": ns,
                "p90": ns, "samples": 10, "modes": [{ "center": ns, "p10": ns, "p90": ns,
                "share": 1.0, "samples": 10 }], "settled": true } });
            profile.combine_ns = vec![serde_json::from_value(point).unwrap()];
            let after = AllreducePlans::new(&cluster, &profile, bytes).unwrap();
            let path = |p: &AllreducePlans, c| p.candidate(c).path_ns;
            let added: u64 = (1..=n.trailing_zeros())
                .map(|s| ((bytes >> s) as f64 * rate).round() as u64 - 1)
                .sum();
            let grew =
                path(&after, AllreduceChoice::Halving) - path(&before, AllreduceChoice::Halving);
            assert!(
                (grew - added as f64).abs() < 1e-6,
                "n = {n}: {grew} against {added}"
            );
            let grew = path(&after, AllreduceChoice::Combining)
                - path(&before, AllreduceChoice::Combining);
            assert!(grew >= bytes as f64 * rate - 1.0, "n = {n}: {grew}");
        }
    }

    #[test]
    fn choices_parse_and_print() {
        for c in AllreduceChoice::ALL {
            assert_eq!(c.to_string().parse::<AllreduceChoice>().unwrap(), c);
        }
        assert!(matches!(
            "tree".parse::<AllreduceChoice>(),
            Err(Error::Usage(_))
        ));
    }
}
