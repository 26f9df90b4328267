use super::*;

#[test]
fn build_groups_by_sender_stably_in_time_order() {
    let c = Collective::Broadcast { root: 0, blocks: 2 };
    let mut b = Schedule::builder(4, c, TimeBase::UNIT).unwrap();
    let input = [
        (5, 2, 3, 1),
        (0, 0, 1, 0),
        (3, 1, 2, 1),
        (1, 0, 2, 0),
        (1, 0, 3, 1),
        (2, 1, 3, 0),
    ];
    for (a, f, t, w) in input {
        b.push(a, f, t, w);
    }
    let s = b.build().unwrap();
    let got: Vec<_> = s.sends().map(|x| (x.at, x.from, x.to, x.what)).collect();
    assert_eq!(
        got,
        [
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (1, 0, 3, 1),
            (2, 1, 3, 0),
            (3, 1, 2, 1),
            (5, 2, 3, 1)
        ]
    );
}

#[test]
fn invalid_problems_are_typed_errors() {
    let c = Collective::Broadcast { root: 0, blocks: 1 };
    assert_eq!(
        Schedule::builder(0, c, TimeBase::UNIT).unwrap_err(),
        ScheduleError::NoProcessors
    );
    let c = Collective::Broadcast { root: 3, blocks: 1 };
    assert!(matches!(
        Schedule::builder(3, c, TimeBase::UNIT),
        Err(ScheduleError::Root { .. })
    ));
    let c = Collective::Broadcast { root: 0, blocks: 0 };
    assert_eq!(
        Schedule::builder(3, c, TimeBase::UNIT).unwrap_err(),
        ScheduleError::NoBlocks
    );
}

#[test]
fn rooted_at_rotates_ranks() {
    let c = Collective::Broadcast { root: 0, blocks: 1 };
    let mut b = Schedule::builder(3, c, TimeBase::UNIT).unwrap();
    b.push(0, 0, 1, 0);
    b.push(1, 1, 2, 0);
    let s = b.build().unwrap().rooted_at(2).unwrap();
    assert_eq!(s.collective(), Collective::Broadcast { root: 2, blocks: 1 });
    let got: Vec<_> = s.sends().map(|x| (x.from, x.to)).collect();
    assert_eq!(got, [(0, 1), (2, 0)]);
}
