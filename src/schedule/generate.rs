//! Choosing a generator by name: [`Algorithm`] and [`Request`], dispatched through the registry.

use super::{Collective, Schedule, ScheduleError};
use crate::model::Model;
use std::fmt;
use std::str::FromStr;

/// A schedule generator.
///
/// # Examples
///
/// ```
/// use herald::Algorithm;
/// assert_eq!("knomial".parse::<Algorithm>()?, Algorithm::Knomial { radix: 2 });
/// assert_eq!(Algorithm::Knomial { radix: 4 }.to_string(), "knomial(4)");
/// # Ok::<(), herald::schedule::ScheduleError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The algorithm proven optimal under the model (postal: BCAST; LogP: B(P); k-port: the
    /// rotation algorithm, optimal up to one round).
    Optimal,
    /// Bar-Noy & Kipnis' BCAST on the generalized Fibonacci tree (postal).
    Bcast,
    /// Karp et al.'s optimal single-item tree B(P) (LogP).
    Bp,
    /// Binomial tree (k-nomial with radix 2).
    Binomial,
    /// Binary tree (left-to-right almost-full, heap numbering).
    Binary,
    /// k-nomial tree.
    Knomial {
        /// The radix `R ≥ 2`.
        radix: u32,
    },
    /// Chain (line): each processor forwards to the next.
    Chain,
    /// Star: the root sends to everyone.
    Star,
    /// Scatter the blocks over the processors (binomial), then a ring allgather.
    ScatterAllgather,
    /// Bar-Noy & Kipnis' REPEAT: BCAST once per block (postal).
    Repeat,
    /// Bar-Noy & Kipnis' PACK: BCAST of one long message of all blocks (postal).
    Pack,
    /// Bar-Noy & Kipnis' PIPELINE-1/2: BCAST of a stream of the blocks (postal).
    Pipeline,
    /// Bar-Noy & Kipnis' DTREE(d): the left-to-right almost-full d-ary tree, blocks pipelined.
    Dtree {
        /// The degree `d ≥ 1` (1: line; 2: binary; n − 1: star).
        d: u32,
    },
    /// A multi-block schedule built greedily on the exact model (beyond the postal paper).
    Greedy,
    /// Bruck, Cypher & Ho's generalized Fibonacci trees (1-port); `None` chooses `d` from `n`.
    Fibonacci {
        /// The number of trees (odd, ≥ 3), or the paper's choice.
        d: Option<u32>,
    },
    /// Reduction to the root: the time-reversed optimal broadcast (Karp et al. §4).
    Reduce,
    /// Allreduce with combining, correct for every P (Karp et al. §5.2 generalized).
    Allreduce,
    /// Theorem 5.1's allreduce exactly as stated (correct only for P = p(T; L, 0, 1) with o = 0,
    /// g = 1: the checker shows the double counting elsewhere).
    AllreducePaper,
    /// All-to-all broadcast of `items` items per processor (Karp et al. §5.1).
    AllToAll,
    /// Summation of `operands` operands, Algorithm S(t) (Karp et al. Theorem 4.1).
    Summation,
    /// Bar-Noy & Ho's k-tree algorithm: `k` spanning trees, one level per round (k-port).
    KTree,
    /// The rotation algorithm: `⌈m/k⌉ + ⌈log_{k+1} n⌉` rounds (k-port).
    Rotation,
    /// Algorithm 1, Broadcast on the ideal fat-tree (Bilardi et al.).
    FatBroadcast,
    /// Algorithm 2, Sparse-Broadcast alone: `max(w(N), 2)` spread copies (fat-tree; leaves the
    /// other processors without the message, by design).
    Sparse,
    /// §3.3, the pipelined fat-tree broadcast.
    Pipelined,
    /// The fat-tree product (reduce): the time-reversed Broadcast (Figure 2).
    Product,
    /// The fat-tree prefix: rank-ordered up-sweep and down-sweep.
    Prefix,
    /// Leaders per node of the hierarchy, each stage its own tree (hierarchical model; by
    /// [`generate`]: split wherever the ranks divide, binomial stages; the planner chooses the
    /// split and each stage's algorithm, see [`leaders`](crate::schedule::leaders)).
    Leaders,
    /// The greedy earliest-arrival tree on per-pair costs (hierarchical model).
    Earliest,
}

