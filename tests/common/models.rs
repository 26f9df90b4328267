//! Models and algorithm lists shared by the property and redundancy tests.

#![allow(dead_code)] // each test binary that shares this file uses part of it

use herald::{Algorithm, LogP, Model, Ratio};
use proptest::prelude::*;

/// The integer `x` as a rational.
pub(crate) fn r(x: u64) -> Ratio {
    Ratio::integer(x)
}

/// LogP models with integer `L < 12`, `o < 5`, `g < 6`, `G < 3`, `1 ≤ bytes < max_bytes` and
/// `L + 2o > 0`.
pub(crate) fn logp_models(max_bytes: u64) -> impl Strategy<Value = Model> {
    (0u64..12, 0u64..5, 0u64..6, 0u64..3, 1u64..max_bytes).prop_filter_map(
        "L + 2o > 0",
        |(l, o, g, big_g, bytes)| {
            LogP::new(r(l), r(o), r(g), r(big_g))
                .and_then(|m| m.with_bytes(bytes))
                .ok()
                .map(Model::from)
        },
    )
}

/// The classic trees, which every flat model takes (k-nomial with two radices).
pub(crate) fn classic_trees() -> Vec<Algorithm> {
    vec![
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Knomial { radix: 3 },
        Algorithm::Knomial { radix: 5 },
        Algorithm::Chain,
        Algorithm::Star,
        Algorithm::ScatterAllgather,
    ]
}
