//! Tests of `src/calibrate` and `src/model/profile.rs`: the PRTT fit on synthetic data, the
//! mode finder, profile checks and conversions. No timed assertions: the probes themselves are
//! exercised by the CLI test of a real `--quick` run (shape only).

use herald::{
    calibrate::{
        capacity_from_curve, distribution, find_modes, fit_prtt, FitError, LogGpFit, PrttPoint,
    },
    model::{
        load_profile, save_profile, CpuIdentity, Distribution, LevelProfile, Mode, Pick,
        ProfileError, TopologySummary, PROFILE_SCHEMA,
    },
    CostModel, Profile,
};

/// Known LogGP parameters (ns; `G` per line).
#[derive(Clone, Copy)]
struct Truth {
    l: f64,
    o_s: f64,
    o_r: f64,
    g: f64,
    big_g: f64,
}

const N: u32 = 10;
const SIZES: [u32; 5] = [1, 2, 4, 8, 16];

/// A deterministic generator (xorshift64*) with uniform and normal draws.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The PRTT model of the calibrate docs, for one size; `noise` is a relative standard
/// deviation applied to every timed quantity of one repetition.
fn prtt(t: Truth, s: u32, d: f64, rng: &mut Rng, noise: f64) -> PrttPoint {
    let mut jitter = |x: f64| x * (1.0 + noise * rng.normal());
    let extra = (f64::from(s) - 1.0) * t.big_g;
    let one = 2.0 * (t.o_s + t.l + t.o_r + extra);
    let n1 = f64::from(N - 1);
    PrttPoint {
        lines: s,
        prtt_1_0: jitter(one),
        prtt_n_0: jitter(one + n1 * (t.g + extra)),
        prtt_n_d: jitter(one + n1 * (t.o_s + d)),
        delay_total: n1 * d,
        o_r: jitter(t.o_r),
    }
}

/// One slice: per size, the median of `reps` noisy repetitions of each quantity.
fn slice(t: Truth, rng: &mut Rng, noise: f64, reps: usize) -> Vec<PrttPoint> {
    SIZES
        .iter()
        .map(|&s| {
            let d = 2.0 * (t.o_s + t.l + t.o_r) + 200.0;
            let runs: Vec<PrttPoint> = (0..reps).map(|_| prtt(t, s, d, rng, noise)).collect();
            let med = |f: &dyn Fn(&PrttPoint) -> f64| {
                let mut v: Vec<f64> = runs.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            PrttPoint {
                lines: s,
                prtt_1_0: med(&|p| p.prtt_1_0),
                prtt_n_0: med(&|p| p.prtt_n_0),
                prtt_n_d: med(&|p| p.prtt_n_d),
                delay_total: med(&|p| p.delay_total),
                o_r: med(&|p| p.o_r),
            }
        })
        .collect()
}

fn within(name: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs(),
        "{name}: got {got}, want {want} ± {}%",
        rel * 100.0
    );
}

fn assert_recovers(fit: &LogGpFit, t: Truth, rel: f64) {
    within("L", fit.l, t.l, rel);
    within("o_s", fit.o_s, t.o_s, rel);
    within("o_r", fit.o_r, t.o_r, rel);
    within("g", fit.g, t.g, rel);
    within("G", fit.big_g_line, t.big_g, rel);
    within("G/byte", fit.big_g_byte, t.big_g / 56.0, rel);
    within("one-way", fit.one_way, t.l + t.o_s + t.o_r, rel);
    within(
        "lambda",
        fit.lambda,
        (t.l + t.o_s + t.o_r) / t.g.max(t.o_s),
        rel,
    );
}

const TRUTHS: [Truth; 3] = [
    Truth {
        l: 40.0,
        o_s: 30.0,
        o_r: 25.0,
        g: 45.0,
        big_g: 12.0,
    },
    Truth {
        l: 120.0,
        o_s: 60.0,
        o_r: 80.0,
        g: 50.0,
        big_g: 20.0,
    },
    Truth {
        l: 1500.0,
        o_s: 300.0,
        o_r: 250.0,
        g: 900.0,
        big_g: 100.0,
    },
];