impl Algorithm {
    /// Its registered generator (name, help, models, planner sweep).
    pub fn generator(self) -> &'static super::registry::Generator {
        super::registry::of(self)
    }

    /// The algorithm with its parameters set: `radix` for `knomial`, `d` for `dtree` and
    /// `fibonacci` (ignored by the others).
    pub fn with_params(self, radix: u32, d: Option<u32>) -> Algorithm {
        match self {
            Algorithm::Knomial { .. } => Algorithm::Knomial { radix },
            Algorithm::Dtree { d: default } => Algorithm::Dtree {
                d: d.unwrap_or(default),
            },
            Algorithm::Fibonacci { .. } => Algorithm::Fibonacci { d },
            a => a,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.generator().name;
        match self {
            Algorithm::Knomial { radix } => write!(f, "{name}({radix})"),
            Algorithm::Dtree { d } | Algorithm::Fibonacci { d: Some(d) } => {
                write!(f, "{name}({d})")
            }
            _ => f.write_str(name),
        }
    }
}

impl FromStr for Algorithm {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Algorithm, ScheduleError> {
        super::registry::find(s)
            .map(|g| g.algorithm)
            .ok_or_else(|| {
                let names: Vec<&str> = super::registry::generators()
                    .iter()
                    .map(|g| g.name)
                    .collect();
                ScheduleError::NotApplicable {
                    algorithm: s.to_owned(),
                    why: format!("unknown algorithm (known: {})", names.join(", ")),
                }
            })
    }
}

/// What to generate: an algorithm for `n` processors — a broadcast of `m` blocks from `root`,
/// or the collective the algorithm names (reduce to `root`, allreduce, all-to-all of `items`
/// items, summation of `operands` operands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The generator.
    pub algorithm: Algorithm,
    /// Processor count.
    pub n: u32,
    /// Blocks (broadcast).
    pub m: u32,
    /// Root (broadcast, reduce).
    pub root: u32,
    /// Items per processor (all-to-all; default 1).
    pub items: Option<u32>,
    /// Operands (summation; default `n`).
    pub operands: Option<u64>,
}

impl Request {
    /// A broadcast request (also fine for reduce and allreduce).
    pub fn broadcast(algorithm: Algorithm, n: u32, m: u32, root: u32) -> Request {
        Request {
            algorithm,
            n,
            m,
            root,
            items: None,
            operands: None,
        }
    }
}

/// Generates the requested schedule under `model`.
///
/// # Errors
/// [`ScheduleError::NoProcessors`], [`ScheduleError::NoBlocks`], [`ScheduleError::Root`] for a
/// bad problem; [`ScheduleError::NotApplicable`] when the algorithm does not fit the model or
/// problem; model and time errors.
///
/// # Examples
///
/// ```
/// use herald::{generate, Algorithm, LogP, Model, Request};
/// let model = Model::from(LogP::new("6".parse()?, "2".parse()?, "4".parse()?, "0".parse()?)?);
/// let s = generate(&Request::broadcast(Algorithm::Binomial, 8, 1, 3), &model)?;
/// assert_eq!(s.len(), 7);
/// assert_eq!(s.sends_of(3).count(), 3); // the root sends to three subtrees
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn generate(req: &Request, model: &Model) -> Result<Schedule, ScheduleError> {
    let &Request { n, m, root, .. } = req;
    let collective = Collective::Broadcast { root, blocks: m };
    // validates n, m and the root before any work
    drop(Schedule::builder(
        n,
        collective,
        crate::time::TimeBase::UNIT,
    )?);
    match model {
        Model::Hier(h) => super::hier::generate(req, h),
        _ => super::registry::build(req, model),
    }
}
