//! The job as a hierarchy: hosts, then each host's own levels (hwloc), with every rank on a PU.
//!
//! herald's [`Hierarchy`] describes one machine; a job spans hosts. The *cluster hierarchy*
//! puts every host's hierarchy under one root: its PUs get global OS indices `host · stride +
//! os` (`stride` = one more than the largest OS index on any host), each host's levels keep
//! their kinds, and a `group` level holds one node per host (herald drops it where it
//! coincides with another level, e.g. the `package` of single-socket hosts). Two ranks on
//! different hosts therefore meet at the root, `machine` — the network level — and ranks of one
//! host meet where hwloc says their CPUs do (`l3`, `package`, `group` for two sockets, …).
//!
//! A calibrated MPI profile ([`crate::calibrate`]) names its levels the same way, so herald's
//! hierarchical model ([`Hier::from_profile`]) and planner apply unchanged. When ranks
//! outnumber the PUs they run on (two ranks share one), the model is herald's
//! [`oversubscribed_model`]: the coarsest measured level, with the latency raised by the
//! profile's handoff time between two processes of one CPU, and every message longer than the
//! level's cut ones (above the library's eager limit: a single-copy rendezvous) copied by its
//! receiver ([`LongMessages::ReceiverCopies`](herald::model::LongMessages::ReceiverCopies)).

use crate::error::Error;
use crate::p2p::{Channel, Pieces};
use crate::world::{RankPlace, World};
use herald::{
    model::{Assumptions, Hier, LevelKind},
    plan,
    plan::{oversubscribed_model, schedule_of, Candidate},
    Hierarchy, Model, PlanRequest, Profile, Schedule, TopologySource,
};
use mpi::collective::CommunicatorCollectives;
use mpi::datatype::PartitionMut;

/// A level's kind and, for hwloc `group` levels, which one of a host's (1, 2, …; 0 for others).
type LevelKey = (LevelKind, usize);
/// A level's nodes, as lists of PUs.
type Groups = Vec<Vec<usize>>;

/// The job's hosts and where every rank runs on them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    hierarchy: Hierarchy,
    hosts: Vec<String>,
    host_of: Vec<usize>,
    rank_pus: Vec<usize>,
}