#[test]
fn fit_recovers_exact_parameters() {
    let mut rng = Rng(1);
    for t in TRUTHS {
        let fit = fit_prtt(N, &slice(t, &mut rng, 0.0, 1)).unwrap();
        assert_recovers(&fit, t, 1e-9);
    }
}

#[test]
fn fit_recovers_parameters_from_noisy_data() {
    let mut rng = Rng(7);
    for t in TRUTHS {
        // 1 % noise per repetition, 31 repetitions per slice: medians and least squares.
        let fit = fit_prtt(N, &slice(t, &mut rng, 0.01, 31)).unwrap();
        assert_recovers(&fit, t, 0.05);
    }
}

#[test]
fn fit_ignores_sizes_past_a_change_of_regime() {
    // Sizes 8 and 16 take 5× the per-line gap (another hardware regime): the one-line values
    // still come from the small sizes.
    let t = TRUTHS[0];
    let mut rng = Rng(3);
    let mut points = slice(t, &mut rng, 0.0, 1);
    for p in points.iter_mut().filter(|p| p.lines >= 8) {
        p.prtt_n_0 += f64::from(N - 1) * 4.0 * t.big_g * f64::from(p.lines);
    }
    assert_recovers(&fit_prtt(N, &points).unwrap(), t, 1e-9);
}

#[test]
fn bimodal_latency_gives_two_modes_of_l_and_lambda() {
    // The hop switches between a near and a far regime; each slice sees one regime.
    let near = Truth {
        l: 48.0,
        o_s: 30.0,
        o_r: 30.0,
        g: 40.0,
        big_g: 10.0,
    };
    let far = Truth { l: 225.0, ..near };
    let mut rng = Rng(11);
    let mut l = Vec::new();
    let mut lambda = Vec::new();
    for i in 0..400 {
        let t = if (i / 50) % 3 == 2 { far } else { near }; // blocks 2 and 5 of 8: a quarter far
        let fit = fit_prtt(N, &slice(t, &mut rng, 0.01, 15)).unwrap();
        l.push((fit.l, 1.0));
        lambda.push((fit.lambda, 1.0));
    }
    let d = distribution(&l);
    assert_eq!(d.modes.len(), 2, "{:?}", d.modes);
    let (major, minor) = (&d.modes[0], &d.modes[1]);
    within("near L", major.center, near.l, 0.05);
    within("far L", minor.center, far.l, 0.05);
    assert!((major.share - 0.75).abs() < 0.02, "{}", major.share);
    // The median is an observed value of one mode, never a blend of the two.
    assert!(
        (d.median - near.l).abs() < 0.05 * near.l || (d.median - far.l).abs() < 0.05 * far.l,
        "median {} between the modes",
        d.median
    );
    let dl = distribution(&lambda);
    assert_eq!(dl.modes.len(), 2);
    within("near λ", dl.modes[0].center, 108.0 / 40.0, 0.05);
    within("far λ", dl.modes[1].center, 285.0 / 40.0, 0.05);
}

#[test]
fn fit_rejects_bad_input() {
    let p = PrttPoint {
        lines: 1,
        prtt_1_0: 100.0,
        prtt_n_0: 200.0,
        prtt_n_d: 300.0,
        delay_total: 50.0,
        o_r: 10.0,
    };
    assert_eq!(fit_prtt(1, &[p, p]), Err(FitError::SmallN(1)));
    assert_eq!(fit_prtt(10, &[p, p]), Err(FitError::TooFewSizes));
    assert_eq!(fit_prtt(10, &[p]), Err(FitError::TooFewSizes));
    let nan = PrttPoint { o_r: f64::NAN, ..p };
    assert_eq!(fit_prtt(10, &[p, nan]), Err(FitError::NotFinite));
}

