//! The generator registry: every algorithm registered once, with its name, the collective it
//! performs, the models it applies to, the parameter values the planner tries, and the function
//! that builds it.
//!
//! [`generate`](super::generate), [`Algorithm`]'s parsing and printing, the planner's candidate
//! set ([`candidates`](crate::plan::candidates)), the CLI's `--algo` help and `herald draw --view
//! compare` all read this table; adding an algorithm is a generator function and one entry here
//! (plus its [`Algorithm`] variant).

use super::{classic, place, Algorithm, Collective, Request, Schedule, ScheduleError};
use crate::model::{CostModel, Model};

/// What a generator's schedules perform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Produces {
    /// A broadcast of `m` blocks from the root.
    Broadcast,
    /// A reduction to the root.
    Reduce,
    /// An allreduce.
    Allreduce,
    /// An all-to-all broadcast.
    AllToAll,
    /// A prefix (scan).
    Prefix,
}

/// The problem a candidate sweep is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    /// Ranks.
    pub n: u32,
    /// Blocks.
    pub m: u32,
    /// The model's `⌈latency / send step⌉`, at most `max(n, 2)` (1 where the model has no
    /// [`Timing`](crate::model::Timing)): the degree around which wide trees pay off (DTREE's
    /// `⌈λ⌉ + 1`).
    pub lambda: u32,
}

impl Sweep {
    /// The sweep for `n` ranks and `m` blocks under `model`.
    ///
    /// # Errors
    /// Model and time errors.
    pub fn new(model: &Model, n: u32, m: u32) -> Result<Sweep, ScheduleError> {
        let lambda = match model {
            Model::FatTree(_) | Model::Hier(_) => 1,
            _ => {
                let t = model.timing(model.time_base()?)?;
                t.latency
                    .div_ceil(t.send_step().max(1))
                    .min(u64::from(n.max(2))) as u32
            }
        };
        Ok(Sweep { n, m, lambda })
    }

    /// The k-nomial radices (`≥ 3`) and d-ary degrees the planner tries around `lambda`.
    pub fn wide_trees(lambda: u32) -> Vec<Algorithm> {
        let radices = [lambda, lambda + 1, lambda + 2, 2 * lambda + 1];
        let knomials = radices.into_iter().filter(|&r| r >= 3);
        knomials
            .map(|radix| Algorithm::Knomial { radix })
            .chain([2, lambda + 1, 2 * lambda + 1].map(|d| Algorithm::Dtree { d }))
            .collect()
    }
}

/// One registered generator.
#[derive(Debug, Clone, Copy)]
pub struct Generator {
    /// The name `--algo` and [`Algorithm`]'s parser take (and its printed form without
    /// parameters).
    pub name: &'static str,
    /// Other names the parser accepts.
    pub aliases: &'static [&'static str],
    /// One line of help.
    pub help: &'static str,
    /// What its schedules perform.
    pub produces: Produces,
    /// The models it applies to, by [`CostModel::name`].
    pub models: &'static [&'static str],
    /// The algorithm with its default parameters.
    pub algorithm: Algorithm,
    /// The variants the planner tries (empty: not a planner candidate).
    sweep: fn(&Sweep) -> Vec<Algorithm>,
    /// Builds the schedule (under any model in `models`).
    build: fn(&Request, &Model) -> Result<Schedule, ScheduleError>,
}

impl Generator {
    /// Whether it applies to `model` (by the model's family: its name without parameters, so
    /// `fattree(w=log)` is `fattree`).
    pub fn applies_to(&self, model: &dyn CostModel) -> bool {
        let name = model.name();
        let family = name.split('(').next().unwrap_or(name);
        self.models.contains(&family)
    }

    /// The variants of this algorithm the planner tries for `sweep`.
    pub fn sweep(&self, sweep: &Sweep) -> Vec<Algorithm> {
        (self.sweep)(sweep)
    }

