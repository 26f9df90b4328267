//! The runtime's cost model (issue 17, part 1): every expectation here is derived by hand from
//! the model's stated rules and the calibration's definitions (module docs of
//! `herald::model::RuntimeCosts`), never copied from the model's output.

mod common {
    pub(crate) mod watch;
}

use common::watch::watchdog;
use herald::{
    generate,
    model::{Distribution, Mode, Pick, ProfileError, RuntimeCalibration, RuntimeCosts, Transport},
    plan::{plan_for_runtime, RuntimeChoice},
    runtime::{DefaultSchedule, Planned},
    schedule::Collective,
    sim::{predict_runtime, PredictError, RING_LINES},
    time::TimeBase,
    Algorithm, Comm, CommOptions, Model, PlanRequest, Postal, Profile, Ratio, Request, Schedule,
    Team, TopologySource,
};

/// The test profile's `l3` level (tests/data/profile-2core.json, dominant modes): `L = 20`,
/// `o_s = 30`, `o_r = 25`, `g = 40` ns, `G = 0.25` ns/byte; thread handoff 800 ns.
const HOP_PS: u64 = (20 + 30 + 25) * 1000;
const GAP_PS: u64 = 40 * 1000; // max(g, (o_s + o_r)/2)
const SWITCH_PS: u64 = 800 * 1000;

/// A broadcast of `bytes` bytes from rank 0 among `n` ranks.
fn request(n: u32, bytes: u64) -> PlanRequest {
    PlanRequest {
        n,
        root: 0,
        bytes,
        blocks: None,
    }
}

fn one(v: f64) -> Distribution {
    Distribution {
        median: v,
        p10: v,
        p90: v,
        samples: 1,
        modes: vec![Mode {
            center: v,
            p10: v,
            p90: v,
            share: 1.0,
            samples: 1,
            regime_hop_ns: None,
        }],
        settled: true,
    }
}

fn base() -> Profile {
    let text = std::fs::read_to_string("tests/data/profile-2core.json").unwrap();
    Profile::from_json_forced(&text).unwrap()
}

/// Runtime measurements: a one-line broadcast `one_line` ns; `burst` ns per line up to 16 lines,
/// `line` ns per line beyond; single copy `direct` ns for 4 KiB, then `copy` ns per byte up to
/// 64 KiB and `large` ns per byte beyond.
#[derive(Clone, Copy)]
struct Rt {
    one_line: f64,
    burst: f64,
    line: f64,
    direct: f64,
    copy: f64,
    large: f64,
}

const RT: Rt = Rt {
    one_line: 300.0,
    burst: 9.5,
    line: 9.5,
    direct: 2000.0,
    copy: 0.05,
    large: 0.05,
};

/// The test profile with runtime measurements `rt` on `l3`, plus a per-block single-copy cost
/// and a one-line broadcast between two ranks of one PU (`None`: not measured).
fn profile_with(rt: Rt, block_ns: Option<f64>, shared_ns: Option<f64>) -> Profile {
    let mut p = profile(rt);
    let r = l3_runtime(&mut p);
    r.direct_block_ns = block_ns.map(one);
    r.shared_one_line_ns = shared_ns.map(one);
    p
}

/// The test profile with runtime measurements `rt` on `l3`.
fn profile(rt: Rt) -> Profile {
    let mut p = base();
    let l3 = p.levels.iter_mut().find(|l| l.name == "l3").unwrap();
    l3.runtime = Some(RuntimeCalibration {
        one_line_ns: one(rt.one_line),
        burst_line_ns: one(rt.burst),
        burst_lines: 16,
        line_ns: one(rt.line),
        stream_bytes: [16 << 10, 256 << 10],
        direct_ns: one(rt.direct),
        copy_ns_per_byte: one(rt.copy),
        copy_large_ns_per_byte: one(rt.large),
        direct_bytes: [4 << 10, 64 << 10, 1 << 20],
        chunk_bytes: 64 << 10,
        direct_block_ns: None,
        direct_exec_ns: None,
        shared_one_line_ns: None,
        copy_huge_ns_per_byte: None,
        huge_bytes: None,
        copy_upper_ns_per_byte: None,
        upper_bytes: None,
        copy_mid_ns_per_byte: None,
        mid_bytes: None,
        exec_ns: None,
        exec_short_ns: None,
        stream_two_ns: None,
        posted_ns: None,
        posted_line_ns: None,
        posted_bytes: None,
        posted_two_ns: None,
        posted_curve_ns: None,
        posted_curve_bytes: None,
        posted_long_line_ns: None,
        posted_long_bytes: None,
        shared_posted_ns: None,
        shared_posted_line_ns: None,
        shared_posted_bytes: None,
        shared_posted_read_line_ns: None,
        shared_posted_read_bytes: None,
        shared_copy_ns_per_byte: None,
        shared_copy_large_ns_per_byte: None,
        shared_copy_huge_ns_per_byte: None,
        held_extra_ns: None,
        held_bytes: None,
        footprint_extra_ns_per_byte: None,
        footprint_bytes: None,
        forwarded_extra_ns: None,
        forwarded_bytes: None,
        stamp_load_ns: None,
    });
    p
}

/// `p`'s runtime calibration of `l3`, the measured level (set by [`profile`]).
fn l3_runtime(p: &mut Profile) -> &mut RuntimeCalibration {
    let l3 = p.levels.iter_mut().find(|l| l.name == "l3").unwrap();
    l3.runtime.as_mut().unwrap()
}

/// `cores` cores under one L3 (so every pair meets at the measured level).
fn machine(cores: usize) -> herald::Hierarchy {
    TopologySource::from_options(Some(&format!("l3:1 core:{cores} pu:1")), None)
        .unwrap()
        .load()
        .unwrap()
}

fn tree(a: Algorithm, n: u32, blocks: u32) -> Schedule {
    let model = Model::from(Postal::new(Ratio::ONE).unwrap());
    generate(&Request::broadcast(a, n, blocks, 0), &model).unwrap()
}

/// Stream lines of a `bytes`-byte broadcast: an 8-byte header, then the payload, 56 bytes a line.
fn lines(bytes: u64) -> u64 {
    (8 + bytes).div_ceil(56)
}

fn predict(p: &Profile, h: &herald::Hierarchy, s: &Schedule, bytes: u64, t: Transport) -> u64 {
    let costs = RuntimeCosts::from_profile(p, h, Pick::Dominant).unwrap();
    predict_runtime(s, &costs, bytes, t).unwrap().makespan_ps
}

#[test]
fn two_ranks_reproduce_the_calibration_points() {
    // The model is fitted on 2-rank broadcasts; on 2 ranks it must give them back.
    let rt = Rt {
        burst: 16.0,
        line: 9.5,
        copy: 0.05,
        large: 0.2,
        ..RT
    };
    let p = profile(rt);
    let h = machine(2);
    let s = tree(Algorithm::Binomial, 2, 1);
    let stream = |b: u64| predict(&p, &h, &s, b, Transport::Stream);
    assert_eq!(stream(48), 300_000);
    // The short stream: 16 full lines.
    let burst = 16 * 56 - 8;
    assert_eq!(lines(burst), 16);
    assert_eq!(stream(burst) - stream(48), 15 * 16_000);
    // The sustained line cost: the difference of two long streams.
    let (s1, s2) = (16u64 << 10, 256u64 << 10);
    assert_eq!(stream(s2) - stream(s1), (lines(s2) - lines(s1)) * 9_500);
    // Single copy: 2 µs for 4 KiB, 50 ps per byte to 64 KiB, 200 ps per byte beyond (1 ps of
    // rounding per chunk).
    let direct = |b: u64| predict(&p, &h, &s, b, Transport::Direct);
    let close = |got: u64, want: u64, b: u64| {
        assert!(
            got.abs_diff(want) <= b.div_ceil(64 << 10),
            "{b}: {got} vs {want}"
        );
    };
    close(direct(4096), 2_000_000, 4096);
    close(direct(64 << 10) - direct(4096), 60 * 1024 * 50, 64 << 10);
    close(
        direct(1 << 20) - direct(64 << 10),
        960 * 1024 * 200,
        1 << 20,
    );
}

#[test]
fn copies_past_the_last_calibrated_size_take_the_huge_slope() {
    // 1 MiB → 4 MiB at the measured 0.5 ns per byte when the profile has that point, else at
    // the 64 KiB → 1 MiB slope (profiles written before it was measured).
    let rt = Rt { large: 0.2, ..RT };
    let h = machine(2);
    let s = tree(Algorithm::Binomial, 2, 1);
    let (mib, four) = (1u64 << 20, 4u64 << 20);
    let rounding = four.div_ceil(64 << 10);
    let old = profile(rt);
    let step = |p: &Profile| {
        predict(p, &h, &s, four, Transport::Direct) - predict(p, &h, &s, mib, Transport::Direct)
    };
    assert!(
        step(&old).abs_diff(3 * mib * 200) <= rounding,
        "{}",
        step(&old)
    );
    let mut new = old.clone();
    let r = l3_runtime(&mut new);
    r.copy_huge_ns_per_byte = Some(one(0.5));
    r.huge_bytes = Some(four);
    assert!(
        step(&new).abs_diff(3 * mib * 500) <= rounding,
        "{}",
        step(&new)
    );
    // Up to 1 MiB nothing changes.
    for b in [4096, 64 << 10, mib] {
        assert_eq!(
            predict(&new, &h, &s, b, Transport::Direct),
            predict(&old, &h, &s, b, Transport::Direct)
        );
    }
}

#[test]
fn a_middle_point_bends_the_copy_below_64_kib_and_keeps_both_ends() {
    // The calibrated calls: 4 KiB at 2000 ns, 16 KiB 0.2 ns per byte more (+2457.6 ns), 64
    // KiB at 0.05 ns per byte over 4 KiB (+3072 ns). With the middle point, 4 → 16 KiB takes
    // 0.2 ns a byte and 16 → 64 KiB the rest: (3072 − 2457.6) / 49152 = 0.0125 ns a byte.
    // Without it, one line of 0.05 from 4 to 64 KiB. Either way 4 KiB and 64 KiB stay where
    // they were measured.
    let h = machine(2);
    let s = tree(Algorithm::Binomial, 2, 1);
    let (k4, k16, k64) = (4096u64, 16u64 << 10, 64u64 << 10);
    let old = profile(RT);
    let mut new = old.clone();
    let r = l3_runtime(&mut new);
    r.copy_mid_ns_per_byte = Some(one(0.2));
    r.mid_bytes = Some(k16);
    let t = |p: &Profile, b: u64| predict(p, &h, &s, b, Transport::Direct);
    // Rounding: ps per byte from ns per byte (a few ps over these spans).
    let near =
        |got: u64, want: f64| assert!((got as f64 - want).abs() <= 8.0, "{got} ps against {want}");
    for b in [k4, k64, 1 << 20] {
        near(t(&new, b), t(&old, b) as f64);
    }
    near(t(&new, k16) - t(&new, k4), 12288.0 * 200.0);
    near(t(&old, k16) - t(&old, k4), 12288.0 * 50.0);
    near(t(&new, 32 << 10) - t(&new, k16), 16384.0 * 12.5);
    // A middle point steeper than the whole span allows (past 5×) makes the rest free, never
    // negative: 64 KiB then costs more than measured, the 16 KiB point stays.
    let mut steep = new.clone();
    l3_runtime(&mut steep).copy_mid_ns_per_byte = Some(one(0.5));
    near(t(&steep, k64) - t(&steep, k16), 0.0);
    near(t(&steep, k16) - t(&steep, k4), 12288.0 * 500.0);
    // A profile whose middle point lies outside (4 KiB, 64 KiB), or lacks its size: malformed.
    point_sizes_are_checked(&new, "mid_bytes", [Some(k4), Some(k64), None], |r, b| {
        r.mid_bytes = b
    });
}

