//! The table of `docs/fat-tree.md`: simulated steps of every ideal fat-tree algorithm for
//! `N = 2^4 … 2^20` and each capacity function, next to recurrences (2)–(4) and the lower
//! bounds of Theorems 2 and 3. Product and prefix are checked (and their time shown) up to
//! `N = 2^12`, the combining checker's limit.
//!
//! ```text
//! cargo run --release --example fat_tree_table [max_exponent]
//! ```

use herald::{
    check, generate,
    model::{FatTree, FatTreeCapacity, Problem},
    sim::Rule,
    time::TimeBase,
    Algorithm, CostModel, Model, Request,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let max: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(20);
    for w in FatTreeCapacity::ALL {
        let tree = FatTree::new(w);
        let model = Model::from(tree);
        println!("\n### w = {w}\n");
        println!("| N | broadcast | (3) T | sparse | (2) S | pipelined | (4) T' | product | prefix | Thm 2 | Thm 3 |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        for e in 4..=max {
            let n = 1u32 << e;
            let big = u64::from(n);
            let steps = |a: Algorithm| -> Result<u64, Box<dyn std::error::Error>> {
                let s = generate(&Request::broadcast(a, n, 1, 0), &model)?;
                let r = check(&s, &model)?;
                if a == Algorithm::Sparse {
                    assert!(r.violations().iter().all(|v| v.rule == Rule::Incomplete));
                    let c = tree.copies(big) as u32;
                    let done = r.completion().ok_or("no completion")?;
                    return Ok((0..c)
                        .map(|i| done[(i * (n / c)) as usize])
                        .max()
                        .unwrap_or(0));
                }
                assert!(r.legal(), "{a} N = {n} w = {w}");
                Ok(r.makespan())
            };
            let combining = |a: Algorithm| -> Result<String, Box<dyn std::error::Error>> {
                if e > 12 {
                    return Ok("—".into());
                }
                Ok(steps(a)?.to_string())
            };
            let thm2 = tree.broadcast_lower_bound(Problem { n, m: 1 }, TimeBase::UNIT)?;
            let c = tree.copies(big);
            println!(
                "| 2^{e} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
                steps(Algorithm::FatBroadcast)?,
                tree.broadcast_recurrence(big),
                steps(Algorithm::Sparse)?,
                tree.sparse_recurrence(big, c),
                steps(Algorithm::Pipelined)?,
                tree.pipelined_recurrence(big),
                combining(Algorithm::Product)?,
                combining(Algorithm::Prefix)?,
                thm2,
                tree.theorem3_bound(big),
            );
        }
    }
    Ok(())
}
