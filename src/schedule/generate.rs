//! Choosing a generator by name.

use super::classic;
use super::{place, postal, Collective, Schedule, ScheduleError};
use crate::model::{CostModel, Model};
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
/// # Ok::<(), herald::ScheduleError>(())
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
    /// split and each stage's algorithm, see [`leaders`](crate::leaders)).
    Leaders,
    /// The greedy earliest-arrival tree on per-pair costs (hierarchical model).
    Earliest,
}

impl Algorithm {
    /// Every algorithm name the parser accepts.
    pub const NAMES: &'static [&'static str] = &[
        "optimal",
        "bcast",
        "bp",
        "binomial",
        "binary",
        "knomial",
        "chain",
        "star",
        "scatter-allgather",
        "repeat",
        "pack",
        "pipeline",
        "dtree",
        "greedy",
        "fibonacci",
        "reduce",
        "allreduce",
        "allreduce-paper",
        "alltoall",
        "summation",
        "ktree",
        "rotation",
        "broadcast",
        "sparse",
        "pipelined",
        "product",
        "prefix",
        "leaders",
        "earliest",
    ];

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
        match self {
            Algorithm::Optimal => f.write_str("optimal"),
            Algorithm::Bcast => f.write_str("bcast"),
            Algorithm::Bp => f.write_str("bp"),
            Algorithm::Binomial => f.write_str("binomial"),
            Algorithm::Binary => f.write_str("binary"),
            Algorithm::Knomial { radix } => write!(f, "knomial({radix})"),
            Algorithm::Chain => f.write_str("chain"),
            Algorithm::Star => f.write_str("star"),
            Algorithm::ScatterAllgather => f.write_str("scatter-allgather"),
            Algorithm::Repeat => f.write_str("repeat"),
            Algorithm::Pack => f.write_str("pack"),
            Algorithm::Pipeline => f.write_str("pipeline"),
            Algorithm::Dtree { d } => write!(f, "dtree({d})"),
            Algorithm::Greedy => f.write_str("greedy"),
            Algorithm::Fibonacci { d: None } => f.write_str("fibonacci"),
            Algorithm::Fibonacci { d: Some(d) } => write!(f, "fibonacci({d})"),
            Algorithm::Reduce => f.write_str("reduce"),
            Algorithm::Allreduce => f.write_str("allreduce"),
            Algorithm::AllreducePaper => f.write_str("allreduce-paper"),
            Algorithm::AllToAll => f.write_str("alltoall"),
            Algorithm::Summation => f.write_str("summation"),
            Algorithm::KTree => f.write_str("ktree"),
            Algorithm::Rotation => f.write_str("rotation"),
            Algorithm::FatBroadcast => f.write_str("broadcast"),
            Algorithm::Sparse => f.write_str("sparse"),
            Algorithm::Pipelined => f.write_str("pipelined"),
            Algorithm::Product => f.write_str("product"),
            Algorithm::Prefix => f.write_str("prefix"),
            Algorithm::Leaders => f.write_str("leaders"),
            Algorithm::Earliest => f.write_str("earliest"),
        }
    }
}