/// `good` reads back; with each of `bad` set by `set` on `l3`'s runtime calibration it is
/// malformed, the message naming `name`.
fn point_sizes_are_checked(
    good: &Profile,
    name: &str,
    bad: [Option<u64>; 3],
    set: impl Fn(&mut RuntimeCalibration, Option<u64>),
) {
    let json = |p: &Profile| serde_json::to_string(p).unwrap();
    for bad in bad {
        let mut p = good.clone();
        set(l3_runtime(&mut p), bad);
        assert!(
            matches!(
                Profile::from_json_forced(&json(&p)),
                Err(ProfileError::Malformed(m)) if m.contains(name)
            ),
            "{bad:?}"
        );
    }
    assert!(Profile::from_json_forced(&json(good)).is_ok());
}

#[test]
fn copies_past_the_upper_point_take_its_slope_up_to_the_next_point() {
    // A profile with the 256 KiB point: 64 KiB → 256 KiB at the large slope (0.2 ns per
    // byte), 256 KiB → 1 MiB at the upper one (0.1), then the huge one (0.5). Without it the
    // large slope covers 64 KiB → 1 MiB.
    let rt = Rt { large: 0.2, ..RT };
    let h = machine(2);
    let s = tree(Algorithm::Binomial, 2, 1);
    let (k64, k256, mib, four) = (64u64 << 10, 256u64 << 10, 1u64 << 20, 4u64 << 20);
    let rounding = four.div_ceil(k64);
    let mut old = profile(rt);
    let r = l3_runtime(&mut old);
    r.copy_huge_ns_per_byte = Some(one(0.5));
    r.huge_bytes = Some(four);
    let mut new = old.clone();
    let r = l3_runtime(&mut new);
    r.copy_upper_ns_per_byte = Some(one(0.1));
    r.upper_bytes = Some(k256);
    let t = |p: &Profile, b: u64| predict(p, &h, &s, b, Transport::Direct);
    let near = |got: u64, want: u64| assert!(got.abs_diff(want) <= rounding, "{got} {want}");
    // Up to 256 KiB nothing changes.
    for b in [4096, k64, 128 << 10, k256] {
        assert_eq!(t(&new, b), t(&old, b), "{b} B");
    }
    near(t(&old, mib) - t(&old, k256), (mib - k256) * 200);
    near(t(&new, mib) - t(&new, k256), (mib - k256) * 100);
    near(t(&new, 512 << 10) - t(&new, k256), (256 << 10) * 100);
    // Past 1 MiB both take the huge slope.
    near(t(&new, four) - t(&new, mib), (four - mib) * 500);
    near(t(&old, four) - t(&old, mib), (four - mib) * 500);
    // A profile whose upper point lies outside (64 KiB, 1 MiB), or lacks its size: malformed.
    point_sizes_are_checked(&new, "upper_bytes", [Some(k64), Some(mib), None], |r, b| {
        r.upper_bytes = b
    });
}

#[test]
fn a_single_copy_faster_than_its_parts_gives_its_point_back() {
    // The parts of the calibrated 4 KiB single copy: the descriptor's hop (75 ns) and line
    // (9.5), the copy at 50 ps per byte (204.8), the hop back (75): 364.3 ns. Measured at
    // 300 ns, the parts overlap by 64.3: the fixed cost is 0 (not negative), and a 2-rank
    // single copy ends 64.3 ns sooner, so the model gives both calibration points back.
    let rt = Rt {
        direct: 300.0,
        ..RT
    };
    let p = profile(rt);
    let h = machine(2);
    let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
    let parts = HOP_PS + 9_500 + 4096 * 50 + HOP_PS;
    assert_eq!(costs.direct_call_ps(), Some(0));
    assert_eq!(costs.direct_overlap_ps(), parts - 300_000);
    let s = tree(Algorithm::Binomial, 2, 1);
    let direct = |b: u64| predict(&p, &h, &s, b, Transport::Direct);
    assert_eq!(direct(4096), 300_000);
    assert!(direct(64 << 10).abs_diff(300_000 + 60 * 1024 * 50) <= 1);
    // Measured above its parts, nothing overlaps (the fixed cost takes the difference).
    let slow = profile(Rt {
        direct: 400.0,
        ..RT
    });
    let costs = RuntimeCosts::from_profile(&slow, &h, Pick::Dominant).unwrap();
    assert_eq!(costs.direct_overlap_ps(), 0);
    assert_eq!(costs.direct_call_ps(), Some(400_000 - parts));
    assert_eq!(predict(&slow, &h, &s, 4096, Transport::Direct), 400_000);
    // Streams do not take it.
    let (fast, at_400) = (
        predict(&p, &h, &s, 4096, Transport::Stream),
        predict(&slow, &h, &s, 4096, Transport::Stream),
    );
    assert_eq!(fast, at_400);
}

#[test]
fn a_one_line_stream_faster_than_its_parts_gives_its_point_back() {
    // The one-line broadcast's parts: its hop (75 ns) and its line (16). Measured at 80 ns,
    // they overlap by 11: the call's fixed cost is 0, and a 2-rank stream ends 11 ns sooner,
    // so both the one-line point and the burst's slope are given back.
    let p = profile(Rt {
        one_line: 80.0,
        burst: 16.0,
        ..RT
    });
    let h = machine(2);
    let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
    assert_eq!(costs.call_ps(), 0);
    assert_eq!(costs.stream_overlap_ps(), HOP_PS + 16_000 - 80_000);
    let s = tree(Algorithm::Binomial, 2, 1);
    let stream = |b: u64| predict(&p, &h, &s, b, Transport::Stream);
    assert_eq!(stream(48), 80_000);
    let burst = 16 * 56 - 8;
    assert_eq!(stream(burst) - stream(48), 15 * 16_000);
    // Single copies do not take it (their own overlap is 0 here: 2 µs for 4 KiB).
    assert_eq!(costs.direct_overlap_ps(), 0);
    assert_eq!(predict(&p, &h, &s, 4096, Transport::Direct), 2_000_000);
}

#[test]
fn blocks_on_one_edge_cost_one_message() {
    let h = machine(2);
    let t = |p: &Profile, m: u32| {
        predict(
            p,
            &h,
            &tree(Algorithm::Binomial, 2, m),
            4096,
            Transport::Stream,
        )
    };
    // 4096 bytes are 74 lines: up to 8 blocks of ≥ 4 lines keep the sender busy longer than the
    // 40 ns gap between two messages, so with one cost per line the blocks cost what one
    // message costs.
    let p = profile(RT);
    for m in [2, 4, 8] {
        assert_eq!(t(&p, 1), t(&p, m), "{m} blocks");
    }
    // 64 blocks of 1–2 lines: now each message waits out the gap, 64 gaps in all.
    assert_eq!(t(&p, 64), t(&p, 1) - 74 * 9_500 + 63 * GAP_PS + 9_500);
    // Short messages pay the burst rate on every line: 8 blocks of ≤ 10 lines pay it on all
    // 74 lines, one message on its first 16.
    let p = profile(Rt { burst: 20.0, ..RT });
    assert_eq!(t(&p, 8) - t(&p, 1), (74 - 16) * (20_000 - 9_500));
}

/// `p` with the executor's extra cost per call measured at `ns`.
fn with_exec(mut p: Profile, ns: f64) -> Profile {
    l3_runtime(&mut p).exec_ns = Some(one(ns));
    p
}

#[test]
fn a_stream_through_the_executor_costs_its_calibrated_extra() {
    // The calibration's definition: the 16-line broadcast (888 B) in 2 blocks less the same in
    // 1 block. The model prices both alike otherwise (2 blocks of 8 lines on one edge are one
    // message: each keeps the sender 76 ns, past the 40 ns gap), so on 2 ranks the 2-block
    // stream costs exactly `exec` more, and so does a 1-block stream of 17 lines, which the
    // receiver reads past its read-ahead; a 1-block stream of at most 16 lines, and single
    // copy, cost nothing more.
    let h = machine(2);
    let (plain, exec) = (profile(RT), with_exec(profile(RT), 70.0));
    let t = |p: &Profile, m: u32, bytes: u64, tr: Transport| {
        predict(p, &h, &tree(Algorithm::Binomial, 2, m), bytes, tr)
    };
    let burst = 16 * 56 - 8;
    assert_eq!(
        t(&plain, 2, burst, Transport::Stream),
        t(&plain, 1, burst, Transport::Stream)
    );
    assert_eq!(
        t(&exec, 2, burst, Transport::Stream) - t(&exec, 1, burst, Transport::Stream),
        70_000
    );
    assert_eq!(
        t(&exec, 1, burst, Transport::Stream),
        t(&plain, 1, burst, Transport::Stream)
    );
    assert_eq!(
        t(&exec, 1, burst + 56, Transport::Stream) - t(&plain, 1, burst + 56, Transport::Stream),
        70_000
    );
    for m in [1, 2] {
        assert_eq!(
            t(&exec, m, 8192, Transport::Direct),
            t(&plain, m, 8192, Transport::Direct)
        );
    }
}

#[test]
fn the_executors_extra_cost_is_linear_in_lines_between_its_calibrated_lengths() {
    // Measured 30 ns at 2 lines and 70 ns at 16 (the read-ahead): at 9 lines halfway, 50 ns;
    // at 16 lines and beyond 70 ns. On 2 ranks it is the whole difference a profile with it
    // makes to a 2-block stream (the same schedule, the same lines otherwise).
    let h = machine(2);
    let plain = profile(RT);
    let mut both = with_exec(profile(RT), 70.0);
    l3_runtime(&mut both).exec_short_ns = Some(one(30.0));
    let extra = |lines: u64| {
        let (s, bytes) = (tree(Algorithm::Binomial, 2, 2), lines * 56 - 8);
        predict(&both, &h, &s, bytes, Transport::Stream)
            - predict(&plain, &h, &s, bytes, Transport::Stream)
    };
    assert_eq!(extra(2), 30_000);
    assert_eq!(extra(9), 50_000);
    assert_eq!(extra(16), 70_000);
    assert_eq!(extra(40), 70_000);
}

#[test]
fn on_a_shared_pu_every_rank_sets_the_executor_up_in_its_turn() {
    // Two ranks on one PU, 2 blocks of one line each: the root sets up and writes both lines
    // (a gap apart) and returns; its reader takes over a handoff later, sets up and reads. Each
    // rank's set-up is on the PU's one timeline: 2 × exec over the same without it.
    let h = machine(1);
    let shared = profile_with(RT, None, Some(5_300.0));
    let t = |p: &Profile| predict(p, &h, &tree(Algorithm::Star, 2, 2), 104, Transport::Stream);
    assert_eq!(t(&with_exec(shared.clone(), 70.0)) - t(&shared), 2 * 70_000);
}

#[test]
fn a_chain_pipelines_line_by_line() {
    // Rank i forwards line j once it holds line j + 16 (or the message's last): the last of L
    // lines reaches rank n − 1 after (n − 1) hops and L + (n − 2)·min(L, 16) line times.
    let p = profile(RT);
    let call = 300_000 - HOP_PS - 9_500;
    for n in [3u32, 4] {
        let h = machine(4);
        for bytes in [48u64, 500, 4096, 100_000] {
            let l = lines(bytes);
            let want =
                call + u64::from(n - 1) * HOP_PS + (l + u64::from(n - 2) * l.min(16)) * 9_500;
            let got = predict(
                &p,
                &h,
                &tree(Algorithm::Chain, n, 1),
                bytes,
                Transport::Stream,
            );
            assert_eq!(got, want, "n = {n}, {bytes} bytes");
        }
    }
}