/// Normal samples around `center` with relative spread `rel`.
fn cluster(rng: &mut Rng, center: f64, rel: f64, count: usize) -> Vec<(f64, f64)> {
    (0..count)
        .map(|_| (center * (1.0 + rel * rng.normal()), 1.0))
        .collect()
}

#[test]
fn mode_finder_separates_two_modes() {
    let mut rng = Rng(5);
    for (a, b, share) in [(48.0, 225.0, 0.5), (48.0, 225.0, 0.2), (100.0, 160.0, 0.4)] {
        let total = 600;
        let nb = (total as f64 * share) as usize;
        let mut samples = cluster(&mut rng, a, 0.04, total - nb);
        samples.extend(cluster(&mut rng, b, 0.04, nb));
        let modes = find_modes(&samples);
        assert_eq!(modes.len(), 2, "{a}/{b}: {modes:?}");
        let mut centers: Vec<&Mode> = modes.iter().collect();
        centers.sort_by(|x, y| x.center.total_cmp(&y.center));
        within("low mode", centers[0].center, a, 0.03);
        within("high mode", centers[1].center, b, 0.03);
        within("high share", centers[1].share, share, 0.05);
        assert!(centers[0].p90 < centers[1].p10);
        assert_eq!(centers[0].samples + centers[1].samples, total);
    }
}

#[test]
fn mode_finder_reports_one_mode_for_unimodal_data() {
    let mut rng = Rng(9);
    for (rel, count) in [(0.02, 50), (0.05, 300), (0.10, 3000), (0.3, 1000)] {
        let samples = cluster(&mut rng, 120.0, rel, count);
        let modes = find_modes(&samples);
        assert_eq!(modes.len(), 1, "rel {rel}, n {count}: {modes:?}");
        within("center", modes[0].center, 120.0, 0.03);
        assert_eq!(modes[0].share, 1.0);
    }
    // A few outliers (preempted slices) do not make a mode.
    let mut samples = cluster(&mut rng, 50.0, 0.03, 500);
    samples.extend((0..8).map(|i| (5000.0 + f64::from(i), 1.0)));
    assert_eq!(find_modes(&samples).len(), 1);
    // Constant data, and negative values (a fitted L may be negative).
    assert_eq!(find_modes(&vec![(7.0, 1.0); 100]).len(), 1);
    let negative: Vec<(f64, f64)> = cluster(&mut rng, -20.0, 0.1, 200);
    assert_eq!(find_modes(&negative).len(), 1);
    assert!(find_modes(&[]).is_empty());
}

#[test]
fn mode_shares_are_time_shares() {
    // Equal sample counts, but slices of the second regime lasted three times longer.
    let mut rng = Rng(13);
    let mut samples = cluster(&mut rng, 48.0, 0.03, 200);
    samples.extend(
        cluster(&mut rng, 225.0, 0.03, 200)
            .into_iter()
            .map(|(v, _)| (v, 3.0)),
    );
    let modes = find_modes(&samples);
    assert_eq!(modes.len(), 2);
    within("dominant center", modes[0].center, 225.0, 0.03);
    within("dominant share", modes[0].share, 0.75, 0.01);
}

#[test]
fn capacity_curve() {
    assert_eq!(
        capacity_from_curve(&[(1, 50.0), (2, 50.5), (3, 90.0)], 0.25),
        Some((2, false))
    );
    assert_eq!(
        capacity_from_curve(&[(1, 50.0), (2, 51.0)], 0.25),
        Some((2, true))
    );
    assert_eq!(
        capacity_from_curve(&[(1, 50.0), (2, 80.0), (4, 55.0)], 0.25),
        Some((1, false))
    );
    assert_eq!(capacity_from_curve(&[], 0.25), None);
}

