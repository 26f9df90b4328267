//! Exact time: non-negative rationals for model parameters and integer ticks for schedules.
//!
//! Every model parameter is a [`Ratio`] with a bounded denominator (at most
//! [`Ratio::MAX_DENOMINATOR`]). A [`TimeBase`] fixes how many ticks make one unit of time, chosen
//! so that every parameter in play is a whole number of ticks; schedules and the checker then work
//! on plain `u64` ticks with checked arithmetic. Nothing here uses floating point, except
//! [`TimeBase::to_f64`], which exists only for display.
//!
//! # Examples
//!
//! ```
//! use herald::{Ratio, time::TimeBase};
//!
//! let lambda: Ratio = "5/2".parse()?;
//! assert_eq!(lambda, "2.5".parse()?);
//! let base = TimeBase::for_ratios(&[lambda])?;
//! assert_eq!(base.ticks_per_unit(), 2);
//! assert_eq!(base.ticks(lambda)?, 5);
//! assert_eq!(base.format(15), "15/2");
//! assert_eq!(base.format(14), "7");
//! # Ok::<(), herald::time::TimeError>(())
//! ```

use std::fmt;
use std::str::FromStr;

/// Errors from exact time arithmetic and parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// The text is not a number of the form `7`, `5/2` or `2.5`.
    #[error("cannot parse {0:?} as a non-negative rational (write 7, 5/2 or 2.5)")]
    Parse(String),
    /// The denominator is larger than herald supports.
    #[error("{0:?} needs a denominator above {max}", max = Ratio::MAX_DENOMINATOR)]
    Denominator(String),
    /// A denominator of zero.
    #[error("division by zero in {0:?}")]
    ZeroDenominator(String),
    /// Tick arithmetic overflowed `u64`.
    #[error("time arithmetic overflowed (times beyond 2^64 ticks)")]
    Overflow,
    /// The parameters together need more ticks per unit than herald supports.
    #[error("parameters need {0} ticks per unit of time; at most {max} are supported", max = TimeBase::MAX_TICKS_PER_UNIT)]
    TickBase(u128),
}

/// A non-negative rational number `num/den` in lowest terms.
///
/// The denominator is at most [`Ratio::MAX_DENOMINATOR`], so parameters like `5/2` or `2.125` are
/// exact and their sums never need more than a bounded number of ticks per unit.
///
/// # Examples
///
/// ```
/// use herald::Ratio;
/// let r: Ratio = "10/4".parse().unwrap();
/// assert_eq!((r.numer(), r.denom()), (5, 2));
/// assert_eq!(r.to_string(), "5/2");
/// assert_eq!(Ratio::integer(7).to_string(), "7");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ratio {
    /// Numerator; any `u64`.
    num: u64,
    /// Denominator; `1 ..= MAX_DENOMINATOR`, coprime with `num`.
    den: u64,
}

impl Ratio {
    /// The largest denominator a parameter may have.
    pub const MAX_DENOMINATOR: u64 = 1_000_000;
    /// Zero.
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };
    /// One.
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// The rational `num/den`, reduced.
    ///
    /// # Errors
    /// [`TimeError::ZeroDenominator`] if `den == 0`; [`TimeError::Denominator`] if the reduced
    /// denominator exceeds [`Ratio::MAX_DENOMINATOR`].
    pub fn new(num: u64, den: u64) -> Result<Ratio, TimeError> {
        if den == 0 {
            return Err(TimeError::ZeroDenominator(format!("{num}/{den}")));
        }
        let g = gcd(num, den);
        let (num, den) = (num / g, den / g);
        if den > Self::MAX_DENOMINATOR {
            return Err(TimeError::Denominator(format!("{num}/{den}")));
        }
        Ok(Ratio { num, den })
    }

    /// The integer `n` as a ratio.
    pub const fn integer(n: u64) -> Ratio {
        Ratio { num: n, den: 1 }
    }

    /// The value exactly, as a decimal where at most six digits after the point suffice
    /// (`7147.5`, `7`), else as the fraction (`10/3`).
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::Ratio;
    /// assert_eq!("14295/2".parse::<Ratio>()?.decimal(), "7147.5");
    /// assert_eq!("10/3".parse::<Ratio>()?.decimal(), "10/3");
    /// # Ok::<(), herald::time::TimeError>(())
    /// ```
    pub fn decimal(self) -> String {
        let den = u128::from(self.den);
        match (1..=6u32).find(|&k| 10u128.pow(k) % den == 0) {
            Some(digits) if self.den > 1 => {
                let scale = 10u128.pow(digits);
                let scaled = u128::from(self.num) * (scale / den);
                let width = digits as usize;
                format!("{}.{:0width$}", scaled / scale, scaled % scale)
            }
            _ => self.to_string(),
        }
    }

    /// Numerator in lowest terms.
    pub const fn numer(self) -> u64 {
        self.num
    }

    /// Denominator in lowest terms.
    pub const fn denom(self) -> u64 {
        self.den
    }

    /// Whether this is a whole number.
    pub const fn is_integer(self) -> bool {
        self.den == 1
    }

    /// `⌈self⌉`.
    pub const fn ceil(self) -> u64 {
        self.num.div_ceil(self.den)
    }

    /// `⌊self⌋`.
    pub const fn floor(self) -> u64 {
        self.num / self.den
    }

    /// An approximation for display and plotting only; never for a decision.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ratio {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (u128::from(self.num) * u128::from(other.den))
            .cmp(&(u128::from(other.num) * u128::from(self.den)))
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