#[test]
fn a_star_spaces_its_messages_by_the_gap() {
    // One-line messages from the root, max(gap, line) apart; the last child holds its line a
    // line time and a hop after its message started.
    let p = profile(RT);
    let call = 300_000 - HOP_PS - 9_500;
    let h = machine(4);
    let got = predict(&p, &h, &tree(Algorithm::Star, 4, 1), 48, Transport::Stream);
    assert_eq!(got, call + 2 * GAP_PS.max(9_500) + 9_500 + HOP_PS);
}

/// The profile whose handoff between two ranks of one PU is measured: a one-line broadcast on
/// one PU takes 5.3 µs.
fn shared_profile() -> Profile {
    profile_with(RT, None, Some(5_300.0))
}

/// The shared profile's call fixed cost and the runtime's handoff `S` (the one-line broadcast
/// on one PU, 5.3 µs, less the call and its line); the bare switch `b` is `SWITCH_PS`.
fn shared_costs() -> (u64, u64) {
    let call = 300_000 - HOP_PS - 9_500;
    (call, 5_300_000 - call - 9_500)
}

/// A star of `n` ranks on `cores` PUs under the shared profile.
fn shared_star(cores: usize, n: u32, bytes: u64, t: Transport) -> u64 {
    predict(
        &shared_profile(),
        &machine(cores),
        &tree(Algorithm::Star, n, 1),
        bytes,
        t,
    )
}

#[test]
fn two_ranks_on_one_pu_reproduce_the_shared_calibration_point() {
    // The root writes its line and returns; its PU's other thread takes over after the
    // handoff S and reads: the calibration's one-line broadcast on one PU, 5.3 µs.
    assert_eq!(shared_star(1, 2, 48, Transport::Stream), 5_300_000);
}

#[test]
fn ranks_of_one_pu_take_turns_one_handoff_each() {
    // A star of 4 ranks on one PU: the root writes three one-line messages, a gap apart, and
    // returns; each receiver then takes the PU in the cycle's order (its line already there),
    // one handoff S apiece.
    let (call, s_ps) = shared_costs();
    let got = shared_star(1, 4, 48, Transport::Stream);
    assert_eq!(got, call + 2 * GAP_PS + 9_500 + 3 * s_ps);
}

#[test]
fn a_rank_alone_on_its_pu_never_waits_for_a_turn() {
    // 3 ranks on 2 PUs: ranks 0 and 2 share PU 0, rank 1 has PU 1 to itself and reads its line
    // as it arrives; rank 2 runs a handoff after the root wrote both lines (a gap apart).
    let (call, s_ps) = shared_costs();
    let got = shared_star(2, 3, 48, Transport::Stream);
    assert_eq!(got, call + GAP_PS + 9_500 + s_ps);
    // Rank 1 alone is done long before: without rank 2 the broadcast ends at its arrival.
    let pair = shared_star(2, 2, 48, Transport::Stream);
    assert_eq!(pair, call + 9_500 + HOP_PS);
}

#[test]
fn a_lender_on_a_shared_pu_returns_a_turn_after_its_reader() {
    // Single copy of 4 KiB between two ranks of one PU: the root lends (one descriptor line)
    // and waits; its reader takes the PU (S) and copies; the root takes it back (S) and sees
    // the copy done.
    let (_, s_ps) = shared_costs();
    // The calibration's definitions: the 4 KiB single copy (2 µs) is the direct call, the
    // descriptor's hop and line, the copy (4096 B at 50 fs per byte) and the hop back.
    let copy = 4096 * 50;
    let direct_call = 2_000_000 - (HOP_PS + 9_500) - (copy + HOP_PS);
    let got = shared_star(1, 2, 4096, Transport::Direct);
    assert_eq!(got, direct_call + 9_500 + s_ps + copy + s_ps);
}

#[test]
fn a_copy_on_one_pu_costs_the_one_pu_rate_up_to_its_measured_size() {
    // As above, with the single copy between two ranks of one PU measured at 10 fs a byte:
    // the reader copies its lender's buffer from their PU's cache at that rate, up to the
    // 64 KiB it was measured at; beyond, at the rate between PUs.
    let (_, s_ps) = shared_costs();
    let copy = 4096 * 50;
    let direct_call = 2_000_000 - (HOP_PS + 9_500) - (copy + HOP_PS);
    let mut p = shared_profile();
    let measured = |p: &mut Profile, ns_per_byte: f64| {
        l3_runtime(p).shared_copy_ns_per_byte = Some(one(ns_per_byte));
    };
    measured(&mut p, 0.01);
    let h = machine(1);
    let pair = tree(Algorithm::Star, 2, 1);
    for bytes in [4096u64, 65_536] {
        assert_eq!(
            predict(&p, &h, &pair, bytes, Transport::Direct),
            direct_call + 9_500 + s_ps + bytes * 10 + s_ps,
            "{bytes} B"
        );
    }
    let old = shared_profile();
    let beyond = 1u64 << 20;
    assert_eq!(
        predict(&p, &h, &pair, beyond, Transport::Direct),
        predict(&old, &h, &pair, beyond, Transport::Direct)
    );
    // The payload, not the piece, bounds it: 256 KiB in 4 blocks of 64 KiB is past it too.
    let blocks = tree(Algorithm::Star, 2, 4);
    assert_eq!(
        predict(&p, &h, &blocks, 256 << 10, Transport::Direct),
        predict(&old, &h, &blocks, 256 << 10, Transport::Direct)
    );
    // A one-PU rate measured above the rate between PUs (noise) never makes a copy dearer.
    measured(&mut p, 0.2);
    assert_eq!(
        predict(&p, &h, &pair, 4096, Transport::Direct),
        predict(&old, &h, &pair, 4096, Transport::Direct)
    );
}

#[test]
fn a_large_copy_on_one_pu_costs_the_large_one_pu_rate_from_a_lender_there() {
    // The pair on one PU again, with the one-PU rate of large payloads measured at 10 fs a
    // byte: past the 64 KiB of the small one-PU rate, the reader copies what its lender wrote
    // on their PU at that rate instead of the rate between PUs (RT: 50 fs a byte at every
    // size), 40 fs a byte less, in one block or in several (the payload, not the piece, is
    // past the small rate's size).
    let mut p = shared_profile();
    let measured = |p: &mut Profile, ns_per_byte: f64| {
        l3_runtime(p).shared_copy_large_ns_per_byte = Some(one(ns_per_byte));
    };
    measured(&mut p, 0.01);
    let old = shared_profile();
    let h = machine(1);
    for (blocks, bytes) in [(1, 1u64 << 20), (1, 4 << 20), (4, 1 << 20)] {
        let s = tree(Algorithm::Star, 2, blocks);
        assert_eq!(
            predict(&old, &h, &s, bytes, Transport::Direct)
                - predict(&p, &h, &s, bytes, Transport::Direct),
            bytes * 40,
            "{bytes} B in {blocks} blocks"
        );
    }
    // Up to 64 KiB the small one-PU rate (not measured here) decides: no change.
    let pair = tree(Algorithm::Star, 2, 1);
    assert_eq!(
        predict(&p, &h, &pair, 65_536, Transport::Direct),
        predict(&old, &h, &pair, 65_536, Transport::Direct)
    );
    // Only where the lender and the reader are their PU's only ranks (as calibrated): not for
    // a star of 3 on one PU, whose second reader copies after the first one's writes.
    let three = tree(Algorithm::Star, 3, 1);
    assert_eq!(
        predict(&p, &h, &three, 1 << 20, Transport::Direct),
        predict(&old, &h, &three, 1 << 20, Transport::Direct)
    );
    // Between PUs it does not apply: 2 ranks on 2 PUs.
    let two = machine(2);
    assert_eq!(
        predict(&p, &two, &pair, 1 << 20, Transport::Direct),
        predict(&old, &two, &pair, 1 << 20, Transport::Direct)
    );
    // A rate measured above the rate between PUs (noise) never makes a copy dearer.
    measured(&mut p, 0.2);
    assert_eq!(
        predict(&p, &h, &pair, 1 << 20, Transport::Direct),
        predict(&old, &h, &pair, 1 << 20, Transport::Direct)
    );
}

#[test]
fn a_one_pu_copy_past_a_mebibyte_takes_its_own_slope_where_measured() {
    // As above (the pair on one PU, the one-PU rate of large payloads 10 fs a byte), with the
    // one-PU slope past `direct_bytes[2]` (1 MiB) measured at 5 fs a byte: a payload of more
    // than 1 MiB costs 10 fs a byte for its first MiB and 5 for the rest (against 50 between
    // PUs, RT), in one block or in several (the payload decides, each piece its share); up to
    // 1 MiB nothing changes.
    let with = |huge: Option<f64>| {
        let mut p = shared_profile();
        let r = l3_runtime(&mut p);
        r.shared_copy_large_ns_per_byte = Some(one(0.01));
        r.shared_copy_huge_ns_per_byte = huge.map(one);
        p
    };
    let (old, p) = (shared_profile(), with(Some(0.005)));
    let h = machine(1);
    for (blocks, bytes) in [(1, 4u64 << 20), (4, 4 << 20), (1, 2 << 20)] {
        let s = tree(Algorithm::Star, 2, blocks);
        let mib = 1u64 << 20;
        assert_eq!(
            predict(&old, &h, &s, bytes, Transport::Direct)
                - predict(&p, &h, &s, bytes, Transport::Direct),
            mib * 40 + (bytes - mib) * 45,
            "{bytes} B in {blocks} blocks"
        );
    }
    let pair = tree(Algorithm::Star, 2, 1);
    assert_eq!(
        predict(&p, &h, &pair, 1 << 20, Transport::Direct),
        predict(&with(None), &h, &pair, 1 << 20, Transport::Direct)
    );
    // Without the slope the large rate continues (the profiles before it).
    assert_eq!(
        predict(&old, &h, &pair, 4 << 20, Transport::Direct)
            - predict(&with(None), &h, &pair, 4 << 20, Transport::Direct),
        (4 << 20) * 40
    );
}

#[test]
fn only_the_first_reader_of_a_pu_reads_a_post_across_pus() {
    // A posted star of 4 and of 8 ranks on 2 PUs: PU 1's ranks read in turns. The first to
    // read pulls the slot across (what a post between the PUs costs, beyond the root's write
    // and the hop); the others read it from their PU's cache, as ranks of the root's PU do.
    // So a dearer post between PUs (9 µs, then 20 µs at one line) delays the broadcast by
    // the difference once, whatever the number of readers on PU 1 (it would be once per
    // reader if each read across).
    let at = |between_ns: f64, n: u32| {
        let p = with_shared_posted(
            with_posted(shared_profile(), between_ns, 14.0),
            6_000.0,
            10.0,
            5.0,
        );
        posted_star(&p, 2, n, 48).unwrap()
    };
    for n in [4u32, 8] {
        assert_eq!(at(20_000.0, n) - at(9_000.0, n), 11_000_000, "{n} ranks");
    }
}