impl FromStr for Algorithm {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Algorithm, ScheduleError> {
        Ok(match s {
            "optimal" => Algorithm::Optimal,
            "bcast" => Algorithm::Bcast,
            "bp" => Algorithm::Bp,
            "binomial" => Algorithm::Binomial,
            "binary" => Algorithm::Binary,
            "knomial" => Algorithm::Knomial { radix: 2 },
            "chain" | "line" => Algorithm::Chain,
            "star" => Algorithm::Star,
            "scatter-allgather" => Algorithm::ScatterAllgather,
            "repeat" => Algorithm::Repeat,
            "pack" => Algorithm::Pack,
            "pipeline" => Algorithm::Pipeline,
            "dtree" => Algorithm::Dtree { d: 2 },
            "greedy" => Algorithm::Greedy,
            "fibonacci" => Algorithm::Fibonacci { d: None },
            "reduce" => Algorithm::Reduce,
            "allreduce" => Algorithm::Allreduce,
            "allreduce-paper" => Algorithm::AllreducePaper,
            "alltoall" => Algorithm::AllToAll,
            "summation" => Algorithm::Summation,
            "ktree" | "k-tree" => Algorithm::KTree,
            "rotation" => Algorithm::Rotation,
            "broadcast" => Algorithm::FatBroadcast,
            "sparse" => Algorithm::Sparse,
            "pipelined" => Algorithm::Pipelined,
            "product" => Algorithm::Product,
            "prefix" => Algorithm::Prefix,
            "leaders" => Algorithm::Leaders,
            "earliest" => Algorithm::Earliest,
            other => {
                return Err(ScheduleError::NotApplicable {
                    algorithm: other.to_owned(),
                    why: format!("unknown algorithm (known: {})", Algorithm::NAMES.join(", ")),
                })
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
    let &Request {
        algorithm,
        n,
        m,
        root,
        items,
        operands,
    } = req;
    let collective = Collective::Broadcast { root, blocks: m };
    // validates n, m and the root before any work
    drop(Schedule::builder(
        n,
        collective,
        crate::time::TimeBase::UNIT,
    )?);
    let not = |why: &str| ScheduleError::NotApplicable {
        algorithm: algorithm.to_string(),
        why: why.to_owned(),
    };
    let single = |s: &str| if m == 1 { Ok(()) } else { Err(not(s)) };
    let timing =
        || -> Result<crate::model::Timing, ScheduleError> { Ok(model.timing(model.time_base()?)?) };
    if let Model::Hier(h) = model {
        return super::hier::generate(req, h);
    }
    if let Algorithm::Leaders | Algorithm::Earliest = algorithm {
        return Err(not("defined for the hierarchical model"));
    }
    match (algorithm, model) {
        (Algorithm::KTree, Model::KPort(k)) => {
            return super::kport::ktree(n, m, k)?.into_rooted(root)
        }
        (Algorithm::Rotation | Algorithm::Optimal, Model::KPort(k)) => {
            return super::kport::rotation(n, m, k)?.into_rooted(root)
        }
        (Algorithm::KTree | Algorithm::Rotation, _) => {
            return Err(not("defined for the k-port model (--model kport)"))
        }
        // Sparse-Broadcast moves copies through leaves that receive the block again later
        // (Bilardi et al.'s Algorithm 2); herald keeps each leaf's first reception only.
        (Algorithm::FatBroadcast | Algorithm::Pipelined, Model::FatTree(t)) => {
            let pipelined = algorithm == Algorithm::Pipelined;
            let s = super::fat_tree::broadcast(t, n, m, root, pipelined)?;
            let hop =
                |x: &super::Send| x.at + 2 * u64::from(crate::model::FatTree::height(x.from, x.to));
            return s.first_receptions_only(hop);
        }
        (Algorithm::Sparse, Model::FatTree(t)) => {
            return super::fat_tree::sparse_only(t, n, m, root)
        }
        (Algorithm::Product, Model::FatTree(t)) => return super::fat_tree::product(t, n, root),
        (Algorithm::Prefix, Model::FatTree(t)) => return super::fat_tree::prefix(t, n),
        (
            Algorithm::FatBroadcast
            | Algorithm::Pipelined
            | Algorithm::Sparse
            | Algorithm::Product
            | Algorithm::Prefix,
            _,
        ) => return Err(not("defined for the ideal fat-tree (--model fattree)")),
        (_, Model::FatTree(_)) => {
            return Err(not(
                "the fat-tree takes broadcast, sparse, pipelined, product or prefix",
            ))
        }
        _ => {}
    }
    match algorithm {
        Algorithm::Reduce => return super::logp_collectives::reduce(n, root, &timing()?),
        Algorithm::Allreduce => return super::logp_collectives::allreduce(n, &timing()?),
        Algorithm::AllreducePaper => {
            return super::logp_collectives::allreduce_paper(n, &timing()?)
        }
        Algorithm::AllToAll => {
            return super::logp_collectives::alltoall(n, items.unwrap_or(1), &timing()?)
        }
        Algorithm::Summation => {
            let plan = super::logp_collectives::summation(
                n,
                operands.unwrap_or(u64::from(n)),
                &timing()?,
            )?;
            return Ok(plan.schedule().clone());
        }
        _ => {}
    }
    let rooted0 = match (algorithm, model) {
        (Algorithm::Optimal, Model::Postal(p)) | (Algorithm::Bcast, Model::Postal(p)) => {
            single(
                "BCAST broadcasts one message (m = 1); no algorithm is proven optimal for m > 1",
            )?;
            postal::bcast(n, p)?
        }
        (Algorithm::Optimal, Model::LogP(l)) | (Algorithm::Bp, Model::LogP(l)) => {
            single("B(P) broadcasts one item (m = 1); no algorithm is proven optimal for m > 1")?;
            super::logp::bp(n, l)?
        }
        (Algorithm::Optimal, Model::OnePort(_)) => super::optimal_1port::generate(n, m)?,
        (Algorithm::Fibonacci { d }, Model::OnePort(_)) => super::fibonacci::generate(n, m, d)?,
        (Algorithm::Fibonacci { .. }, _) => {
            return Err(not(
                "generalized Fibonacci trees are defined for the 1-port model",
            ))
        }
        (Algorithm::Bcast, _) => return Err(not("BCAST is defined for the postal model")),
        (Algorithm::Bp, _) => return Err(not("B(P) is defined for the LogP model")),
        (Algorithm::Repeat | Algorithm::Pack | Algorithm::Pipeline, Model::Postal(p)) => {
            super::multi::generate(algorithm, n, m, p)?
        }
        (Algorithm::Repeat | Algorithm::Pack | Algorithm::Pipeline, _) => {
            return Err(not("defined for the postal model"))
        }
        (Algorithm::Greedy, _) => super::multi::greedy(n, m, model)?,
        (Algorithm::Knomial { radix }, _) if radix < 2 => {
            return Err(not("the radix of a k-nomial tree is at least 2"))
        }
        (Algorithm::Dtree { d: 0 }, _) => return Err(not("the degree of DTREE(d) is at least 1")),
        (Algorithm::Dtree { d }, Model::Postal(p)) => super::multi::dtree(n, m, d, p)?,
        _ => {
            let timing = model.timing(model.time_base()?)?;
            if let Some(s) = classic::closed_form(algorithm, n, m, &timing)? {
                s
            } else {
                let Some(orders) = classic::orders(algorithm, n, m)? else {
                    return Err(not("does not apply to this model"));
                };
                place(
                    n,
                    Collective::Broadcast { root: 0, blocks: m },
                    &orders,
                    &timing,
                )?
            }
        }
    };
    rooted0.into_rooted(root)
}
