//! One level's costs: [`LevelCost`], [`HierLevel`], where they came from ([`LevelSource`]) and the [`Assumptions`] for unmeasured levels.

use super::*;

/// The flat model of one level: its rules apply to messages whose ranks meet at that level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelCost {
    /// Postal latency λ (in units of the send time, common to all levels).
    Postal(Postal),
    /// LogGP `L, o, g, G` (the hierarchical model sets the message size).
    LogP(LogP),
}

impl LevelCost {
    /// The flat model as a trait object.
    pub fn as_dyn(&self) -> &dyn CostModel {
        match self {
            LevelCost::Postal(m) => m,
            LevelCost::LogP(m) => m,
        }
    }

    /// `postal` or `logp`.
    pub fn family(&self) -> &'static str {
        self.as_dyn().name()
    }

    /// Every parameter multiplied by `factor` (postal: λ; LogGP: `L, o, g, G` and a second
    /// `G` where [`LogP::with_whole_gap`] set one).
    ///
    /// # Errors
    /// [`ModelError`] if a product overflows or leaves the model's range.
    pub fn scaled(&self, factor: Ratio) -> Result<LevelCost, ModelError> {
        Ok(match self {
            LevelCost::Postal(p) => LevelCost::Postal(Postal::new(mul_ratio(p.lambda(), factor)?)?),
            LevelCost::LogP(l) => {
                let s = |r| mul_ratio(r, factor);
                let mut scaled = LogP::new(s(l.l())?, s(l.o())?, s(l.g())?, s(l.big_g())?)?
                    .with_combine(l.combine())
                    .with_long_messages(l.long_messages());
                if let Some((above, g)) = l.whole_gap() {
                    scaled = scaled.with_whole_gap(above, s(g)?);
                }
                LevelCost::LogP(scaled.with_bytes(l.bytes())?)
            }
        })
    }

    pub(super) fn with_bytes(self, bytes: u64) -> Result<LevelCost, ModelError> {
        Ok(match self {
            LevelCost::LogP(l) => LevelCost::LogP(l.with_bytes(bytes)?),
            p => p,
        })
    }
}

impl fmt::Display for LevelCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LevelCost::Postal(p) => write!(f, "postal λ={}", p.lambda()),
            LevelCost::LogP(l) => {
                write!(
                    f,
                    "logp L={} o={} g={} G={}",
                    l.l(),
                    l.o(),
                    l.g(),
                    l.big_g()
                )?;
                match l.whole_gap() {
                    Some((above, g)) => write!(f, " G={g} above {above} B"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// `a · b`, exact.
pub(super) fn mul_ratio(a: Ratio, b: Ratio) -> Result<Ratio, TimeError> {
    let num = a
        .numer()
        .checked_mul(b.numer())
        .ok_or(TimeError::Overflow)?;
    let den = a
        .denom()
        .checked_mul(b.denom())
        .ok_or(TimeError::Overflow)?;
    Ratio::new(num, den)
}

/// One level's parameters in a [`Hier`] model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HierLevel {
    /// The costs of messages whose ranks meet at this level (`None`: no rank pair meets here).
    pub cost: Option<LevelCost>,
    /// How many messages may cross one node's boundary at this level at once, per direction
    /// (`None`: unbounded; the machine level has no boundary).
    pub capacity: Option<u32>,
}

impl HierLevel {
    /// A level with costs and no capacity bound.
    pub fn new(cost: LevelCost) -> HierLevel {
        HierLevel {
            cost: Some(cost),
            capacity: None,
        }
    }

    /// A postal level with latency `lambda`.
    ///
    /// # Errors
    /// [`ModelError::Parameter`] unless `1 ≤ λ ≤ 10000`.
    pub fn postal(lambda: Ratio) -> Result<HierLevel, ModelError> {
        Ok(HierLevel::new(LevelCost::Postal(Postal::new(lambda)?)))
    }

    /// The same level with boundary capacity `w`.
    pub fn with_capacity(self, w: u32) -> HierLevel {
        HierLevel {
            capacity: Some(w),
            ..self
        }
    }
}

/// Where a level's parameters came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LevelSource {
    /// Given explicitly by the caller.
    Given,
    /// Measured: the profile's level of this name.
    Measured(String),
    /// Not measured: the parameters of the finer level `from`, multiplied by `factor`.
    Assumed {
        /// The level whose parameters were scaled.
        from: String,
        /// The multiplier applied to every parameter.
        factor: Ratio,
    },
    /// No pair of ranks meets at this level: no parameters needed.
    Unused,
}

impl fmt::Display for LevelSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LevelSource::Given => f.write_str("given"),
            LevelSource::Measured(l) => write!(f, "measured ({l})"),
            LevelSource::Assumed { from, factor } => {
                write!(f, "assumed: {factor} × {from} (not measured)")
            }
            LevelSource::Unused => f.write_str("unused"),
        }
    }
}

/// How [`Hier::from_profile`] fills the levels a profile lacks (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumptions {
    /// An unmeasured level costs this many times the nearest finer level with parameters.
    pub factor: Ratio,
    /// Explicit parameters by level name; they replace measured or assumed ones.
    pub levels: Vec<(String, HierLevel)>,
    /// Which value of each measured distribution to use.
    pub pick: Pick,
}

impl Default for Assumptions {
    fn default() -> Assumptions {
        Assumptions {
            factor: Ratio::integer(Assumptions::DEFAULT_FACTOR),
            levels: Vec::new(),
            pick: Pick::Dominant,
        }
    }
}

impl Assumptions {
    /// The default multiplier for an unmeasured level.
    pub const DEFAULT_FACTOR: u64 = 2;
}