#[test]
fn a_shared_pu_cycle_phase_is_averaged_as_a_continuous_one() {
    // 4 ranks on 2 PUs, one line each: ranks 1 and 3 share PU 1 and were yielding when the
    // call began, the first turn ending at a phase `φ ∈ (0, b)` of a bare switch `b` unknown to
    // the call. The root sends to 1, 2 and 3 a gap apart; a line arrives a line and a hop after
    // its send. If the thread that takes PU 1 first finds its line there, it reads and returns
    // after the handoff, and the other follows a turn later: PU 1 is done at `φ + 2S − b`. If
    // its line is not there yet, it yields once more and the other reads first: `φ + 2S`. Over
    // a phase uniform in (0, b) the mean is `b/2 + 2S − b + (chance of the miss) · b`, the
    // chance being that thread's line's arrival over `b`, averaged over which of ranks 1 and 3
    // it is (equally likely). The model takes 16 phases, at `(2i + 1)/32 · b`, where the bare
    // switch has no spread (with one, fewer phases at each of several turn speeds: the next
    // test).
    let (call, s_ps) = shared_costs();
    let b = SWITCH_PS;
    let (to_1, to_3) = first_line_arrivals();
    let phases: Vec<u64> = (0..16).map(|i| b * (2 * i + 1) / 32).collect();
    let misses =
        phases.iter().filter(|&&p| p < to_3).count() + phases.iter().filter(|&&p| p < to_1).count();
    let expected = call + b / 2 + 2 * s_ps - b + b * misses as u64 / 32;
    // PU 0 is done long before: the root's three sends, then rank 2 after one handoff.
    assert!(call + 2 * GAP_PS + 9_500 + s_ps < call + 2 * s_ps - b);
    assert_eq!(star_with_switch_spread(800.0, 800.0), expected);
    // …within half a nanosecond of the continuous mean (2 phases, at b/4 and 3b/4, missed
    // both arrivals and priced the star 125 ns lower).
    let continuous = (call + b / 2 + 2 * s_ps - b) as f64 + (to_1 + to_3) as f64 / 2.0;
    assert!(
        (expected as f64 - continuous).abs() <= 500.0,
        "{expected} against {continuous}"
    );
}

/// When the root's one-line messages to ranks 1 and 3 arrive in a 4-rank star (the root sends
/// to 1, 2 and 3 a gap apart; a line arrives a line and a hop after its send), ps.
fn first_line_arrivals() -> (u64, u64) {
    let arrival = |sends_before: u64| sends_before * GAP_PS + 9_500 + HOP_PS;
    (arrival(0), arrival(2))
}

/// A 4-rank one-line star on 2 PUs under the shared profile with its bare thread switch spread
/// from `p10` to `p90` ns about its 800 ns.
fn star_with_switch_spread(p10: f64, p90: f64) -> u64 {
    let mut p = shared_profile();
    p.switch_ns = Some(Distribution {
        median: 800.0,
        p10,
        p90,
        samples: 40,
        modes: vec![Mode {
            center: 800.0,
            p10,
            p90,
            share: 1.0,
            samples: 40,
            regime_hop_ns: None,
        }],
        settled: true,
    });
    let star = tree(Algorithm::Star, 4, 1);
    predict(&p, &machine(2), &star, 48, Transport::Stream)
}

#[test]
fn a_non_root_pu_s_turns_are_averaged_over_the_switch_s_spread() {
    // The previous test's star (4 ranks on 2 PUs, one line each), with the bare switch spread
    // from 600 to 1000 ns about its 800. How fast PU 1's turns go in a call is unknown: the
    // model scales its bare switch `b` and its handoff beyond it, `S − b`, by four factors
    // evenly spaced in log over the half-width of the ratio of two PUs' speeds, each spread as
    // the switch, √2·ln(p90/p10)/2, at ±1/4 and ±3/4 of it (per mille, rounded), and takes 4
    // phases at each. At a factor `f`, PU 1 with
    // `b_f = b·f` and `h_f = (S − b)·f`: its first thread's turn ends at `φ = b_f·(2i + 1)/8`;
    // if that thread's line is there, it reads after `h_f` and returns, the other yields to it
    // a switch later and reads after `h_f`: done at `φ + 2h_f + b_f`; if not, one more switch.
    // The root's PU keeps the calibrated speed and is done long before (as above).
    let (call, s_ps) = shared_costs();
    let b = SWITCH_PS;
    let (to_1, to_3) = first_line_arrivals();
    let half = (1000.0f64 / 600.0).ln() / 2.0 * 2f64.sqrt();
    let mut total = 0u64;
    let mut runs = 0u64;
    for u in [-0.75, -0.25, 0.25, 0.75] {
        let f = (1000.0 * (half * u).exp()).round() as u64;
        let (b_f, h_f) = (b * f / 1000, (s_ps - b) * f / 1000);
        for first_line in [to_1, to_3] {
            for i in 0..4 {
                let phi = b_f * (2 * i + 1) / 8;
                let miss = u64::from(phi < first_line);
                total += call + phi + 2 * h_f + b_f + miss * b_f;
                runs += 1;
            }
        }
    }
    // Some phases miss a line at some speeds and not at others: the speeds matter here.
    let got = star_with_switch_spread(600.0, 1000.0);
    assert_eq!(got, total / runs);
    assert_ne!(got, star_with_switch_spread(800.0, 800.0));
}

#[test]
fn on_shared_pus_depth_costs_turns() {
    // 4 ranks on 2 PUs (0 and 2 on PU 0, 1 and 3 on PU 1), one line. A flat tree reaches both
    // ranks of PU 1 with the root's first writes; a chain 0 → 1 → 2 → 3 needs each rank to
    // have run before the next can: at least a handoff per hop after the first.
    let (call, s_ps) = shared_costs();
    let star = shared_star(2, 4, 48, Transport::Stream);
    let chain = predict(
        &shared_profile(),
        &machine(2),
        &tree(Algorithm::Chain, 4, 1),
        48,
        Transport::Stream,
    );
    assert!(chain >= call + 3 * 9_500 + 2 * s_ps, "{chain}");
    assert!(star < chain, "{star} vs {chain}");
    // The flat tree: PU 0 runs rank 2 a handoff after the root's three lines (a gap apart);
    // PU 1's two receivers take it in turn, each after a handoff at most after its line
    // arrived and the other finished — so no later than two handoffs and a switch after the
    // last line.
    let lines = 2 * GAP_PS + 9_500;
    assert!(star >= call + lines + s_ps, "{star}");
    assert!(
        star <= call + lines + HOP_PS + 2 * s_ps + SWITCH_PS,
        "{star}"
    );
}

#[test]
fn oversubscribed_streams_stall_once_per_ring() {
    // The model's ring is the runtime's default ring.
    assert_eq!(RING_LINES as usize, CommOptions::default().capacity);
    // Two ranks on one PU: a stream of 3 rings' worth fills the ring twice more, and each time
    // the writer yields to its reader (a handoff S) and the reader, having drained it, yields
    // back (another S). With a PU each, the ranks stream on.
    let p = shared_profile();
    let (_, s_ps) = shared_costs();
    let bytes = |rings: u64| rings * RING_LINES * 56 - 8;
    let grow = |h: &herald::Hierarchy, s: &Schedule| {
        predict(&p, h, s, bytes(3), Transport::Stream)
            - predict(&p, h, s, bytes(1), Transport::Stream)
    };
    let lines = 2 * RING_LINES * 9_500;
    let shared = grow(&machine(1), &tree(Algorithm::Star, 2, 1));
    assert!(shared >= lines + 4 * s_ps, "{shared}");
    let own = grow(&machine(4), &tree(Algorithm::Chain, 4, 1));
    assert!(own < lines + s_ps, "{own}");
}

#[test]
fn single_copy_blocks_cost_their_calibrated_difference() {
    // The calibration's definition: a 64 KiB payload in 16 one-chunk blocks takes 15 block
    // costs more than in one block (the receiver's copies, 4 KiB at 50 ps per byte, are slower
    // than the descriptors' lines, so the copies run back to back).
    let h = machine(2);
    let t = |p: &Profile, m: u32| {
        predict(
            p,
            &h,
            &tree(Algorithm::Binomial, 2, m),
            64 << 10,
            Transport::Direct,
        )
    };
    let with = profile_with(RT, Some(120.0), None);
    let diff = t(&with, 16) - t(&with, 1);
    // One ps of rounding per block at most (the copy's ps split into blocks).
    assert!(diff.abs_diff(15 * 120_000) <= 16, "{diff}");
    // Without the measurement blocks are free.
    let without = profile(RT);
    assert!(t(&without, 16).abs_diff(t(&without, 1)) <= 16);
    // The one-block calibration point is unchanged by the block cost: 2 µs for 4 KiB.
    let one = |p: &Profile| {
        predict(
            p,
            &h,
            &tree(Algorithm::Binomial, 2, 1),
            4096,
            Transport::Direct,
        )
    };
    assert_eq!(one(&with), 2_000_000);
}

#[test]
fn single_copies_through_the_executor_cost_its_calibrated_extra() {
    // The calibration's definitions (`direct_exec_ns`, `direct_block_ns`): 4 KiB in 2 blocks
    // takes the executor and one block more than in 1 block; 64 KiB in 16 blocks the executor
    // and 15 blocks more. One block of one chunk runs without the executor; one block of
    // several chunks (128 KiB in 64 KiB chunks) runs it.
    let h = machine(2);
    let t = |p: &Profile, m: u32, bytes: u64| {
        predict(
            p,
            &h,
            &tree(Algorithm::Binomial, 2, m),
            bytes,
            Transport::Direct,
        )
    };
    let blocks = profile_with(RT, Some(120.0), None);
    let mut both = blocks.clone();
    l3_runtime(&mut both).direct_exec_ns = Some(one(70.0));
    // One ps of rounding per block at most (the copy's ps split into blocks).
    let d2 = t(&both, 2, 4096) - t(&both, 1, 4096);
    assert!(d2.abs_diff(70_000 + 120_000) <= 2, "{d2}");
    let d16 = t(&both, 16, 64 << 10) - t(&both, 1, 64 << 10);
    assert!(d16.abs_diff(70_000 + 15 * 120_000) <= 16, "{d16}");
    for bytes in [4096, 64 << 10] {
        assert_eq!(
            t(&both, 1, bytes),
            t(&blocks, 1, bytes),
            "{bytes} B, one chunk"
        );
    }
    assert_eq!(t(&both, 1, 128 << 10) - t(&blocks, 1, 128 << 10), 70_000);
}

#[test]
fn a_lender_returns_a_hop_after_its_reader_copied() {
    let p = profile(RT);
    let h = machine(2);
    let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
    let s = tree(Algorithm::Binomial, 2, 1);
    let direct = predict_runtime(&s, &costs, 1 << 20, Transport::Direct).unwrap();
    assert_eq!(direct.makespan_ps - direct.last_hold_ps, HOP_PS);
    // A stream has no such wait: the call ends when the last line is held.
    let stream = predict_runtime(&s, &costs, 1 << 20, Transport::Stream).unwrap();
    assert_eq!(stream.makespan_ps, stream.last_hold_ps);
}

#[test]
fn copies_of_ranks_sharing_a_pu_take_turns() {
    // A 4-rank star on 2 PUs: ranks 1 and 3 share PU 1 and both copy the whole payload from
    // the root, so the broadcast takes at least two copies. On 4 PUs the copies overlap.
    let p = profile(RT);
    let bytes = 1u64 << 20;
    // 64 KiB at 50 ps per byte, the rest at 50 ps per byte too (RT): 1 MiB · 50 ps.
    let copy = bytes * 50;
    let star = tree(Algorithm::Star, 4, 1);
    let shared = predict(&p, &machine(2), &star, bytes, Transport::Direct);
    let own = predict(&p, &machine(4), &star, bytes, Transport::Direct);
    assert!(shared >= 2 * copy, "{shared} < {}", 2 * copy);
    assert!(own < 2 * copy, "{own}");
}

