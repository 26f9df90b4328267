//! The smallest use of herald's collectives: a team of 4 pinned worker threads, a communicator,
//! and one broadcast of a byte buffer from rank 2 to every rank.
//!
//! ```text
//! cargo run --release --example broadcast
//! ```
//!
//! Every rank passes a buffer of the same length; after the call, each holds the root's bytes.
//! The output is one line per rank, in rank order:
//!
//! ```text
//! rank 0 got "hello from rank 2"
//! rank 1 got "hello from rank 2"
//! rank 2 got "hello from rank 2"
//! rank 3 got "hello from rank 2"
//! ```

use herald::{runtime::CollectiveError, Comm, Team};

/// Broadcasts "hello from rank {root}" from `root` on a team of `ranks`; returns what each
/// rank holds afterwards, in rank order.
fn broadcast(ranks: usize, root: usize) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    let mut team = Team::new(ranks)?; // the worker threads, one per rank
    let mut comm = Comm::new(ranks)?; // channels and cached schedules for `ranks` ranks
    let message = format!("hello from rank {root}").into_bytes();
    // One endpoint per rank; `run_with` hands endpoint r to rank r.
    let mut endpoints = comm.ranks();
    let got = team.run_with(&mut endpoints, |_ctx, rank| {
        let mut buf = if rank.rank() == root {
            message.clone()
        } else {
            vec![0; message.len()]
        };
        rank.broadcast(root, &mut buf)?;
        Ok::<_, CollectiveError>(buf)
    });
    Ok(got.into_iter().collect::<Result<_, _>>()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (rank, bytes) in broadcast(4, 2)?.iter().enumerate() {
        println!("rank {rank} got {:?}", String::from_utf8_lossy(bytes));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rank_gets_the_roots_bytes() {
        let got = super::broadcast(4, 2).unwrap();
        assert!(got.iter().all(|b| b == b"hello from rank 2"), "{got:?}");
    }
}