    /// The models it applies to, as a phrase.
    fn models_phrase(&self) -> String {
        self.models.join(", ")
    }
}

impl Produces {
    /// Whether `collective` is what these schedules perform.
    pub fn performs(self, collective: &Collective) -> bool {
        matches!(
            (self, collective),
            (Produces::Broadcast, Collective::Broadcast { .. })
                | (Produces::Reduce, Collective::Reduce { .. })
                | (Produces::Allreduce, Collective::Allreduce)
                | (Produces::AllToAll, Collective::AllToAll { .. })
                | (Produces::Prefix, Collective::Prefix)
        )
    }
}

const FLAT: &[&str] = &["postal", "logp", "oneport", "kport"];
const FLAT_HIER: &[&str] = &["postal", "logp", "oneport", "kport", "hier"];

fn none(_: &Sweep) -> Vec<Algorithm> {
    vec![]
}

fn not(req: &Request, why: &str) -> ScheduleError {
    ScheduleError::NotApplicable {
        algorithm: req.algorithm.to_string(),
        why: why.to_owned(),
    }
}

fn single(req: &Request, why: &str) -> Result<(), ScheduleError> {
    if req.blocks() == 1 {
        Ok(())
    } else {
        Err(not(req, why))
    }
}

fn timing(model: &Model) -> Result<crate::model::Timing, ScheduleError> {
    Ok(model.timing(model.time_base()?)?)
}

/// The classic trees from root 0: a closed form when one exists, else their send orders placed
/// under the model's rules; then rotated to the request's root. Under the hierarchical model,
/// placed under its per-pair costs (`schedule::hier`).
fn classic(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    if let Model::Hier(h) = model {
        return super::hier::classic(req, h);
    }
    let (n, m) = (req.n, req.blocks());
    let timing = timing(model)?;
    let s = match classic::closed_form(req.algorithm, n, m, &timing)? {
        Some(s) => s,
        None => {
            let orders = classic::orders(req.algorithm, n, m)?
                .ok_or_else(|| not(req, "does not apply to this model"))?;
            place(
                n,
                Collective::Broadcast { root: 0, blocks: m },
                &orders,
                &timing,
            )?
        }
    };
    s.into_rooted(req.root())
}

fn optimal(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let (n, m) = (req.n, req.blocks());
    let s = match model {
        Model::Postal(p) => {
            single(
                req,
                "BCAST broadcasts one message (m = 1); no algorithm is proven optimal for m > 1",
            )?;
            super::postal::bcast(n, p)?
        }
        Model::LogP(l) => {
            single(
                req,
                "B(P) broadcasts one item (m = 1); no algorithm is proven optimal for m > 1",
            )?;
            super::logp::bp(n, l)?
        }
        Model::OnePort(_) => super::optimal_1port::generate(n, m)?,
        Model::KPort(k) => super::kport::rotation(n, m, k)?,
        _ => return Err(not(req, "no algorithm is proven optimal under this model")),
    };
    s.into_rooted(req.root())
}

fn knomial(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    match req.algorithm {
        Algorithm::Knomial { radix } if radix < 2 => {
            Err(not(req, "the radix of a k-nomial tree is at least 2"))
        }
        _ => classic(req, model),
    }
}

fn dtree(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    match (req.algorithm, model) {
        (Algorithm::Dtree { d: 0 }, _) => Err(not(req, "the degree of DTREE(d) is at least 1")),
        (Algorithm::Dtree { d }, Model::Postal(p)) => {
            super::multi::dtree(req.n, req.blocks(), d, p)?.into_rooted(req.root())
        }
        _ => classic(req, model),
    }
}

fn postal_multi(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let Model::Postal(p) = model else {
        return Err(not(req, "defined for the postal model"));
    };
    super::multi::generate(req.algorithm, req.n, req.blocks(), p)?.into_rooted(req.root())
}