#[test]
fn the_handoff_between_ranks_of_one_pu_is_measured_through_the_runtime() {
    let h = machine(2);
    // The call's fixed cost: one line (300 ns) less a hop and a line (RT's 9.5 ns).
    let call = 300_000 - HOP_PS - 9_500;
    // Without the runtime's own measurement: the bare thread switch (800 ns).
    let costs = RuntimeCosts::from_profile(&profile(RT), &h, Pick::Dominant).unwrap();
    assert_eq!(costs.switch_ps(), SWITCH_PS);
    // With it: the one-line broadcast on one PU less the call and its line.
    let costs = RuntimeCosts::from_profile(&shared_profile(), &h, Pick::Dominant).unwrap();
    assert_eq!(costs.switch_ps(), 5_300_000 - call - 9_500);
}

#[test]
fn equal_predictions_rank_fewer_messages_first() {
    // Predictions within 1 % of the fastest are ties, ranked by message count, and among
    // equal counts by predicted time (not by depth: a deeper tree predicted faster within the
    // band comes first); the rest by predicted time, then message count.
    let p = profile_with(RT, Some(40.0), Some(5_300.0));
    for (n, bytes) in [(2u32, 1u64 << 20), (4, 1 << 20), (8, 4096), (8, 64)] {
        let plan = plan_for_runtime(&p, &machine(2), &request(n, bytes)).unwrap();
        let best = plan
            .ranked
            .iter()
            .map(|c| c.predicted.makespan_ps)
            .min()
            .unwrap();
        let tie = |c: &RuntimeChoice| c.predicted.makespan_ps - best <= best / 100;
        let ties = plan.ranked.iter().take_while(|c| tie(c)).count();
        assert!(ties >= 1);
        // Every tie comes before every other choice.
        assert!(
            plan.ranked[ties..].iter().all(|c| !tie(c)),
            "{n} ranks, {bytes} B"
        );
        for w in plan.ranked[..ties].windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert!(a.schedule.len() <= b.schedule.len(), "{n} ranks, {bytes} B");
            if a.schedule.len() == b.schedule.len() {
                assert!(
                    a.predicted.makespan_ps <= b.predicted.makespan_ps,
                    "{n} ranks, {bytes} B: {} before {}",
                    a.candidate.label,
                    b.candidate.label
                );
            }
        }
        for w in plan.ranked[ties..].windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert!(a.predicted.makespan_ps <= b.predicted.makespan_ps);
            if a.predicted.makespan_ps == b.predicted.makespan_ps {
                assert!(a.schedule.len() <= b.schedule.len(), "{n} ranks, {bytes} B");
            }
        }
    }
}

#[test]
fn without_runtime_measurements_the_model_falls_back_to_loggp() {
    let p = base();
    let h = machine(2);
    let s = tree(Algorithm::Binomial, 2, 1);
    // Lines at 56 · G = 14 ns, no fixed cost: one line is a line time and a hop.
    assert_eq!(predict(&p, &h, &s, 48, Transport::Stream), 14_000 + HOP_PS);
    let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
    assert_eq!(
        predict_runtime(&s, &costs, 1 << 20, Transport::Direct),
        Err(PredictError::NoDirect)
    );
    let plan = plan_for_runtime(&p, &h, &request(2, 1 << 20)).unwrap();
    assert!(plan.ranked.iter().all(|c| c.transport == Transport::Stream));
}

#[test]
fn the_transport_follows_the_calibrated_numbers() {
    let h = machine(2);
    // Lines cost 9.5 ns per 56 bytes (0.17 ns/byte). A fast copy (0.02 ns/byte) wins large
    // payloads and loses one-line ones to the cheaper stream call; a slow copy never wins.
    let fast = Rt {
        direct: 1000.0,
        copy: 0.02,
        large: 0.03,
        ..RT
    };
    let best = |rt: Rt, b: u64| {
        plan_for_runtime(&profile(rt), &h, &request(2, b))
            .unwrap()
            .ranked[0]
            .transport
    };
    assert_eq!(best(fast, 1 << 20), Transport::Direct);
    assert_eq!(best(fast, 48), Transport::Stream);
    let slow = Rt {
        copy: 1.0,
        large: 1.0,
        ..fast
    };
    for b in [4096u64, 1 << 20, 4 << 20] {
        assert_eq!(best(slow, b), Transport::Stream, "{b} bytes");
    }
    // Where the two cross, from the calibration's definitions: stream 300 + (L − 1)·9.5 ns,
    // single copy 1000 + (B − 4096)·0.02 ns (below 64 KiB).
    let stream = |b: u64| 300.0 + (lines(b) - 1) as f64 * 9.5;
    let direct = |b: u64| 1000.0 + (b as f64 - 4096.0) * 0.02;
    let cross = (49u64..64 << 10).find(|&b| direct(b) < stream(b)).unwrap();
    assert_eq!(best(fast, cross + 56), Transport::Direct);
    assert_eq!(best(fast, (cross - 56).max(49)), Transport::Stream);
}

#[test]
fn a_planned_comm_moves_each_class_by_its_transport_byte_exact() {
    watchdog(planned_transports);
}

fn planned_transports() {
    // Single copy chosen for large classes, streams for small ones: both run, byte for byte.
    let fast = Rt {
        direct: 1000.0,
        copy: 0.02,
        large: 0.03,
        ..RT
    };
    let planned = Planned::new(profile(fast), machine(2));
    let options = CommOptions {
        schedule: DefaultSchedule::Planned(planned),
        ..CommOptions::default()
    };
    let mut comm = Comm::with_options(3, options).unwrap();
    every_byte_arrives(&mut comm, &[1, 48, 4096, 70_000, 1 << 20]);
}

/// Broadcasts of each of `sizes` bytes from every root of `comm`, each rank on a worker of its
/// own; every rank must hold the root's bytes.
fn every_byte_arrives(comm: &mut Comm, sizes: &[usize]) {
    let n = comm.size();
    let mut team = Team::new(n).unwrap();
    let mut ranks = comm.ranks();
    let got = team.run_with(&mut ranks, |_, c| {
        sizes.iter().all(|&bytes| {
            (0..n).all(|root| {
                let want: Vec<u8> = (0..bytes).map(|i| (i * 13 + root + 1) as u8).collect();
                let mut buf = if c.rank() == root {
                    want.clone()
                } else {
                    vec![0; bytes]
                };
                c.broadcast(root, &mut buf).unwrap();
                buf == want
            })
        })
    });
    assert_eq!(got, vec![true; n]);
}

#[test]
fn only_broadcasts_are_timed() {
    let p = profile(RT);
    let h = machine(2);
    let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
    let mut b = Schedule::builder(2, Collective::Reduce { root: 0 }, TimeBase::UNIT).unwrap();
    b.push(0, 1, 0, 0);
    let s = b.build().unwrap();
    assert!(matches!(
        predict_runtime(&s, &costs, 64, Transport::Stream),
        Err(PredictError::NotBroadcast("reduce"))
    ));
}

/// Lines of a posted broadcast of `b` bytes: one with the call's header and 48 bytes, one per
/// further 64 (the slot's framing, not the model's).
fn posted_lines(b: u64) -> u64 {
    1 + b.saturating_sub(48).div_ceil(64)
}

/// `p` with a posted broadcast measured on `l3`: one line `one_line` ns, `per_line` ns per
/// further line.
fn with_posted(mut p: Profile, one_line: f64, per_line: f64) -> Profile {
    let r = l3_runtime(&mut p);
    r.posted_ns = Some(one(one_line));
    r.posted_line_ns = Some(one(per_line));
    r.posted_bytes = Some(1072);
    p
}

#[test]
fn a_streams_second_line_is_priced_by_its_own_measurement() {
    // Measured: one line 300 ns, 16 lines 300 + 15 · 9.5 = 442.5 ns, two lines 340 ns. Two
    // lines (49–104 bytes: an 8-byte header and 56 bytes a line) cost the two-line call; the
    // 14 lines from the third to the 16th share the other 102.5 ns (7.321 ns each, in whole
    // ps); one line, the full burst and the lines past it are as without the point.
    let without = profile(RT);
    let mut p = without.clone();
    l3_runtime(&mut p).stream_two_ns = Some(one(40.0));
    let h = machine(2);
    let s = tree(Algorithm::Binomial, 2, 1);
    let stream = |p: &Profile, b: u64| predict(p, &h, &s, b, Transport::Stream);
    for (bytes, want) in [
        (48u64, 300_000u64),
        (49, 340_000),
        (104, 340_000),
        (105, 347_321),
        (160, 347_321),
        (161, 354_642),
        (880, 442_500),
        (936, 452_000),
    ] {
        assert_eq!(stream(&p, bytes), want, "{bytes} bytes");
    }
    for bytes in [48, 880, 936, 16 << 10] {
        assert_eq!(stream(&p, bytes), stream(&without, bytes), "{bytes} bytes");
    }
    // Without the point every line of the burst costs the average.
    assert_eq!(stream(&without, 104), 309_500);
}

#[test]
fn a_posts_second_line_is_priced_by_its_own_measurement() {
    // Measured: one line 90 ns, a full slot (17 lines) 90 + 16 · 14 = 314 ns, two lines 200 ns.
    // Two lines cost the two-line call; the 15 lines from the third to the 17th share the
    // other 114 ns, 7.6 ns each; one line is unchanged.
    let mut p = with_posted(profile(RT), 90.0, 14.0);
    l3_runtime(&mut p).posted_two_ns = Some(one(200.0));
    for (bytes, want) in [
        (48u64, 90_000u64),
        (49, 200_000),
        (112, 200_000),
        (113, 207_600),
        (176, 207_600),
        (177, 215_200),
        (1072, 314_000),
    ] {
        assert_eq!(pair_post(&p, bytes), want, "{bytes} bytes");
    }
}

#[test]
fn a_post_of_a_measured_length_costs_its_measurement() {
    // Measured: one line 70 ns, two 75, a full slot (17 lines) 70 + 16 · 7.5 = 190 ns, and a
    // step as the development VM's: 4 lines (240 B) 79 ns, 6 lines (368 B) 123 ns. Every
    // measured length costs its own call; a length between two measured ones the straight
    // line between them (5 lines halfway from 79 to 123; 9 to 16 lines on the way to the
    // slot's 190 ns); a length past a full slot its long lines beyond the slot.
    let mut p = with_posted(profile(RT), 70.0, 7.5);
    let r = l3_runtime(&mut p);
    r.posted_two_ns = Some(one(75.0));
    r.posted_curve_ns = Some(vec![one(79.0), one(123.0)]);
    r.posted_curve_bytes = Some(vec![240, 368]);
    r.posted_long_line_ns = Some(one(8.0));
    r.posted_long_bytes = Some(8192);
    for (bytes, want) in [
        (48u64, 70_000u64),
        (112, 75_000),
        (176, 77_000),
        (240, 79_000),
        (304, 101_000),
        (368, 123_000),
        (369, 129_090),
        (1072, 190_000),
    ] {
        assert_eq!(pair_post(&p, bytes), want, "{bytes} bytes");
    }
    // Past a full slot only where ranks share CPUs; the long line's price in the level.
    let costs = RuntimeCosts::from_profile(&p, &machine(2), Pick::Dominant).unwrap();
    let level = costs.levels().iter().flatten().next().unwrap();
    assert_eq!(level.posted_lines_ps(19), Some(206_000));
}

#[test]
fn a_measured_posted_length_outside_a_slot_is_malformed() {
    let mut p = with_posted(profile(RT), 70.0, 7.5);
    let r = l3_runtime(&mut p);
    r.posted_curve_ns = Some(vec![one(79.0)]);
    r.posted_curve_bytes = Some(vec![2048]);
    let text = p.to_json();
    let err = Profile::from_json_forced(&text).unwrap_err().to_string();
    assert!(err.contains("posted_curve_bytes"), "{err}");
    // One point per size.
    l3_runtime(&mut p).posted_curve_bytes = Some(vec![240, 304]);
    let err = Profile::from_json_forced(&p.to_json())
        .unwrap_err()
        .to_string();
    assert!(err.contains("posted_curve_ns"), "{err}");
}