impl FromStr for Ratio {
    type Err = TimeError;

    /// Parses `7`, `5/2` or `2.5` (surrounding white space allowed).
    fn from_str(s: &str) -> Result<Ratio, TimeError> {
        let text = s.trim();
        let bad = || TimeError::Parse(s.to_owned());
        let digits = |t: &str| -> Result<u64, TimeError> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            t.parse::<u64>().map_err(|_| bad())
        };
        if let Some((n, d)) = text.split_once('/') {
            return Ratio::new(digits(n.trim())?, digits(d.trim())?);
        }
        if let Some((int, frac)) = text.split_once('.') {
            let int = if int.is_empty() { 0 } else { digits(int)? };
            let frac_digits = frac.trim_end_matches('0');
            if frac_digits.len() > 6 {
                return Err(TimeError::Denominator(s.to_owned()));
            }
            let den = 10u64.pow(frac_digits.len() as u32);
            let frac = if frac.is_empty() {
                if int == 0 && text == "." {
                    return Err(bad());
                }
                0
            } else {
                digits(frac)?
                    .checked_div(10u64.pow((frac.len() - frac_digits.len()) as u32))
                    .ok_or_else(bad)?
            };
            let num = int
                .checked_mul(den)
                .and_then(|x| x.checked_add(frac))
                .ok_or_else(bad)?;
            return Ratio::new(num, den);
        }
        Ok(Ratio::integer(digits(text)?))
    }
}