fn kport(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let Model::KPort(k) = model else {
        return Err(not(req, "defined for the k-port model (--model kport)"));
    };
    let s = match req.algorithm {
        Algorithm::KTree => super::kport::ktree(req.n, req.blocks(), k)?,
        _ => super::kport::rotation(req.n, req.blocks(), k)?,
    };
    s.into_rooted(req.root())
}

fn fat_tree(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let Model::FatTree(t) = model else {
        return Err(not(req, "defined for the ideal fat-tree (--model fattree)"));
    };
    let (n, m, root) = (req.n, req.blocks(), req.root());
    match req.algorithm {
        // Sparse-Broadcast moves copies through leaves that receive the block again later
        // (Bilardi et al.'s Algorithm 2); herald keeps each leaf's first reception only.
        Algorithm::FatBroadcast | Algorithm::Pipelined => {
            let pipelined = req.algorithm == Algorithm::Pipelined;
            let s = super::fat_tree::broadcast(t, n, m, root, pipelined)?;
            let hop = |x: &super::Transfer| {
                x.at + 2 * u64::from(crate::model::FatTree::height(x.from, x.to))
            };
            s.first_receptions_only(hop)
        }
        Algorithm::Sparse => super::fat_tree::sparse_only(t, n, m, root),
        Algorithm::Product => super::fat_tree::product(t, n, root),
        _ => super::fat_tree::prefix(t, n),
    }
}

fn logp_collective(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    use super::logp_collectives as lc;
    let (n, t) = (req.n, timing(model)?);
    match (req.algorithm, req.collective) {
        (Algorithm::Reduce, _) => lc::reduce(n, req.root(), &t),
        (Algorithm::Allreduce, _) => lc::allreduce(n, &t),
        (Algorithm::AllreducePaper, _) => lc::allreduce_paper(n, &t),
        (Algorithm::AllToAll, Collective::AllToAll { items }) => lc::alltoall(n, items, &t),
        (Algorithm::Summation { operands }, _) if req.root() == 0 => {
            let operands = operands.unwrap_or(u64::from(n));
            Ok(lc::summation(n, operands, &t)?.schedule().clone())
        }
        _ => Err(not(req, "Algorithm S(t) sums at processor 0 (--root 0)")),
    }
}

/// The hierarchical model's own generators: leaders with the default spec, earliest arrival.
fn hier(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let Model::Hier(h) = model else {
        return Err(not(req, "defined for the hierarchical model"));
    };
    let (n, m, root) = (req.n, req.blocks(), req.root());
    match req.algorithm {
        Algorithm::Leaders => {
            super::hier::leaders(h, n, m, root, &super::hier::default_leaders(h, n)?)
        }
        _ => super::hier::earliest_arrival(h, n, m, root),
    }
}

/// A registry entry (the table below stays one line of metadata per generator).
#[allow(clippy::too_many_arguments)]
const fn entry(
    name: &'static str,
    aliases: &'static [&'static str],
    help: &'static str,
    produces: Produces,
    models: &'static [&'static str],
    algorithm: Algorithm,
    sweep: fn(&Sweep) -> Vec<Algorithm>,
    build: fn(&Request, &Model) -> Result<Schedule, ScheduleError>,
) -> Generator {
    Generator {
        name,
        aliases,
        help,
        produces,
        models,
        algorithm,
        sweep,
        build,
    }
}

use Algorithm as A;
use Produces::{AllToAll, Allreduce, Broadcast, Prefix, Reduce};