/// A posted broadcast of `bytes` between two ranks on two PUs under `p`, ps.
fn pair_post(p: &Profile, bytes: u64) -> u64 {
    predict(
        p,
        &machine(2),
        &tree(Algorithm::Star, 2, 1),
        bytes,
        Transport::Posted,
    )
}

#[test]
fn a_post_gives_back_its_calibration_points_line_by_line() {
    // One line holds the header and 48 bytes; each further line 64 bytes; a slot 17 lines.
    let p = with_posted(profile(RT), 90.0, 14.0);
    let h = machine(2);
    for (bytes, further) in [
        (0u64, 0u64),
        (48, 0),
        (49, 1),
        (112, 1),
        (113, 2),
        (1072, 16),
    ] {
        assert_eq!(
            pair_post(&p, bytes),
            90_000 + further * 14_000,
            "{bytes} bytes"
        );
    }
    let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
    assert!(matches!(
        predict_runtime(
            &tree(Algorithm::Star, 2, 1),
            &costs,
            1073,
            Transport::Posted
        ),
        Err(PredictError::NotPostable(_))
    ));
}

#[test]
fn only_a_flat_tree_in_one_block_between_ranks_with_pus_of_their_own_is_posted() {
    let p = with_posted(profile(RT), 90.0, 14.0);
    let four = RuntimeCosts::from_profile(&p, &machine(4), Pick::Dominant).unwrap();
    let posted = |s: &Schedule, c: &RuntimeCosts| predict_runtime(s, c, 64, Transport::Posted);
    // Every reader reads the one slot on its own PU; readers are not charged for one another.
    let star = tree(Algorithm::Star, 4, 1);
    assert_eq!(posted(&star, &four).unwrap().makespan_ps, 104_000);
    for s in [
        tree(Algorithm::Binomial, 4, 1),
        tree(Algorithm::Chain, 4, 1),
        tree(Algorithm::Star, 4, 2),
    ] {
        assert!(
            matches!(posted(&s, &four), Err(PredictError::NotPostable(_))),
            "{s:?}"
        );
    }
    // Four ranks on two PUs share them: no post without a post measured on one PU.
    let two = RuntimeCosts::from_profile(&p, &machine(2), Pick::Dominant).unwrap();
    assert!(matches!(
        posted(&star, &two),
        Err(PredictError::NotPostable(_))
    ));
    // A profile that did not measure posting does not model it.
    let old = RuntimeCosts::from_profile(&profile(RT), &machine(4), Pick::Dominant).unwrap();
    assert!(matches!(posted(&star, &old), Err(PredictError::NoPosted)));
}

#[test]
fn the_planner_posts_where_the_calibrated_post_is_cheapest() {
    let h = machine(2);
    // Streams: 300 ns for one line, 9.5 per further 56-byte line (RT). A post of 200 ns and
    // 4 ns per further 64-byte line: at 48 B it beats the stream (200 against 300 ns), at
    // 1072 B too (200 + 16·4 = 264 against 300 + 19·9.5 = 480.5 ns).
    let cheap = with_posted(profile(RT), 200.0, 4.0);
    let best = |p: &Profile, n: u32, b: u64| {
        plan_for_runtime(p, &h, &request(n, b)).unwrap().ranked[0].clone()
    };
    for b in [8u64, 48, 512, 1072] {
        assert_eq!(best(&cheap, 2, b).transport, Transport::Posted, "{b} B");
    }
    // Past a slot, never.
    assert_ne!(best(&cheap, 2, 1073).transport, Transport::Posted);
    // A post dearer than the stream call: 400 ns for one line against 300.
    let dear = with_posted(profile(RT), 400.0, 4.0);
    assert_eq!(best(&dear, 2, 48).transport, Transport::Stream);
    // They cross where 400 + (P − 1)·4 < 300 + (L − 1)·9.5, P posted lines and L stream
    // lines of the payload (both derived from the framing, not from the model).
    let cross = (0u64..=1072)
        .find(|&b| 400.0 + (posted_lines(b) - 1) as f64 * 4.0 < 300.0 + (lines(b) - 1) as f64 * 9.5)
        .unwrap();
    // 64 bytes move the two predictions about 7 ns apart, clear of the 1 % (about 4.5 ns
    // here) the planner counts as a tie.
    let margin = 64;
    assert!(
        cross + margin <= 1072,
        "the crossing {cross} lies within a slot"
    );
    assert_eq!(best(&dear, 2, cross + margin).transport, Transport::Posted);
    assert_eq!(best(&dear, 2, cross - margin).transport, Transport::Stream);
    // Ranks sharing PUs: never posted without a post measured on one PU.
    let shared = plan_for_runtime(&cheap, &h, &request(4, 8)).unwrap();
    assert!(shared
        .ranked
        .iter()
        .all(|c| c.transport != Transport::Posted));
}

#[test]
fn a_planned_comm_posts_where_the_model_predicts_the_post_faster() {
    watchdog(planned_posts);
}

/// A communicator of `n` ranks planned under `p` on 2 CPUs.
fn planned_comm(p: Profile, n: usize) -> Comm {
    let options = CommOptions {
        schedule: DefaultSchedule::Planned(Planned::new(p, machine(2))),
        cpus: Some(2),
        ..CommOptions::default()
    };
    Comm::with_options(n, options).unwrap()
}

fn planned_posts() {
    let comm = |p: Profile| planned_comm(p, 2);
    // A cheap post is taken at every size a slot holds, and past it never.
    let cheap = comm(with_posted(profile(RT), 200.0, 4.0));
    for b in [0usize, 1, 8, 48, 512, 1000, 1024, 1025, 1072] {
        assert_eq!(cheap.broadcast_transport(b), Transport::Posted, "{b} B");
    }
    assert_ne!(cheap.broadcast_transport(1073), Transport::Posted);
    // Posting is decided size by size, against what the size's class runs otherwise (here a
    // stream: RT's single copy costs 2 µs): posted exactly where 400 + (P − 1)·4 ns beats
    // 300 + (L − 1)·9.5 ns, P posted and L stream lines of the payload (from the two framings,
    // not from the model). The crossing lies inside the class of 513–1024 bytes.
    let crossing = comm(with_posted(profile(RT), 400.0, 4.0));
    let posts: Vec<bool> = (0..=1072u64)
        .map(|b| 400_000 + (posted_lines(b) - 1) * 4_000 < 300_000 + (lines(b) - 1) * 9_500)
        .collect();
    for (b, &post) in posts.iter().enumerate() {
        let want = if post {
            Transport::Posted
        } else {
            Transport::Stream
        };
        assert_eq!(crossing.broadcast_transport(b), want, "{b} B");
    }
    // The crossing lies inside a class: a choice per class could not follow it.
    assert!((513..1024).any(|b| posts[b] != posts[b + 1]));
    // A post dearer than every transport at every size (1 µs a line) is never used, whatever
    // `direct_min_bytes` says.
    let dear = comm(with_posted(profile(RT), 1000.0, 1000.0));
    for b in [0usize, 8, 48, 512, 1000] {
        assert_ne!(dear.broadcast_transport(b), Transport::Posted, "{b} B");
    }
    // A profile without the measurement: posted by the rule (below `direct_min_bytes`).
    let old = comm(profile(RT));
    assert_eq!(old.broadcast_transport(8), Transport::Posted);
    assert_eq!(old.broadcast_transport(1023), Transport::Posted);
    assert_ne!(old.broadcast_transport(1024), Transport::Posted);
    // Whatever the path, every byte arrives.
    for mut c in [cheap, crossing, dear, old] {
        every_byte_arrives(&mut c, &[8, 100, 800, 900, 1000, 1072]);
    }
}

/// `p` with a posted broadcast measured between two ranks of one PU: one line `one_line` ns,
/// `per_line` ns per further line; and between the pair, `long` ns per line past a full slot.
fn with_shared_posted(mut p: Profile, one_line: f64, per_line: f64, long: f64) -> Profile {
    let r = l3_runtime(&mut p);
    r.shared_posted_ns = Some(one(one_line));
    r.shared_posted_line_ns = Some(one(per_line));
    r.shared_posted_bytes = Some(8192);
    r.posted_long_line_ns = Some(one(long));
    r.posted_long_bytes = Some(8192);
    p
}

/// The shared profile with posts measured: 90 ns and 14 ns a further line between two PUs,
/// 6 µs and 10 ns a further line on one PU, 5 ns a line past a full slot.
fn shared_posted_profile() -> Profile {
    with_shared_posted(
        with_posted(shared_profile(), 90.0, 14.0),
        6_000.0,
        10.0,
        5.0,
    )
}

/// A posted star of `n` ranks on `cores` PUs under `p`.
fn posted_star(p: &Profile, cores: usize, n: u32, bytes: u64) -> Result<u64, PredictError> {
    let costs = RuntimeCosts::from_profile(p, &machine(cores), Pick::Dominant).unwrap();
    predict_runtime(
        &tree(Algorithm::Star, n, 1),
        &costs,
        bytes,
        Transport::Posted,
    )
    .map(|r| r.makespan_ps)
}

#[test]
fn a_post_on_one_pu_gives_back_its_calibration_points() {
    // Two ranks of one PU: the root posts and returns, the other takes the PU and reads: the
    // calibrated call (6 µs at one line, 10 ns per further line), at every slot length up to
    // the largest slot (64 KiB), which the calibration's 8 KiB does not bound.
    let p = shared_posted_profile();
    for bytes in [0u64, 48, 49, 1072, 8192, 65_536] {
        let want = 6_000_000 + (posted_lines(bytes) - 1) * 10_000;
        assert_eq!(posted_star(&p, 1, 2, bytes), Ok(want), "{bytes} B");
    }
    assert!(matches!(
        posted_star(&p, 1, 2, 65_537),
        Err(PredictError::NotPostable(_))
    ));
    // Without the measurement on one PU, ranks sharing PUs do not post.
    let old = with_posted(shared_profile(), 90.0, 14.0);
    assert!(matches!(
        posted_star(&old, 1, 2, 48),
        Err(PredictError::NotPostable(_))
    ));
}

#[test]
fn readers_of_one_pu_take_turns_after_one_post() {
    // Four ranks on one PU: the root posts once and returns; each reader in the cycle's order
    // takes the PU (the handoff S) and reads. The model's split of the one-PU call T: the
    // root's post costs half of T − S, a read on its PU the other half.
    let p = shared_posted_profile();
    let (_, s_ps) = shared_costs();
    for bytes in [48u64, 4096] {
        let whole = 6_000_000 + (posted_lines(bytes) - 1) * 10_000;
        let write = (whole - s_ps) / 2;
        let read = whole - s_ps - write;
        assert_eq!(
            posted_star(&p, 1, 4, bytes),
            Ok(write + 3 * (s_ps + read)),
            "{bytes} B"
        );
    }
}

/// `p` with a further reader on one PU measured to add `read_line` ns per further posted line.
fn with_shared_read(mut p: Profile, read_line: f64) -> Profile {
    let r = l3_runtime(&mut p);
    r.shared_posted_read_line_ns = Some(one(read_line));
    r.shared_posted_read_bytes = Some(65_536);
    p
}

