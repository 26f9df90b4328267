//! Choosing a generator by name.

use super::classic::{self, Dary, Knomial, Star};
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
    /// The algorithm proven optimal under the model (postal: BCAST; LogP: B(P)).
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
    ];

    /// The algorithm with its radix set (for `knomial`; ignored by the others).
    pub fn with_radix(self, radix: u32) -> Algorithm {
        match self {
            Algorithm::Knomial { .. } => Algorithm::Knomial { radix },
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
            other => {
                return Err(ScheduleError::NotApplicable {
                    algorithm: other.to_owned(),
                    why: format!("unknown algorithm (known: {})", Algorithm::NAMES.join(", ")),
                })
            }
        })
    }
}

/// What to generate: an algorithm for a broadcast of `m` blocks from `root` to `n` processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The generator.
    pub algorithm: Algorithm,
    /// Processor count.
    pub n: u32,
    /// Blocks.
    pub m: u32,
    /// Root.
    pub root: u32,
}

impl Request {
    /// A broadcast request.
    pub fn broadcast(algorithm: Algorithm, n: u32, m: u32, root: u32) -> Request {
        Request {
            algorithm,
            n,
            m,
            root,
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
        (Algorithm::Bcast, _) => return Err(not("BCAST is defined for the postal model")),
        (Algorithm::Bp, _) => return Err(not("B(P) is defined for the LogP model")),
        (Algorithm::Knomial { radix }, _) if radix < 2 => {
            return Err(not("the radix of a k-nomial tree is at least 2"))
        }
        _ => {
            let orders = match algorithm {
                Algorithm::Binomial => classic::tree_orders(&Knomial(2), n, m)?,
                Algorithm::Knomial { radix } => classic::tree_orders(&Knomial(radix), n, m)?,
                Algorithm::Binary => classic::tree_orders(&Dary(2), n, m)?,
                Algorithm::Chain => classic::tree_orders(&Dary(1), n, m)?,
                Algorithm::Star => classic::tree_orders(&Star, n, m)?,
                Algorithm::ScatterAllgather => classic::scatter_allgather_orders(n, m)?,
                Algorithm::Optimal | Algorithm::Bcast | Algorithm::Bp => unreachable!(),
            };
            let timing = model.timing(model.time_base()?)?;
            place(
                n,
                Collective::Broadcast { root: 0, blocks: m },
                &orders,
                &timing,
            )?
        }
    };
    rooted0.rooted_at(root)
}