/// Every generator, in the order `--algo` help lists them.
static GENERATORS: &[Generator] = &[
    entry("optimal", &[], "the algorithm proven optimal under the model (postal: BCAST; LogP: B(P); 1-port: round-optimal; k-port: rotation)", Broadcast, FLAT, A::Optimal, |_| vec![A::Optimal], optimal),
    entry("bcast", &[], "Bar-Noy & Kipnis' BCAST on the generalized Fibonacci tree (m = 1)", Broadcast, &["postal"], A::Bcast, none, optimal),
    entry("bp", &[], "Karp et al.'s optimal single-item tree B(P) (m = 1)", Broadcast, &["logp"], A::Bp, none, optimal),
    entry("binomial", &[], "binomial tree", Broadcast, FLAT_HIER, A::Binomial, |_| vec![A::Binomial], classic),
    entry("binary", &[], "binary tree (heap numbering)", Broadcast, FLAT_HIER, A::Binary, |_| vec![A::Binary], classic),
    entry("knomial", &[], "k-nomial tree (--radix)", Broadcast, FLAT_HIER, A::Knomial { radix: 2 }, |s| Sweep::wide_trees(s.lambda).into_iter().filter(|a| matches!(a, A::Knomial { .. })).collect(), knomial),
    entry("chain", &["line"], "chain: each processor forwards to the next", Broadcast, FLAT_HIER, A::Chain, |_| vec![A::Chain], classic),
    entry("star", &[], "star: the root sends to everyone", Broadcast, FLAT_HIER, A::Star, |_| vec![A::Star], classic),
    entry("scatter-allgather", &[], "binomial scatter of the blocks, then a ring allgather", Broadcast, FLAT_HIER, A::ScatterAllgather, |_| vec![A::ScatterAllgather], classic),
    entry("repeat", &[], "Bar-Noy & Kipnis' REPEAT: BCAST once per block", Broadcast, &["postal"], A::Repeat, |s| if s.m > 1 { vec![A::Repeat] } else { vec![] }, postal_multi),
    entry("pack", &[], "Bar-Noy & Kipnis' PACK: BCAST of one long message", Broadcast, &["postal"], A::Pack, |s| if s.m > 1 { vec![A::Pack] } else { vec![] }, postal_multi),
    entry("pipeline", &[], "Bar-Noy & Kipnis' PIPELINE-1/2: BCAST of a stream of blocks", Broadcast, &["postal"], A::Pipeline, |s| if s.m > 1 { vec![A::Pipeline] } else { vec![] }, postal_multi),
    entry("dtree", &[], "DTREE(d): the almost-full d-ary tree, blocks pipelined (--d)", Broadcast, FLAT_HIER, A::Dtree { d: 2 }, |s| Sweep::wide_trees(s.lambda).into_iter().filter(|a| matches!(a, A::Dtree { .. })).collect(), dtree),
    entry("greedy", &[], "multi-block schedule built greedily on the exact model", Broadcast, FLAT, A::Greedy, |s| if s.m > 1 && u64::from(s.n) * u64::from(s.n) * u64::from(s.m) <= 1 << 22 { vec![A::Greedy] } else { vec![] }, |r, m| super::multi::greedy(r.n, r.blocks(), m)?.into_rooted(r.root())),
    entry("fibonacci", &[], "Bruck, Cypher & Ho's generalized Fibonacci trees (--d trees)", Broadcast, &["oneport"], A::Fibonacci { d: None }, |_| vec![A::Fibonacci { d: None }], |r, _| match r.algorithm { A::Fibonacci { d } => super::fibonacci::generate(r.n, r.blocks(), d)?.into_rooted(r.root()), _ => unreachable!("registered for fibonacci") }),
    entry("reduce", &[], "reduction to the root by time reversal (Karp et al. §4)", Reduce, FLAT, A::Reduce, none, logp_collective),
    entry("allreduce", &[], "allreduce with combining, every P (Karp et al. §5.2 generalized)", Allreduce, FLAT, A::Allreduce, none, logp_collective),
    entry("allreduce-paper", &[], "Theorem 5.1's allreduce exactly as stated", Allreduce, FLAT, A::AllreducePaper, none, logp_collective),
    entry("alltoall", &[], "all-to-all broadcast of --items items per processor (Karp et al. §5.1)", AllToAll, FLAT, A::AllToAll, none, logp_collective),
    entry("summation", &[], "summation of --operands operands, Algorithm S(t)", Reduce, FLAT, A::Summation { operands: None }, none, logp_collective),
    entry("ktree", &["k-tree"], "Bar-Noy & Ho's k-tree algorithm", Broadcast, &["kport"], A::KTree, |_| vec![A::KTree], kport),
    entry("rotation", &[], "the rotation algorithm, ⌈m/k⌉ + ⌈log_{k+1} n⌉ rounds", Broadcast, &["kport"], A::Rotation, |_| vec![A::Rotation], kport),
    entry("broadcast", &[], "Bilardi et al.'s Broadcast on the ideal fat-tree", Broadcast, &["fattree"], A::FatBroadcast, |_| vec![A::FatBroadcast], fat_tree),
    entry("sparse", &[], "Sparse-Broadcast alone (leaves processors uninformed, by design)", Broadcast, &["fattree"], A::Sparse, none, fat_tree),
    entry("pipelined", &[], "the pipelined fat-tree broadcast (§3.3)", Broadcast, &["fattree"], A::Pipelined, |_| vec![A::Pipelined], fat_tree),
    entry("product", &[], "the fat-tree product (reduce): the time-reversed Broadcast", Reduce, &["fattree"], A::Product, none, fat_tree),
    entry("prefix", &[], "the fat-tree prefix: up-sweep and down-sweep", Prefix, &["fattree"], A::Prefix, none, fat_tree),
    entry("leaders", &[], "leaders per node of the hierarchy, a tree per stage", Broadcast, &["hier"], A::Leaders, none, hier),
    entry("earliest", &[], "the greedy earliest-arrival tree on per-pair costs", Broadcast, &["hier"], A::Earliest, |_| vec![A::Earliest], hier),
];