#[test]
fn a_further_reader_of_one_pu_pays_its_measured_share_of_each_line() {
    // Four ranks on one PU, the one-PU call T (6 µs at one line, 10 ns per further line) and
    // a third rank measured to add 3 ns per further line: beyond the handoff S, the one-line
    // call is halved between the post and a read, and each further line costs a read 3 ns
    // and the post the other 7.
    let p = with_shared_read(shared_posted_profile(), 3.0);
    let (_, s_ps) = shared_costs();
    for bytes in [48u64, 4096, 65_536] {
        let lines = posted_lines(bytes);
        let first = 6_000_000 - s_ps;
        let read = (first - first / 2) + (lines - 1) * 3_000;
        let write = (first / 2) + (lines - 1) * 7_000;
        assert_eq!(
            posted_star(&p, 1, 4, bytes),
            Ok(write + 3 * (s_ps + read)),
            "{bytes} B"
        );
    }
}

#[test]
fn the_calibration_s_third_reader_gives_back_the_read_share() {
    // The calibration's definition, `((T₃(64 KiB) − T₂(64 KiB)) − (T₃(48 B) − T₂(48 B))) /
    // (lines − 1)` over posts between two and among three ranks of one PU, applied to the
    // model's own predictions, returns the share it was given, up to the whole line's cost
    // (10 ns; a larger measurement leaves the post nothing per line).
    for (given, want) in [(0.0, 0.0), (3.0, 3.0), (10.0, 10.0), (25.0, 10.0)] {
        let p = with_shared_read(shared_posted_profile(), given);
        let t = |n: u32, b: u64| posted_star(&p, 1, n, b).unwrap() as f64;
        let lines = posted_lines(65_536) - 1;
        let got = ((t(3, 65_536) - t(2, 65_536)) - (t(3, 48) - t(2, 48))) / lines as f64;
        assert!(
            (got - want * 1000.0).abs() < 1.0,
            "given {given} ns: {got} ps a line"
        );
    }
}

#[test]
fn a_reader_alone_on_its_pu_reads_the_post_as_between_two_pus() {
    // 3 ranks on 2 PUs: rank 1 has PU 1 to itself and spins; it reads the post as it lands,
    // which costs what a post between the two PUs took (9 µs at one line, 14 ns per further
    // line to a full slot of 17 lines, 5 ns per line beyond). Rank 2, on the root's PU, is done
    // after the one-PU call (6 µs and 10 ns a line), earlier.
    let p = with_shared_posted(
        with_posted(shared_profile(), 9_000.0, 14.0),
        6_000.0,
        10.0,
        5.0,
    );
    for bytes in [48u64, 1072, 8192] {
        let lines = posted_lines(bytes);
        let short = lines.min(17);
        let want = 9_000_000 + (short - 1) * 14_000 + (lines - short) * 5_000;
        assert_eq!(posted_star(&p, 2, 3, bytes), Ok(want), "{bytes} B");
    }
}

#[test]
fn the_planner_posts_between_ranks_sharing_pus_only_with_the_measurement() {
    // A post that costs nothing beyond the handoffs (the one-PU call is S alone; no cost per
    // line; 90 ns between PUs): every other transport pays the same turns and its lines or
    // copies on top, so a broadcast of 1–8 KiB among 4 ranks on 2 PUs is posted.
    let one_pu = shared_costs().1 as f64 / 1000.0;
    let cheap = with_shared_posted(with_posted(shared_profile(), 90.0, 0.0), one_pu, 0.0, 0.0);
    let h = machine(2);
    let best =
        |p: &Profile, b: u64| plan_for_runtime(p, &h, &request(4, b)).unwrap().ranked[0].clone();
    for b in [1024u64, 4096, 8192] {
        assert_eq!(best(&cheap, b).transport, Transport::Posted, "{b} B");
    }
    // A post of 1 ms on one PU: never.
    let dear = with_shared_posted(with_posted(shared_profile(), 90.0, 0.0), 1e6, 0.0, 0.0);
    let ranked = plan_for_runtime(&dear, &h, &request(4, 4096))
        .unwrap()
        .ranked;
    assert_ne!(ranked[0].transport, Transport::Posted);
    assert!(ranked.iter().any(|c| c.transport == Transport::Posted));
}

#[test]
fn a_planned_comm_sharing_cpus_posts_the_range_where_the_model_predicts_faster() {
    watchdog(planned_shared_posts);
}

fn planned_shared_posts() {
    let comm = |p: Profile| planned_comm(p, 4);
    let one_pu = shared_costs().1 as f64 / 1000.0;
    // The cheap post of the planner test: posted in the default range (0 B – 8 KiB, small
    // posts on their own board of slots) where the model predicts it faster, never outside
    // it.
    let cheap = comm(with_shared_posted(
        with_posted(shared_profile(), 90.0, 0.0),
        one_pu,
        0.0,
        0.0,
    ));
    for b in [0usize, 8, 127, 1072, 1073, 4096, 8192] {
        assert_eq!(cheap.broadcast_transport(b), Transport::Posted, "{b} B");
    }
    assert_ne!(cheap.broadcast_transport(8193), Transport::Posted);
    // A dear post: never, though the range covers the size.
    let dear = comm(with_shared_posted(
        with_posted(shared_profile(), 90.0, 0.0),
        1e6,
        0.0,
        0.0,
    ));
    for b in [8usize, 128, 1024, 4096, 8192] {
        assert_ne!(dear.broadcast_transport(b), Transport::Posted, "{b} B");
    }
    // An older profile: the range.
    let old = comm(with_posted(shared_profile(), 90.0, 0.0));
    for b in [8usize, 100, 128, 8192] {
        assert_eq!(old.broadcast_transport(b), Transport::Posted, "{b} B");
    }
    assert_ne!(old.broadcast_transport(8193), Transport::Posted);
    for mut c in [cheap, dear, old] {
        every_byte_arrives(&mut c, &[8, 128, 1000, 1072, 1073, 4096, 8192, 9000]);
    }
}

#[test]
fn every_ranked_choice_carries_its_own_schedules_prediction() {
    // The planner predicts each distinct program once per transport and shares the result
    // among candidates that run it: every choice must still carry exactly what its own
    // schedule predicts, and every candidate must appear under every transport that applies.
    let p = shared_posted_profile();
    for (cores, n) in [(4, 4), (2, 8)] {
        let h = machine(cores);
        let costs = RuntimeCosts::from_profile(&p, &h, Pick::Dominant).unwrap();
        for bytes in [8u64, 512, 4096, 1 << 20] {
            let plan = plan_for_runtime(&p, &h, &request(n, bytes)).unwrap();
            for c in &plan.ranked {
                let own = predict_runtime(&c.schedule, &costs, bytes, c.transport).unwrap();
                assert_eq!(
                    c.predicted, own,
                    "{} m={} {}",
                    c.candidate.label, c.candidate.blocks, c.transport
                );
            }
            let streamed = plan
                .ranked
                .iter()
                .filter(|c| c.transport == Transport::Stream)
                .count();
            let copied = plan
                .ranked
                .iter()
                .filter(|c| c.transport == Transport::Direct)
                .count();
            if bytes > 48 {
                assert_eq!(streamed, copied, "{n} ranks, {bytes} B");
            }
        }
    }
}

/// `p` with the single copy into a buffer another PU holds measured at `(bytes, extra ns
/// beyond the copy)` points.
fn with_held(mut p: Profile, points: &[(u64, f64)]) -> Profile {
    let r = l3_runtime(&mut p);
    r.held_extra_ns = Some(points.iter().map(|&(_, e)| one(e)).collect());
    r.held_bytes = Some(points.iter().map(|&(b, _)| b).collect());
    p
}

/// The thirtieth session's three points: 64 KiB, 256 KiB, 1 MiB (all streamed by the runtime).
const STREAMED: [(u64, f64); 3] = [
    (64 << 10, 1_500.0),
    (256 << 10, 4_000.0),
    (1 << 20, 3_000.0),
];

/// A one-block broadcast from rank 0 of `n` ranks making `sends` `(from, to)` in this order.
fn by_hand(n: u32, sends: &[(u32, u32)]) -> Schedule {
    let c = Collective::Broadcast { root: 0, blocks: 1 };
    let mut b = Schedule::builder(n, c, TimeBase::UNIT).unwrap();
    for (at, &(from, to)) in sends.iter().enumerate() {
        b.push(at as u64, from, to, 0);
    }
    b.build().unwrap()
}

#[test]
fn a_forwarders_copy_pays_for_the_lines_its_readers_hold() {
    // Ranks with PUs of their own. A rank that forwards by single copy writes its copy into a
    // buffer its readers (on other PUs) read in the call before: it pays the calibrated
    // extra on top of its copy. In a chain 0 → 1 → 2 of one 64 KiB chunk, rank 1's copy is
    // on the only path, so the broadcast takes exactly the extra at 64 KiB (1.5 µs) longer.
    // A star has no forwarder, and two ranks none either: unchanged.
    let plain = profile(RT);
    let held = with_held(profile(RT), &STREAMED);
    let h = machine(3);
    let chain = by_hand(3, &[(0, 1), (1, 2)]);
    let bytes = 64 << 10;
    assert_eq!(
        predict(&held, &h, &chain, bytes, Transport::Direct)
            - predict(&plain, &h, &chain, bytes, Transport::Direct),
        1_500_000
    );
    let star = by_hand(3, &[(0, 1), (0, 2)]);
    let pair = by_hand(2, &[(0, 1)]);
    for (s, name) in [(&star, "star"), (&pair, "pair")] {
        for bytes in [4096u64, 64 << 10, 1 << 20] {
            assert_eq!(
                predict(&held, &h, s, bytes, Transport::Direct),
                predict(&plain, &h, s, bytes, Transport::Direct),
                "{name}, {bytes} B"
            );
        }
    }
    // Streams move no copies: unchanged.
    assert_eq!(
        predict(&held, &h, &chain, bytes, Transport::Stream),
        predict(&plain, &h, &chain, bytes, Transport::Stream)
    );
}

#[test]
fn held_copies_below_the_streaming_window_pay_the_plain_points_extra() {
    // The runtime copies plainly below 32 KiB and streams from there to 2 MiB; a profile's
    // points of each kind price their own sizes. Points: 4 KiB 700 ns and 16 KiB 2 µs
    // (plain), then the streamed three. A 3-rank chain of one chunk pays rank 1's extra once.
    let plain = profile(RT);
    let points = [(4 << 10, 700.0), (16 << 10, 2_000.0)];
    let held = with_held(
        profile(RT),
        &[points[0], points[1], STREAMED[0], STREAMED[1]],
    );
    let h = machine(3);
    let chain = by_hand(3, &[(0, 1), (1, 2)]);
    let extra = |bytes: u64| {
        predict(&held, &h, &chain, bytes, Transport::Direct)
            - predict(&plain, &h, &chain, bytes, Transport::Direct)
    };
    // At the plain points, and halfway up the first one's segment from nothing.
    assert_eq!(extra(4 << 10), 700_000);
    assert_eq!(extra(16 << 10), 2_000_000);
    assert_eq!(extra(2 << 10), 350_000);
    // Past the last plain point, below the window: on the 4–16 KiB slope (1.3 µs per 12 KiB).
    assert_eq!(extra(28 << 10), 2_000_000 + 1_300_000);
    // Inside the window the streamed points alone: half of the 64 KiB point at 32 KiB, not
    // an interpolation from the 16 KiB plain point.
    assert_eq!(extra(32 << 10), 750_000);
    assert_eq!(extra(64 << 10), 1_500_000);
}

