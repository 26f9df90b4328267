//! Test fixtures shared by the unit tests of the model, the calibration and the runtime.

use super::{Mode, Profile};
use crate::topology::TopologySource;
use crate::Hierarchy;

/// A mode of one value: `center` at its p10 and p90 too, `share` of the time, 10 samples,
/// measured in the regime of hop `hop` where given.
pub(crate) fn point_mode(center: f64, share: f64, hop: Option<f64>) -> Mode {
    Mode {
        center,
        p10: center,
        p90: center,
        share,
        samples: 10,
        regime_hop_ns: hop,
    }
}

/// The profile `tests/data/{file}` (read without its host check) and a machine of two cores
/// like the development hosts, one PU each.
pub(crate) fn on_two_cores(file: &str) -> (Profile, Hierarchy) {
    let text = std::fs::read_to_string(format!("tests/data/{file}")).unwrap();
    let profile = Profile::from_json_forced(&text).unwrap();
    let machine =
        TopologySource::from_options(Some("package:1 numa:1 l3:1 l2:2 l1:1 core:1 pu:1"), None)
            .unwrap()
            .load()
            .unwrap();
    (profile, machine)
}