/// Every registered generator.
///
/// # Examples
///
/// ```
/// use herald::schedule::registry::generators;
/// let g = generators().iter().find(|g| g.name == "bcast").unwrap();
/// assert_eq!(g.models, ["postal"]);
/// assert!(generators().iter().any(|g| g.aliases.contains(&"line")));
/// ```
pub fn generators() -> &'static [Generator] {
    GENERATORS
}

/// The generator named `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static Generator> {
    GENERATORS
        .iter()
        .find(|g| g.name == name || g.aliases.contains(&name))
}

/// The generator of `algorithm` (every variant is registered: a unit test checks it).
pub(super) fn of(algorithm: Algorithm) -> &'static Generator {
    GENERATORS
        .iter()
        .find(|g| std::mem::discriminant(&g.algorithm) == std::mem::discriminant(&algorithm))
        .expect("every Algorithm variant is registered")
}

/// Builds `req` under `model` with the registered generator, if the generator applies to the
/// model and performs the request's collective.
pub(super) fn build(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let g = of(req.algorithm);
    if !g.produces.performs(&req.collective) {
        return Err(not(
            req,
            &format!("performs {:?}, not {}", g.produces, req.collective.name()),
        ));
    }
    if !g.applies_to(model) {
        return Err(not(
            req,
            &format!(
                "defined for the {} model(s), not {}",
                g.models_phrase(),
                model.name()
            ),
        ));
    }
    (g.build)(req, model)
}

/// The planner's broadcast candidates for `sweep` under `model`: every applicable broadcast
/// generator's sweep, in registry order, without repeats.
pub fn broadcast_candidates(model: &dyn CostModel, sweep: &Sweep) -> Vec<Algorithm> {
    let mut out: Vec<Algorithm> = vec![];
    for g in GENERATORS {
        if g.produces == Produces::Broadcast && g.applies_to(model) {
            for a in g.sweep(sweep) {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let mut seen = std::collections::HashSet::new();
        for g in GENERATORS {
            for name in std::iter::once(&g.name).chain(g.aliases) {
                assert!(seen.insert(*name), "{name} registered twice");
                assert_eq!(name.parse::<Algorithm>().unwrap(), g.algorithm);
            }
            assert!(std::ptr::eq(of(g.algorithm), g), "{}", g.name);
        }
    }
}