#[test]
fn a_forwarder_on_shared_pus_pays_only_for_readers_on_other_pus() {
    // 4 ranks on 2 PUs (PU 0: ranks 0 and 2; PU 1: ranks 1 and 3). Rank 1 forwarding to rank
    // 3 writes into lines only its own PU holds: unchanged. Rank 2 forwarding to rank 3
    // writes into lines PU 1 holds: dearer.
    let plain = shared_profile();
    let held = with_held(shared_profile(), &STREAMED);
    let h = machine(2);
    let bytes = 64 << 10;
    let same = by_hand(4, &[(0, 1), (0, 2), (1, 3)]);
    assert_eq!(
        predict(&held, &h, &same, bytes, Transport::Direct),
        predict(&plain, &h, &same, bytes, Transport::Direct)
    );
    let across = by_hand(4, &[(0, 2), (0, 1), (2, 3)]);
    assert!(
        predict(&held, &h, &across, bytes, Transport::Direct)
            > predict(&plain, &h, &across, bytes, Transport::Direct)
    );
}

/// `p` with a copy from a forwarder's buffer that another PU holds measured at `(bytes,
/// extra ns beyond the held copy)` points.
fn with_forwarded(mut p: Profile, points: &[(u64, f64)]) -> Profile {
    let r = l3_runtime(&mut p);
    r.forwarded_extra_ns = Some(points.iter().map(|&(_, e)| one(e)).collect());
    r.forwarded_bytes = Some(points.iter().map(|&(b, _)| b).collect());
    p
}

#[test]
fn a_copy_from_a_forwarders_streamed_buffer_pays_the_forwarded_extra() {
    // A forwarder whose reader runs on another PU copies into a buffer that PU holds: inside
    // the runtime's streaming window (32 KiB – 2 MiB) with streaming stores, so its own
    // readers read the bytes from memory. Points: 64 KiB 2 µs, 256 KiB 5 µs, 1 MiB 12 µs.
    let plain = profile(RT);
    let fwd = with_forwarded(
        profile(RT),
        &[
            (64 << 10, 2_000.0),
            (256 << 10, 5_000.0),
            (1 << 20, 12_000.0),
        ],
    );
    // Ranks with PUs of their own, a chain 0 → 1 → 2 of one chunk: rank 2's copy, the last
    // on the only path, takes exactly the extra longer: 2 µs at 64 KiB, half of it at 32 KiB
    // (linear from nothing).
    let h = machine(3);
    let chain = by_hand(3, &[(0, 1), (1, 2)]);
    let extra = |s: &Schedule, bytes: u64| {
        predict(&fwd, &h, s, bytes, Transport::Direct)
            - predict(&plain, &h, s, bytes, Transport::Direct)
    };
    assert_eq!(extra(&chain, 64 << 10), 2_000_000);
    assert_eq!(extra(&chain, 32 << 10), 1_000_000);
    // Outside the window the forwarder copies plainly (its bytes stay in its cache, as a
    // root's own writes do): unchanged below and above it.
    assert_eq!(extra(&chain, 16 << 10), 0);
    assert_eq!(extra(&chain, 4 << 20), 0);
    // The root's readers read what the root wrote: a star and a pair are unchanged.
    let star = by_hand(3, &[(0, 1), (0, 2)]);
    let pair = by_hand(2, &[(0, 1)]);
    for bytes in [64u64 << 10, 1 << 20] {
        assert_eq!(extra(&star, bytes), 0, "star, {bytes} B");
        assert_eq!(extra(&pair, bytes), 0, "pair, {bytes} B");
    }
    // 4 ranks on 2 PUs (PU 0: ranks 0 and 2; PU 1: ranks 1 and 3). Rank 1 forwarding to
    // rank 3 of its own PU lends no buffer across: unchanged. Rank 2 forwarding to rank 3
    // on PU 1 does, and rank 3 copies from memory: dearer.
    let (plain, fwd) = (
        shared_profile(),
        with_forwarded(shared_profile(), &[(64 << 10, 2_000.0)]),
    );
    let h = machine(2);
    let same = by_hand(4, &[(0, 1), (0, 2), (1, 3)]);
    let across = by_hand(4, &[(0, 2), (0, 1), (2, 3)]);
    let bytes = 64 << 10;
    assert_eq!(
        predict(&fwd, &h, &same, bytes, Transport::Direct),
        predict(&plain, &h, &same, bytes, Transport::Direct)
    );
    assert!(
        predict(&fwd, &h, &across, bytes, Transport::Direct)
            > predict(&plain, &h, &across, bytes, Transport::Direct)
    );
    // Streams move no copies: unchanged.
    assert_eq!(
        predict(&fwd, &h, &across, bytes, Transport::Stream),
        predict(&plain, &h, &across, bytes, Transport::Stream)
    );
}

/// `p` with single copies measured up to `huge` bytes (at `RT`'s rate) and, where `points`
/// is not empty, the extra per byte (ns) of copies among buffers of `(footprint bytes, …)`.
fn with_footprint(mut p: Profile, huge: u64, points: &[(u64, f64)]) -> Profile {
    let r = l3_runtime(&mut p);
    r.copy_huge_ns_per_byte = Some(one(RT.large));
    r.huge_bytes = Some(huge);
    if !points.is_empty() {
        r.footprint_extra_ns_per_byte = Some(points.iter().map(|&(_, e)| one(e)).collect());
        r.footprint_bytes = Some(points.iter().map(|&(b, _)| b).collect());
    }
    p
}

#[test]
fn copies_whose_buffers_outgrow_the_caches_pay_the_footprint_extra() {
    // Calibrated at 4 MiB between two ranks (8 MiB of buffers): no extra up to 8 MiB of
    // buffers, 0.05 ns per byte at 16 MiB, 0.15 at 64 MiB, linear between, 0.15 beyond.
    const MIB: u64 = 1 << 20;
    let plain = with_footprint(profile(RT), 4 * MIB, &[]);
    let fp = with_footprint(profile(RT), 4 * MIB, &[(16 * MIB, 0.05), (64 * MIB, 0.15)]);
    let bytes = 4 * MIB;
    // Two ranks: the calibrated case itself, unchanged.
    let h = machine(2);
    let pair = by_hand(2, &[(0, 1)]);
    assert_eq!(
        predict(&fp, &h, &pair, bytes, Transport::Direct),
        predict(&plain, &h, &pair, bytes, Transport::Direct)
    );
    // Three ranks with PUs of their own, a star: 12 MiB of buffers, half way to the first
    // point, so each reader's copy takes 4 MiB · 0.025 ns longer; they copy side by side,
    // so the broadcast ends that much later.
    let h = machine(3);
    let star = by_hand(3, &[(0, 1), (0, 2)]);
    let extra_ps = |ns_per_byte: f64| (bytes as f64 * ns_per_byte * 1000.0).round() as u64;
    assert_eq!(
        predict(&fp, &h, &star, bytes, Transport::Direct)
            - predict(&plain, &h, &star, bytes, Transport::Direct),
        extra_ps(0.025)
    );
    // Seventeen ranks: 68 MiB, past the last point: its extra.
    let h = machine(17);
    let sends: Vec<(u32, u32)> = (1..17).map(|r| (0, r)).collect();
    let star = by_hand(17, &sends);
    assert_eq!(
        predict(&fp, &h, &star, bytes, Transport::Direct)
            - predict(&plain, &h, &star, bytes, Transport::Direct),
        extra_ps(0.15)
    );
    // Small payloads stay below the base whatever the ranks: unchanged.
    assert_eq!(
        predict(&fp, &h, &star, 64 << 10, Transport::Direct),
        predict(&plain, &h, &star, 64 << 10, Transport::Direct)
    );
    // Eight ranks on two PUs (32 MiB, a third of the way from 16 to 64 MiB: 0.05 + 0.1/3
    // ns per byte): the four readers of the PU without the root copy in turn, each copy
    // that much longer.
    let h = machine(2);
    let sends: Vec<(u32, u32)> = (1..8).map(|r| (0, r)).collect();
    let star = by_hand(8, &sends);
    let diff = predict(&fp, &h, &star, bytes, Transport::Direct)
        - predict(&plain, &h, &star, bytes, Transport::Direct);
    let one_copy = extra_ps(0.05 + 0.1 / 3.0);
    assert!(
        diff.abs_diff(4 * one_copy) < one_copy / 1000,
        "{diff} ps later, one copy's extra {one_copy} ps"
    );
}

/// The shared profile with a spin phase of `ns` ns (`None`: not measured).
fn with_spin(ns: Option<f64>) -> Profile {
    let mut p = shared_profile();
    p.spin_ns = ns.map(one);
    p
}

#[test]
fn a_lender_waiting_only_for_readers_on_other_pus_spins_for_them() {
    // A one-block single copy of 4 KiB (one chunk) from rank 0 among 4 ranks on 2 PUs: ranks 0
    // and 2 share PU 0, ranks 1 and 3 PU 1. Once rank 2 has copied, only readers on PU 1 are
    // left and the root spins on its turns. With a spin longer than the whole broadcast it
    // sees the last copy done a hop after it ends, whatever PU 1's phase and speed.
    let h = machine(2);
    let run = |spin: Option<f64>, blocks: u32, bytes: u64| {
        let costs = RuntimeCosts::from_profile(&with_spin(spin), &h, Pick::Dominant).unwrap();
        predict_runtime(
            &tree(Algorithm::Star, 4, blocks),
            &costs,
            bytes,
            Transport::Direct,
        )
        .unwrap()
    };
    let spun = run(Some(1e9), 1, 4096);
    assert_eq!(spun.makespan_ps, spun.last_hold_ps + HOP_PS);
    // Yielding at once (no spin measured, or none), the copies are the same and the root
    // sees the last one only at a later turn: after a handoff at least.
    let yielded = run(None, 1, 4096);
    assert_eq!(yielded.last_hold_ps, spun.last_hold_ps);
    assert!(yielded.makespan_ps > spun.makespan_ps + 1_000_000);
    assert_eq!(run(Some(0.0), 1, 4096), yielded);
    // Several blocks, or one block of several chunks (64 KiB each here), run the executor,
    // whose lender yields at once: the spin changes nothing.
    for (blocks, bytes) in [(2, 4096), (1, 128 << 10)] {
        assert_eq!(run(Some(1e9), blocks, bytes), run(None, blocks, bytes));
    }
}

#[test]
fn within_the_band_of_ties_the_faster_of_equal_message_counts_comes_first() {
    // A calibration of this machine (docs/data/lender-spin-model-2026-12-04/huge/P3.json): at
    // 4 ranks of 4 MiB on its 2 PUs the binary tree and dtree(3) both send 3 messages, and
    // their predictions lie within 1 % of each other. The faster-predicted one is first,
    // whichever is the shallower (dtree(3) sends all three from the root).
    let text =
        std::fs::read_to_string("docs/data/lender-spin-model-2026-12-04/huge/P3.json").unwrap();
    let p = Profile::from_json_forced(&text).unwrap();
    let h = TopologySource::from_options(Some("l3:1 core:2 pu:1"), None)
        .unwrap()
        .load()
        .unwrap();
    let plan = plan_for_runtime(&p, &h, &request(4, 4 << 20)).unwrap();
    let time = |label: &str| {
        plan.ranked
            .iter()
            .find(|c| c.candidate.label == label && c.candidate.blocks == 1)
            .map(|c| (c.predicted.makespan_ps, c.schedule.len()))
            .unwrap()
    };
    let (binary, dtree) = (time("binary"), time("dtree(3)"));
    assert_eq!((binary.1, dtree.1), (3, 3));
    let (fast, slow) = (binary.0.min(dtree.0), binary.0.max(dtree.0));
    assert!(
        fast < slow && slow - fast <= fast / 100,
        "{binary:?} {dtree:?}"
    );
    let first = plan
        .ranked
        .iter()
        .position(|c| c.predicted.makespan_ps == fast);
    let second = plan
        .ranked
        .iter()
        .position(|c| c.predicted.makespan_ps == slow);
    assert!(first < second, "{binary:?} {dtree:?}");
}
