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
    /// Summation of `operands` operands, Algorithm S(t) (Karp et al. Theorem 4.1), to
    /// processor 0.
    Summation {
        /// The operand count `N ≥ 1`, or `None` for one per processor (`N = n`).
        operands: Option<u64>,
    },
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
            Algorithm::Summation {
                operands: Some(operands),
            } => write!(f, "{name}({operands})"),
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

/// What to generate: an algorithm, a processor count and the collective to perform, which
/// must be the one the algorithm's generator produces ([`Generator::produces`]).
///
/// The algorithm's own parameters (a k-nomial radix, a DTREE degree, a summation's operand
/// count) are in the [`Algorithm`]; the problem's (root, blocks, items) are in the
/// [`Collective`].
///
/// [`Generator::produces`]: super::registry::Generator::produces
///
/// # Examples
///
/// ```
/// use herald::{generate, Algorithm, Collective, Model, Postal, Request};
/// let model = Model::from(Postal::new("2".parse()?)?);
/// let req = Request::new(Algorithm::AllToAll, 4, Collective::AllToAll { items: 2 });
/// assert_eq!(generate(&req, &model)?.collective(), Collective::AllToAll { items: 2 });
/// // The collective must be the algorithm's.
/// let wrong = Request::new(Algorithm::Binomial, 4, Collective::Allreduce);
/// assert!(generate(&wrong, &model).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The generator, with its parameters.
    pub algorithm: Algorithm,
    /// Processor count.
    pub n: u32,
    /// The collective to perform (with its root, blocks or items).
    pub collective: Collective,
}

impl Request {
    /// `algorithm` performing `collective` on `n` processors.
    pub fn new(algorithm: Algorithm, n: u32, collective: Collective) -> Request {
        Request {
            algorithm,
            n,
            collective,
        }
    }

    /// A broadcast of `m` blocks from `root`; for an algorithm that performs another collective,
    /// that collective at the same root (a reduce to `root`, an allreduce, a prefix, an
    /// all-to-all of one item per processor), so one call serves a sweep over every algorithm.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Algorithm, Collective, Request};
    /// let r = Request::broadcast(Algorithm::Binomial, 8, 3, 1);
    /// assert_eq!(r.collective, Collective::Broadcast { root: 1, blocks: 3 });
    /// let r = Request::broadcast(Algorithm::Reduce, 8, 1, 1);
    /// assert_eq!(r.collective, Collective::Reduce { root: 1 });
    /// ```
    pub fn broadcast(algorithm: Algorithm, n: u32, m: u32, root: u32) -> Request {
        use super::registry::Produces;
        let collective = match algorithm.generator().produces {
            Produces::Broadcast => Collective::Broadcast { root, blocks: m },
            Produces::Reduce => Collective::Reduce { root },
            Produces::Allreduce => Collective::Allreduce,
            Produces::AllToAll => Collective::AllToAll { items: 1 },
            Produces::Prefix => Collective::Prefix,
        };
        Request::new(algorithm, n, collective)
    }

    /// Blocks of a broadcast (1 for the other collectives).
    pub fn blocks(&self) -> u32 {
        match self.collective {
            Collective::Broadcast { blocks, .. } => blocks,
            _ => 1,
        }
    }

    /// The root of a broadcast or reduce (0 for the other collectives).
    pub fn root(&self) -> u32 {
        match self.collective {
            Collective::Broadcast { root, .. } | Collective::Reduce { root } => root,
            _ => 0,
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
    // validates n, the root, blocks and items before any work
    drop(Schedule::builder(
        req.n,
        req.collective,
        crate::time::TimeBase::UNIT,
    )?);
    super::registry::build(req, model)
}