impl Cluster {
    /// Builds the cluster hierarchy from every rank's placement and each host's hierarchy
    /// (`machines[h]` for `hosts[h]`, hosts numbered in order of their first rank).
    ///
    /// # Errors
    /// [`Error::Usage`] if a rank has no CPU or a CPU its host does not have; [`Error::Herald`]
    /// if the hosts' levels do not fit together (hosts of different kinds).
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{model::LevelKind, topology::parse_synthetic};
    /// use herald_mpi::{Cluster, RankPlace};
    /// let machine = parse_synthetic("pack:2 l3:1 core:4 pu:1")?;
    /// let at = |host: &str, cpu| RankPlace { host: host.into(), cpu: Some(cpu), local_rank: 0 };
    /// let places = [at("a", 0), at("a", 5), at("b", 0)];
    /// let c = Cluster::new(&places, &[machine.clone(), machine])?;
    /// let h = c.hierarchy();
    /// let level = |r0: usize, r1: usize| h.level(h.lca_level(h.pu_of_os(c.rank_pus()[r0]).unwrap(),
    ///                                                      h.pu_of_os(c.rank_pus()[r1]).unwrap())).kind();
    /// assert_eq!(level(0, 2), LevelKind::Machine); // two hosts: the network
    /// // two sockets of host a meet at the host, which this synthetic machine calls its one
    /// // NUMA node (so herald drops the `group` level of hosts, which coincides with it)
    /// assert_eq!(level(0, 1), LevelKind::Numa);
    /// assert_eq!(level(0, 0), LevelKind::Pu);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(places: &[RankPlace], machines: &[Hierarchy]) -> Result<Cluster, Error> {
        let mut hosts: Vec<String> = Vec::new();
        let host_of: Vec<usize> = places
            .iter()
            .map(|p| match hosts.iter().position(|h| *h == p.host) {
                Some(i) => i,
                None => {
                    hosts.push(p.host.clone());
                    hosts.len() - 1
                }
            })
            .collect();
        if machines.len() != hosts.len() {
            return Err(Error::Usage(format!(
                "{} hosts but {} host hierarchies",
                hosts.len(),
                machines.len()
            )));
        }
        let stride = machines
            .iter()
            .flat_map(|m| m.os_indices().iter().copied())
            .max()
            .map_or(1, |m| m + 1);
        let mut pus = Vec::new();
        // Levels merged across hosts by kind (the i-th hwloc `group` level of each host with
        // the i-th of the others), then one `group` node per host.
        let mut merged: Vec<(LevelKey, Groups)> = Vec::new();
        let mut per_host: Vec<Vec<usize>> = Vec::new();
        for (h, m) in machines.iter().enumerate() {
            let global = |pu: usize| h * stride + m.os_index(pu);
            pus.extend((0..m.pu_count()).map(global));
            let mut groups_seen = 0;
            for d in 1..m.pu_level() {
                let level = m.level(d);
                let key = if level.kind() == LevelKind::Group {
                    groups_seen += 1;
                    (LevelKind::Group, groups_seen)
                } else {
                    (level.kind(), 0)
                };
                let nodes = level
                    .nodes()
                    .iter()
                    .map(|node| node.pus().map(global).collect());
                match merged.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, g)) => g.extend(nodes),
                    None => merged.push((key, nodes.collect())),
                }
            }
            per_host.push((0..m.pu_count()).map(global).collect());
        }
        let mut merged: Vec<(LevelKind, Groups)> =
            merged.into_iter().map(|((k, _), g)| (k, g)).collect();
        merged.push((LevelKind::Group, per_host));
        let hierarchy = Hierarchy::new(&pus, merged).map_err(|e| {
            Error::Herald(format!(
                "the hosts' topologies do not form one hierarchy ({e}); herald-mpi needs hosts of \
                 the same kind"
            ))
        })?;
        let rank_pus = places
            .iter()
            .zip(&host_of)
            .enumerate()
            .map(|(r, (p, &h))| {
                let cpu = p.cpu.ok_or_else(|| {
                    Error::Usage(format!(
                        "rank {r} does not run on one CPU (pinning is off?)"
                    ))
                })?;
                let os = h * stride + cpu;
                hierarchy.pu_of_os(os).map(|_| os).ok_or_else(|| {
                    Error::Usage(format!(
                        "rank {r} runs on CPU {cpu}, which host {} lacks",
                        p.host
                    ))
                })
            })
            .collect::<Result<Vec<usize>, Error>>()?;
        Ok(Cluster {
            hierarchy,
            hosts,
            host_of,
            rank_pus,
        })
    }

    /// Gathers every rank's placement and host topology (collective: every rank calls it).
    ///
    /// # Errors
    /// As [`Cluster::new`]; [`Error::Herald`] if this host's topology cannot be read.
    pub fn gather(world: &World) -> Result<Cluster, Error> {
        let places = world.placements();
        let mine = TopologySource::Machine.load().map_err(Error::herald)?;
        let text = serde_json::to_vec(&mine).map_err(Error::herald)?;
        let len = i32::try_from(text.len()).map_err(Error::herald)?;
        let mut lens = vec![0i32; world.size()];
        world.bounded("MPI_Allgather (the topologies' lengths)", |c| {
            c.all_gather_into(&len, &mut lens[..])
        });
        let displs: Vec<i32> = lens
            .iter()
            .scan(0i32, |at, &l| {
                let d = *at;
                *at += l;
                Some(d)
            })
            .collect();
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
            world.bounded("MPI_Allgatherv (the hosts' topologies)", |c| {
                c.all_gather_varcount_into(&text[..], &mut part)
            });
        }
        let mut machines: Vec<Hierarchy> = Vec::new();
        let mut hosts: Vec<&str> = Vec::new();
        for (r, p) in places.iter().enumerate() {
            if hosts.contains(&p.host.as_str()) {
                continue;
            }
            hosts.push(&p.host);
            let (d, l) = (displs[r] as usize, lens[r] as usize);
            let h: Hierarchy = serde_json::from_slice(&all[d..d + l]).map_err(Error::herald)?;
            machines.push(h);
        }
        Cluster::new(&places, &machines)
    }

    /// The cluster hierarchy.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// The hosts, in order of their first rank.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The job's ranks.
    pub fn ranks(&self) -> usize {
        self.rank_pus.len()
    }

    /// Each rank's host index.
    pub fn host_of(&self) -> &[usize] {
        &self.host_of
    }

    /// Each rank's PU, as a global OS index of the cluster hierarchy.
    pub fn rank_pus(&self) -> &[usize] {
        &self.rank_pus
    }

    /// The number of distinct PUs the ranks run on.
    pub fn pus_used(&self) -> usize {
        let mut v = self.rank_pus.clone();
        v.sort_unstable();
        v.dedup();
        v.len()
    }

    /// Whether two ranks share a PU.
    pub fn oversubscribed(&self) -> bool {
        self.pus_used() < self.rank_pus.len()
    }

    /// The level two ranks meet at (depth in the cluster hierarchy).
    pub fn level_of(&self, a: usize, b: usize) -> usize {
        let pu = |r: usize| self.hierarchy.pu_of_os(self.rank_pus[r]).unwrap_or(0);
        self.hierarchy.lca_level(pu(a), pu(b))
    }

    /// Sets on `chan` how this rank's messages to each peer are cut: the
    /// [`pieces`](herald::model::LevelProfile::pieces) `profile` measured at the level the two
    /// ranks meet at (whole messages where it measured none). Every rank must call it with the
    /// same profile (the two ends of a message cut it alike).
    pub fn apply_pieces(&self, chan: &Channel, profile: &Profile) {
        let me = chan.rank();
        for peer in (0..self.rank_pus.len()).filter(|&p| p != me) {
            let d = self.level_of(me, peer);
            let pieces = profile
                .levels
                .iter()
                .find(|l| l.depth == d)
                .and_then(|l| l.pieces.as_ref())
                .and_then(Pieces::of);
            chan.set_pieces(peer, pieces);
        }
    }

    /// herald's model of the job under `profile` (see the module docs).
    ///
    /// # Errors
    /// [`Error::Herald`] if the profile cannot make a model of the job (a level ranks meet at
    /// that the profile did not measure and no finer measured level can stand for).
    pub fn model(&self, profile: &Profile, assume: &Assumptions) -> Result<Model, Error> {
        let n = self.rank_pus.len() as u32;
        if self.oversubscribed() {
            return oversubscribed_model(profile, &self.hierarchy, n).map_err(Error::herald);
        }
        Hier::from_profile(profile, self.hierarchy.clone(), &self.rank_pus, assume)
            .map(Model::from)
            .map_err(Error::herald)
    }

    /// Whether this job posts a broadcast of `bytes` in a shared window ([`crate::Post`])
    /// rather than sending it along the planner's tree: every rank is on one host and
    /// `profile` measured posting faster at this size for this many ranks
    /// ([`Profile::posted_wins`]).
    pub fn posts(&self, profile: &Profile, bytes: u64) -> bool {
        self.hosts.len() == 1
            && profile.posted_wins(self.rank_pus.len() as u32, bytes) == Some(true)
    }

    /// Whether this job posts an allreduce of `bytes` in a shared window ([`crate::Post`])
    /// rather than running the allreduce herald-mpi predicts fastest over MPI: every rank is
    /// on one host and `profile` measured posting faster at this size for this many ranks
    /// ([`Profile::posted_allreduce_wins`]).
    pub fn posts_allreduce(&self, profile: &Profile, bytes: u64) -> bool {
        self.hosts.len() == 1
            && profile.posted_allreduce_wins(self.rank_pus.len() as u32, bytes) == Some(true)
    }

    /// herald's planner's broadcast for this job: the schedule of the best candidate.
    ///
    /// # Errors
    /// As [`Cluster::model`], and [`Error::Herald`] if planning fails.
    pub fn plan(
        &self,
        profile: &Profile,
        bytes: u64,
        root: u32,
    ) -> Result<(Schedule, Candidate, Model), Error> {
        let model = self.model(profile, &Assumptions::default())?;
        let n = self.rank_pus.len() as u32;
        let req = PlanRequest {
            n,
            root,
            bytes: bytes.max(1),
            blocks: None,
        };
        let p = plan(&model, &req).map_err(Error::herald)?;
        let best = p
            .best()
            .cloned()
            .ok_or_else(|| Error::Herald("no candidate schedule applies".into()))?;
        let s = schedule_of(&model, &best, n, root).map_err(Error::herald)?;
        Ok((s, best, model))
    }
}