// ---------------------------------------------------------------- profiles

fn dist(center: f64) -> Option<Distribution> {
    Some(Distribution {
        median: center,
        p10: center - 0.5,
        p90: center + 0.5,
        samples: 10,
        modes: vec![Mode {
            center,
            p10: center - 0.5,
            p90: center + 0.5,
            share: 1.0,
            samples: 10,
            regime_hop_ns: None,
        }],
        settled: true,
    })
}

fn level(l: f64, o_s: f64, o_r: f64, g: f64, big_g: f64) -> LevelProfile {
    LevelProfile {
        name: "l3".into(),
        depth: 3,
        pair: Some([0, 1]),
        slices: 10,
        raw_hop_ns: dist(50.0),
        one_way_ns: dist(l + o_s + o_r),
        l_ns: dist(l),
        o_s_ns: dist(o_s),
        o_r_ns: dist(o_r),
        g_ns: dist(g),
        big_g_ns_per_byte: dist(big_g),
        // Dyadic values survive the JSON round trip exactly.
        lambda: dist(((l + o_s + o_r) / g.max(o_s) * 8.0).round() / 8.0),
        capacity: None,
        note: None,
        runtime: None,
        pieces: None,
    }
}

fn profile(host: &str) -> Profile {
    Profile {
        schema: PROFILE_SCHEMA,
        host: host.into(),
        cpu: herald::model::this_cpu(),
        date: "2026-01-01T00:00:00Z".into(),
        tool: "test".into(),
        mode: "quick".into(),
        duration_s: 1.0,
        clock_overhead_ns: 20.0,
        clock_resolution_ns: Some(10.0),
        topology: TopologySummary {
            pus: 2,
            os_indices: vec![0, 1],
            summary: "machine 1×2".into(),
            levels: Vec::new(),
        },
        levels: vec![level(20.25, 30.0, 25.0, 40.0, 0.3125)],
        unsettled: Vec::new(),
        switch_ns: dist(1500.0),
        spin_ns: None,
        combine_ns: Vec::new(),
        posted: Vec::new(),
        posted_allreduce: Vec::new(),
    }
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("herald-cal-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn profile_round_trips_through_json_and_files() {
    let p = profile(&herald::model::host_name());
    let json = p.to_json();
    for key in [
        "\"L_ns\"",
        "\"o_s_ns\"",
        "\"o_r_ns\"",
        "\"g_ns\"",
        "\"G_ns_per_byte\"",
        "\"lambda\"",
        "\"capacity\": null",
        "\"schema\": 1",
    ] {
        assert!(json.contains(key), "{key} missing in {json}");
    }
    assert_eq!(Profile::from_json(&json).unwrap(), p);
    let path = temp("round.json");
    save_profile(&p, &path).unwrap();
    assert_eq!(load_profile(&path, false).unwrap(), p);
}

#[test]
fn malformed_and_mismatched_profiles_give_typed_errors() {
    assert!(matches!(
        Profile::from_json("not json"),
        Err(ProfileError::Malformed(_))
    ));
    assert!(matches!(
        Profile::from_json("{}"),
        Err(ProfileError::Malformed(_))
    ));
    assert!(matches!(
        Profile::from_json(r#"{"schema": 1, "host": 3}"#),
        Err(ProfileError::Malformed(_))
    ));
    let mut other = profile(&herald::model::host_name());
    other.schema = PROFILE_SCHEMA + 1;
    let json = serde_json::to_string(&other).unwrap();
    assert_eq!(
        Profile::from_json(&json),
        Err(ProfileError::Schema {
            found: PROFILE_SCHEMA + 1,
            expected: PROFILE_SCHEMA
        })
    );
    let path = temp("schema.json");
    std::fs::write(&path, &json).unwrap();
    assert!(matches!(
        load_profile(&path, false),
        Err(ProfileError::Schema { .. })
    ));
    assert_eq!(
        load_profile(&path, true).unwrap().schema,
        PROFILE_SCHEMA + 1
    );

    let foreign = profile("some-other-host.invalid");
    let path = temp("host.json");
    save_profile(&foreign, &path).unwrap();
    match load_profile(&path, false) {
        Err(ProfileError::Host { found, expected }) => {
            assert_eq!(found, "some-other-host.invalid");
            assert_eq!(expected, herald::model::host_name());
        }
        other => panic!("expected a host error, got {other:?}"),
    }
    assert_eq!(load_profile(&path, true).unwrap(), foreign);
    assert!(matches!(
        load_profile(&temp("missing.json"), false),
        Err(ProfileError::Io { .. })
    ));
    assert!(matches!(foreign.level("l9"), Err(ProfileError::NoLevel(_))));
}

/// A `/proc/cpuinfo` of two processors in the layout Linux prints on x86 (tabs before the
/// colon, the second block different so that only the first may be read).
const INTEL_CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
model\t\t: 167\nmodel name\t: Intel(R) Xeon(R)   Processor\nstepping\t: 1\nflags\t\t: fpu vme\n\n\
processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n";

#[test]
fn a_cpu_is_named_by_the_first_processor_of_cpuinfo() {
    let intel = CpuIdentity::from_cpuinfo(INTEL_CPUINFO).unwrap();
    assert_eq!(intel.vendor.as_deref(), Some("GenuineIntel"));
    assert_eq!(intel.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
    assert_eq!(intel.family.as_deref(), Some("6"));
    assert_eq!(intel.model_number.as_deref(), Some("167"));
    assert_eq!(intel.stepping.as_deref(), Some("1"));
    assert_eq!(
        intel.to_string(),
        "GenuineIntel Intel(R) Xeon(R) Processor (family 6, model 167, stepping 1)"
    );
    // Leading blank lines and spaces in place of tabs read alike.
    let spaced = "\n\nvendor_id : GenuineIntel\ncpu family : 6\nmodel : 167\n\
                  model name : Intel(R) Xeon(R) Processor\nstepping : 1\n";
    assert_eq!(CpuIdentity::from_cpuinfo(spaced).as_ref(), Some(&intel));
    // An ARM machine names its implementer and part; what it leaves out stays absent.
    let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\
               CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
    let arm = CpuIdentity::from_cpuinfo(arm).unwrap();
    assert_eq!(arm.vendor.as_deref(), Some("0x41"));
    assert_eq!(arm.model, None);
    assert_eq!(arm.to_string(), "0x41 (family 8, model 0xd0c, stepping 1)");
    assert_ne!(arm, intel);
    // Nothing that names a processor: no identity.
    assert_eq!(CpuIdentity::from_cpuinfo(""), None);
    assert_eq!(
        CpuIdentity::from_cpuinfo("processor : 0\nflags : fpu\n"),
        None
    );
    assert_eq!(CpuIdentity::from_cpuinfo("vendor_id :\n"), None);
}

#[test]
fn a_profile_of_another_processor_is_refused_unless_forced() {
    let other = CpuIdentity::from_cpuinfo(
        "vendor_id : NoSuchVendor\ncpu family : 99\nmodel : 1\nstepping : 0\n",
    );
    let mut foreign = profile(&herald::model::host_name());
    foreign.cpu = other.clone();
    let json = foreign.to_json();
    assert!(json.contains("\"vendor\": \"NoSuchVendor\""), "{json}");
    assert_eq!(Profile::from_json(&json).unwrap(), foreign);
    let path = temp("cpu.json");
    save_profile(&foreign, &path).unwrap();
    match (herald::model::this_cpu(), load_profile(&path, false)) {
        (Some(here), Err(ProfileError::Cpu { found, expected })) => {
            assert_eq!(found, other.as_ref().unwrap().to_string());
            assert_eq!(expected, here.to_string());
        }
        // A machine that names no processor has nothing to compare.
        (None, Ok(p)) => assert_eq!(p, foreign),
        (here, got) => panic!("this machine's cpu {here:?}: expected a cpu error, got {got:?}"),
    }
    assert_eq!(load_profile(&path, true).unwrap(), foreign);
    // A profile that names no processor (written before herald recorded it) loads.
    foreign.cpu = None;
    let json = foreign.to_json();
    assert!(!json.contains("\"cpu\""), "{json}");
    save_profile(&foreign, &path).unwrap();
    assert_eq!(load_profile(&path, false).unwrap(), foreign);
    // This machine's own processor passes.
    foreign.cpu = herald::model::this_cpu();
    save_profile(&foreign, &path).unwrap();
    assert_eq!(load_profile(&path, false).unwrap(), foreign);
}

#[test]
fn held_copy_points_load_from_older_profiles_and_must_pair_up() {
    // The thirtieth session's profile has three points; they load as three.
    let text = std::fs::read_to_string("docs/data/profile-2026-11-30-AB.json").unwrap();
    let old = Profile::from_json_forced(&text).unwrap();
    let r = old.level("l3").unwrap().runtime.as_ref().unwrap();
    assert_eq!(r.held_bytes.as_deref(), Some(&[65536, 262144, 1048576][..]));
    assert_eq!(r.held_extra_ns.as_ref().map(Vec::len), Some(3));
    // One size fewer than points, or sizes out of order: malformed, not silently paired.
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let levels = v["levels"].as_array_mut().unwrap();
        let l3 = levels.iter_mut().find(|l| l["name"] == "l3").unwrap();
        f(&mut l3["runtime"]["held_bytes"]);
        Profile::from_json_forced(&v.to_string())
    };
    let shorter = edit(&|b| {
        b.as_array_mut().unwrap().pop();
    });
    assert!(matches!(shorter, Err(ProfileError::Malformed(m)) if m.contains("held_bytes")));
    let unordered = edit(&|b| b.as_array_mut().unwrap().swap(0, 1));
    assert!(matches!(unordered, Err(ProfileError::Malformed(m)) if m.contains("ascending")));
    assert!(edit(&|_| {}).is_ok());
}

#[test]
fn forwarded_copy_points_are_optional_and_must_pair_up() {
    // Profiles from before the fifty-third session have none: they load without them.
    let text = std::fs::read_to_string("docs/data/profile-2026-11-30-AB.json").unwrap();
    let old = Profile::from_json_forced(&text).unwrap();
    let r = old.level("l3").unwrap().runtime.as_ref().unwrap();
    assert!(r.forwarded_extra_ns.is_none() && r.forwarded_bytes.is_none());
    // Three points at three sizes load; one size fewer, sizes out of order, or points without
    // sizes are malformed.
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let levels = v["levels"].as_array_mut().unwrap();
        let l3 = levels.iter_mut().find(|l| l["name"] == "l3").unwrap();
        let rt = &mut l3["runtime"];
        rt["forwarded_extra_ns"] = rt["held_extra_ns"].clone();
        rt["forwarded_bytes"] = serde_json::json!([65536, 262144, 1048576]);
        f(rt);
        Profile::from_json_forced(&v.to_string())
    };
    let loaded = edit(&|_| {}).unwrap();
    let r = loaded.level("l3").unwrap().runtime.as_ref().unwrap();
    assert_eq!(
        r.forwarded_bytes.as_deref(),
        Some(&[65536, 262144, 1048576][..])
    );
    assert_eq!(r.forwarded_extra_ns.as_ref().map(Vec::len), Some(3));
    let shorter = edit(&|rt| {
        rt["forwarded_bytes"].as_array_mut().unwrap().pop();
    });
    assert!(matches!(shorter, Err(ProfileError::Malformed(m)) if m.contains("forwarded_bytes")));
    let unordered = edit(&|rt| rt["forwarded_bytes"].as_array_mut().unwrap().swap(0, 1));
    assert!(matches!(unordered, Err(ProfileError::Malformed(m)) if m.contains("ascending")));
    let no_sizes = edit(&|rt| {
        rt.as_object_mut().unwrap().remove("forwarded_bytes");
    });
    assert!(matches!(no_sizes, Err(ProfileError::Malformed(m)) if m.contains("forwarded_bytes")));
}

#[test]
fn levels_convert_to_exact_models() {
    let p = profile("h");
    let l3 = p.level("l3").unwrap();
    let logp = l3.logp(Pick::Dominant).unwrap();
    // 1 ns grid: L = 20, o = (30 + 25)/2, g = 40; G on a 1/1000 grid: 0.313.
    let params: Vec<String> = logp.params().iter().map(|(_, r)| r.to_string()).collect();
    assert_eq!(params, ["20", "55/2", "40", "313/1000"]);
    // λ = (20 + 30 + 25) / max(40, 30) = 75/40.
    assert_eq!(
        l3.postal(Pick::Dominant).unwrap().lambda().to_string(),
        "15/8"
    );

    // A negative L keeps the one-way time: L = 0, o = (−10 + 60 + 70)/2.
    let neg = level(-10.0, 60.0, 70.0, 20.0, 0.5);
    let logp = neg.logp(Pick::Median).unwrap();
    assert_eq!(
        (logp.l().to_string(), logp.o().to_string()),
        ("0".into(), "60".into())
    );
    assert_eq!(neg.postal(Pick::Median).unwrap().lambda().to_string(), "2");

    // Picks taken from separate distributions can sum to no positive time (a slice-by-slice
    // fit on a loaded host: L = −300 with o_s = o_r = 100, while the slices' one-way times
    // have median 90). Then L + 2o is the measured one-way time: L = 0, o = 45.
    let mut mixed = level(-300.0, 100.0, 100.0, 20.0, 0.5);
    mixed.one_way_ns = dist(90.0);
    let logp = mixed.logp(Pick::Median).unwrap();
    assert_eq!(
        (logp.l().to_string(), logp.o().to_string()),
        ("0".into(), "45".into())
    );
    // … and where that is not positive either, no model: a typed error, never L + 2o = 0.
    mixed.one_way_ns = dist(-5.0);
    assert!(matches!(
        mixed.logp(Pick::Median),
        Err(ProfileError::Model(_))
    ));

    // λ below 1 is clamped to 1 (a sender slower than the latency).
    let slow = level(0.0, 100.0, 1.0, 500.0, 0.0);
    assert_eq!(
        slow.postal(Pick::Slowest).unwrap().lambda().to_string(),
        "1"
    );

    // Unmeasured levels are typed errors.
    let mut none = level(1.0, 1.0, 1.0, 1.0, 0.0);
    none.g_ns = None;
    assert!(matches!(
        none.logp(Pick::Dominant),
        Err(ProfileError::NotMeasured {
            parameter: "g_ns",
            ..
        })
    ));
}

#[test]
fn picks_choose_a_mode_never_a_blend() {
    let d = Distribution {
        median: 50.0,
        p10: 47.0,
        p90: 230.0,
        samples: 100,
        modes: vec![
            Mode {
                center: 48.0,
                p10: 46.0,
                p90: 50.0,
                share: 0.7,
                samples: 70,
                regime_hop_ns: None,
            },
            Mode {
                center: 225.0,
                p10: 220.0,
                p90: 231.0,
                share: 0.3,
                samples: 30,
                regime_hop_ns: None,
            },
        ],
        settled: true,
    };
    assert!(d.is_multimodal());
    assert_eq!(d.pick(Pick::Dominant), 48.0);
    assert_eq!(d.pick(Pick::Slowest), 225.0);
    assert_eq!(d.pick(Pick::Median), 50.0);
}