impl serde::Serialize for Ratio {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Ratio {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ratio, D::Error> {
        /// Accepts `"5/2"`, `"2.5"`, `7` and `2.5` (a JSON number is read through its text).
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Ratio;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative rational such as 7, \"5/2\" or \"2.5\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Ratio, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Ratio, E> {
                Ok(Ratio::integer(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Ratio, E> {
                u64::try_from(v)
                    .map(Ratio::integer)
                    .map_err(|_| E::custom("times and parameters are non-negative"))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Ratio, E> {
                // The shortest decimal text that reads back as `v`, then parsed exactly.
                format!("{v}").parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Greatest common divisor.
pub(crate) const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    if a == 0 {
        1
    } else {
        a
    }
}

/// A time in ticks; what a tick is worth is fixed by a [`TimeBase`].
pub type Ticks = u64;

/// How many ticks make one unit of model time.
///
/// Chosen as the least common multiple of the denominators in play, so every parameter and every
/// time in a schedule is a whole number of ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeBase {
    /// Ticks per unit; `1 ..= MAX_TICKS_PER_UNIT`.
    per_unit: u64,
}

impl TimeBase {
    /// The largest supported number of ticks per unit of time.
    pub const MAX_TICKS_PER_UNIT: u64 = 1_000_000_000;
    /// One tick per unit: integer parameters.
    pub const UNIT: TimeBase = TimeBase { per_unit: 1 };

    /// The smallest base in which every ratio given is a whole number of ticks.
    ///
    /// # Errors
    /// [`TimeError::TickBase`] if that needs more than [`TimeBase::MAX_TICKS_PER_UNIT`] ticks.
    pub fn for_ratios(ratios: &[Ratio]) -> Result<TimeBase, TimeError> {
        ratios
            .iter()
            .try_fold(TimeBase::UNIT, |b, r| b.refine(r.den))
    }

    /// The smallest base that is a multiple of both `self` and `den` ticks per unit.
    ///
    /// # Errors
    /// [`TimeError::TickBase`] if the result exceeds [`TimeBase::MAX_TICKS_PER_UNIT`].
    pub fn refine(self, den: u64) -> Result<TimeBase, TimeError> {
        let a = u128::from(self.per_unit);
        let b = u128::from(den.max(1));
        let lcm = a / u128::from(gcd(self.per_unit, den.max(1))) * b;
        if lcm > u128::from(Self::MAX_TICKS_PER_UNIT) {
            return Err(TimeError::TickBase(lcm));
        }
        Ok(TimeBase {
            per_unit: lcm as u64,
        })
    }

    /// Ticks per unit of time.
    pub const fn ticks_per_unit(self) -> u64 {
        self.per_unit
    }

    /// `r` in ticks.
    ///
    /// # Errors
    /// [`TimeError::TickBase`] if `r` is not a whole number of ticks in this base;
    /// [`TimeError::Overflow`] if it does not fit.
    pub fn ticks(self, r: Ratio) -> Result<Ticks, TimeError> {
        if self.per_unit % r.den != 0 {
            return Err(TimeError::TickBase(u128::from(r.den)));
        }
        r.num
            .checked_mul(self.per_unit / r.den)
            .ok_or(TimeError::Overflow)
    }

    /// `units` whole units in ticks.
    ///
    /// # Errors
    /// [`TimeError::Overflow`] if it does not fit.
    pub fn units(self, units: u64) -> Result<Ticks, TimeError> {
        units.checked_mul(self.per_unit).ok_or(TimeError::Overflow)
    }

    /// `t` ticks as an exact ratio of units (reduced).
    ///
    /// Never fails: a ratio with a large numerator is still representable since the denominator
    /// divides the base.
    pub fn ratio(self, t: Ticks) -> Ratio {
        let g = gcd(t, self.per_unit);
        Ratio {
            num: t / g,
            den: self.per_unit / g,
        }
    }

    /// `t` ticks printed as a reduced fraction of units (`15/2`, `7`).
    pub fn format(self, t: Ticks) -> String {
        self.ratio(t).to_string()
    }

    /// `t` ticks as a floating-point number of units, for display only.
    pub fn to_f64(self, t: Ticks) -> f64 {
        t as f64 / self.per_unit as f64
    }

    /// The time `t` (in units of `base`) expressed in this finer base.
    ///
    /// # Errors
    /// [`TimeError::TickBase`] if `base` does not divide this base; [`TimeError::Overflow`].
    pub fn convert(self, t: Ticks, base: TimeBase) -> Result<Ticks, TimeError> {
        if self.per_unit % base.per_unit != 0 {
            return Err(TimeError::TickBase(u128::from(base.per_unit)));
        }
        t.checked_mul(self.per_unit / base.per_unit)
            .ok_or(TimeError::Overflow)
    }
}

/// Checked tick addition.
///
/// # Errors
/// [`TimeError::Overflow`] when the sum does not fit in `u64`.
#[inline]
pub(crate) fn add(a: Ticks, b: Ticks) -> Result<Ticks, TimeError> {
    a.checked_add(b).ok_or(TimeError::Overflow)
}

/// Checked tick multiplication.
///
/// # Errors
/// [`TimeError::Overflow`] when the product does not fit in `u64`.
#[inline]
pub(crate) fn mul(a: Ticks, b: u64) -> Result<Ticks, TimeError> {
    a.checked_mul(b).ok_or(TimeError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        assert_eq!("5/2".parse::<Ratio>().unwrap(), Ratio::new(5, 2).unwrap());
        assert_eq!("2.5".parse::<Ratio>().unwrap(), Ratio::new(5, 2).unwrap());
        assert_eq!("2.50".parse::<Ratio>().unwrap(), Ratio::new(5, 2).unwrap());
        assert_eq!(" 7 ".parse::<Ratio>().unwrap(), Ratio::integer(7));
        assert_eq!("7.".parse::<Ratio>().unwrap(), Ratio::integer(7));
        assert_eq!(".5".parse::<Ratio>().unwrap(), Ratio::new(1, 2).unwrap());
        assert_eq!(
            "0.000001".parse::<Ratio>().unwrap(),
            Ratio::new(1, 1_000_000).unwrap()
        );
        for bad in [
            "", "-1", "a", "1/", "/2", "1/0", "1.2.3", "1e3", ".", "1/2/3", "+3",
        ] {
            assert!(bad.parse::<Ratio>().is_err(), "{bad:?} parsed");
        }
        assert!(matches!(
            "0.0000001".parse::<Ratio>(),
            Err(TimeError::Denominator(_))
        ));
        assert!(matches!(
            "1/1000001".parse::<Ratio>(),
            Err(TimeError::Denominator(_))
        ));
    }

    #[test]
    fn ordering_is_exact() {
        let a = Ratio::new(1, 3).unwrap();
        let b = Ratio::new(333_333, 1_000_000).unwrap();
        assert!(b < a);
        assert_eq!(Ratio::new(5, 2).unwrap().ceil(), 3);
        assert_eq!(Ratio::new(5, 2).unwrap().floor(), 2);
    }

    #[test]
    fn tick_base_is_lcm_and_bounded() {
        let b = TimeBase::for_ratios(&["5/2".parse().unwrap(), "1/3".parse().unwrap()]).unwrap();
        assert_eq!(b.ticks_per_unit(), 6);
        assert_eq!(b.format(45), "15/2");
        let huge = ["1/999983", "1/999979", "1/999961"].map(|s| s.parse::<Ratio>().unwrap());
        assert!(matches!(
            TimeBase::for_ratios(&huge),
            Err(TimeError::TickBase(_))
        ));
    }

    #[test]
    fn overflow_is_an_error() {
        assert_eq!(add(u64::MAX, 1), Err(TimeError::Overflow));
        let b = TimeBase::for_ratios(&["1/2".parse().unwrap()]).unwrap();
        assert_eq!(b.ticks(Ratio::integer(u64::MAX)), Err(TimeError::Overflow));
    }
}
