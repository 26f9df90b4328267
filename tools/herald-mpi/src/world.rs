//! MPI start-up: the thread level, the launcher check, agreement on arguments, placement and
//! pinning.
//!
//! # Launchers
//!
//! A binary linked to one MPI library but started by the other library's `mpirun` does not
//! fail: every process initializes as a world of one. [`World::init`] catches that from the
//! environment the launchers set (`OMPI_COMM_WORLD_SIZE` for Open MPI's `mpirun`, `PMI_SIZE` for
//! MPICH's Hydra, `PMIX_SIZE`/`MPI_LOCALNRANKS` where present): a world of one in a job that the
//! launcher says has more ranks is a [`Error::Launcher`] on every process, which each prints.
//!
//! # Pinning
//!
//! Each process runs on one CPU. If the launcher bound it to a single CPU, that is its CPU;
//! otherwise herald-mpi pins it to the `local rank`-th CPU (mod their number) of the CPUs it may
//! use, where the local rank is its rank among the processes of its host
//! (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`). So herald's threads and MPI's processes can be
//! put on the same CPUs, and measurements do not depend on the launcher's binding defaults.

use crate::error::Error;
use crate::p2p::Channel;
use mpi::collective::CommunicatorCollectives;
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::Duration;

/// Bytes per rank in an agreement record or a placement record.
const RECORD: usize = 256;

/// How to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitOptions {
    /// Pin the process to one CPU (see the module docs).
    pub pin: bool,
    /// How long a message may make no progress before herald's waits fail.
    pub timeout: Duration,
}

impl Default for InitOptions {
    fn default() -> InitOptions {
        InitOptions {
            pin: true,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Where one rank runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankPlace {
    /// Its host (`MPI_Get_processor_name`).
    pub host: String,
    /// The OS index of its CPU, if it runs on one CPU.
    pub cpu: Option<usize>,
    /// Its rank among the processes of its host.
    pub local_rank: usize,
}

/// The MPI world of this process.
pub struct World {
    /// Finalizes MPI when dropped (under the watchdog, after `comm`).
    universe: Option<Universe>,
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    local_rank: usize,
    local_size: usize,
    cpu: Option<usize>,
    library: String,
    timeout: Duration,
    /// Whether this host runs more processes of the job than it has CPUs.
    oversubscribed: bool,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("local_rank", &self.local_rank)
            .field("cpu", &self.cpu)
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}

/// The job size a launcher announces in the environment, and which variable said so.
fn launcher_size() -> Option<(usize, &'static str)> {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "MPI_LOCALNRANKS",
    ]
    .into_iter()
    .find_map(|var| {
        let n = std::env::var(var).ok()?.trim().parse::<usize>().ok()?;
        (n > 1).then_some((n, var))
    })
}

/// The MPI library in a few words (`Open MPI v4.1.4`, `MPICH 4.0.2`), from the first line of
/// `MPI_Get_library_version`.
pub fn library_line() -> String {
    let full = mpi::environment::library_version().unwrap_or_default();
    let line = full.lines().next().unwrap_or("").trim();
    let first = line.split(',').next().unwrap_or(line);
    first
        .replace("Version:", "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl World {
    /// Initializes MPI (`MPI_THREAD_SERIALIZED`), checks the launcher, and pins the process.
    ///
    /// # Errors
    ///
    /// [`Error::Launcher`] when the world has one process but the launcher started more (the
    /// binary and `mpirun` belong to different MPI libraries); [`Error::Usage`] if MPI was
    /// already initialized.
    pub fn init(opts: InitOptions) -> Result<World, Error> {
        // Read the CPUs this process may use before pinning narrows them (herald caches them).
        let allowed = herald::Team::available_cpus();
        let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Serialized) else {
            return Err(Error::Usage("MPI is already initialized".into()));
        };
        let comm = universe.world();
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        let library = library_line();
        if size == 1 {
            if let Some((n, var)) = launcher_size() {
                return Err(Error::Launcher(format!(
                    "this process is alone in its MPI world, but the launcher started {n} ranks \
                     ({var}={n}): herald-mpi is linked to {library}, and was started by another \
                     MPI's mpirun (use mpirun.openmpi for Open MPI, mpirun.mpich for MPICH)"
                )));
            }
        }
        let local = comm.split_shared(rank as i32);
        let (local_rank, local_size) = (local.rank() as usize, local.size() as usize);
        drop(local);
        let cpu = match allowed {
            [] => None,
            [one] => Some(*one),
            many if opts.pin => {
                let cpu = many[local_rank % many.len()];
                core_affinity::set_for_current(core_affinity::CoreId { id: cpu }).then_some(cpu)
            }
            _ => None,
        };
        let host_cpus = herald::TopologySource::Machine
            .load()
            .map_or(allowed.len(), |h| h.pu_count());
        Ok(World {
            oversubscribed: local_size > host_cpus.max(1),
            universe: Some(universe),
            comm,
            rank,
            size,
            local_rank,
            local_size,
            cpu,
            library,
            timeout: opts.timeout,
        })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// This process's index among the processes of its host, and their number.
    pub fn local(&self) -> (usize, usize) {
        (self.local_rank, self.local_size)
    }

    /// Whether this host runs more of the job's processes than it has CPUs (waits then yield
    /// the CPU between polls).
    pub fn oversubscribed(&self) -> bool {
        self.oversubscribed
    }

    /// The CPU this process runs on, if one.
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// How long herald's waits may make no progress before they fail (`--timeout`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The MPI library (first line of `MPI_Get_library_version`).
    pub fn library(&self) -> &str {
        &self.library
    }

    /// The world communicator (for the library's own collectives).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// A fresh communicator for herald's messages (see [`Channel`]).
    ///
    /// # Errors
    /// [`Error::P2p`] if MPI's thread level is below `MPI_THREAD_SERIALIZED`.
    pub fn channel(&self) -> Result<Channel, Error> {
        Ok(Channel::new(&self.comm, self.timeout, self.oversubscribed)?)
    }

    /// Fails unless the world has exactly `n` processes.
    ///
    /// # Errors
    /// [`Error::Launcher`].
    pub fn expect_size(&self, n: usize) -> Result<(), Error> {
        if self.size == n {
            return Ok(());
        }
        let hint = if self.size == 1 {
            " (started without mpirun, or by another MPI's mpirun?)"
        } else {
            ""
        };
        Err(Error::Launcher(format!(
            "expected {n} ranks, the MPI world has {}{hint}",
            self.size
        )))
    }

    /// Checks that every rank passed the same `what` (a canonical description of its arguments),
    /// so a mismatch is one clear error on every rank instead of a hang.
    ///
    /// # Errors
    /// [`Error::Disagree`] naming a rank whose `what` differs from rank 0's, on every rank.
    pub fn agree(&self, what: &str) -> Result<(), Error> {
        let mine = record(what);
        let mut all = vec![0u8; RECORD * self.size];
        self.bounded("MPI_Allgather (agreeing on arguments or outcomes)", |c| {
            c.all_gather_into(&mine[..], &mut all[..]);
        });
        let text = |r: usize| unrecord(&all[r * RECORD..(r + 1) * RECORD]);
        let first = text(0);
        match (1..self.size).find(|&r| text(r) != first) {
            None => Ok(()),
            Some(r) => Err(Error::Disagree(format!(
                "rank 0 was started with `{first}`, rank {r} with `{}`",
                text(r)
            ))),
        }
    }

    /// Agrees on the outcome of a step each rank did on its own (reading a file, parsing): if
    /// it failed on some ranks but not others, every rank gets [`Error::Disagree`] naming a
    /// rank and its error; if it failed everywhere alike, every rank gets the error; else `r`.
    ///
    /// # Errors
    /// As described.
    pub fn agree_result<T>(&self, what: &str, r: Result<T, Error>) -> Result<T, Error> {
        let outcome = match &r {
            Ok(_) => format!("{what}: ok"),
            Err(e) => format!("{what}: {e}"),
        };
        self.agree(&outcome)?;
        r
    }

    /// Every rank's placement, by rank.
    pub fn placements(&self) -> Vec<RankPlace> {
        let host =
            mpi::environment::processor_name().unwrap_or_else(|_| herald::model::host_name());
        let cpu = self.cpu.map_or(-1i64, |c| c as i64);
        let mine = record(&format!("{cpu} {} {host}", self.local_rank));
        let mut all = vec![0u8; RECORD * self.size];
        self.bounded("MPI_Allgather (the ranks' placements)", |c| {
            c.all_gather_into(&mine[..], &mut all[..]);
        });
        (0..self.size)
            .map(|r| {
                let text = unrecord(&all[r * RECORD..(r + 1) * RECORD]);
                let mut parts = text.splitn(3, ' ');
                let cpu = parts.next().and_then(|c| c.parse::<i64>().ok());
                let local_rank = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
                RankPlace {
                    host: parts.next().unwrap_or("").to_owned(),
                    cpu: cpu.and_then(|c| usize::try_from(c).ok()),
                    local_rank,
                }
            })
            .collect()
    }

    /// A barrier (the library's), under the watchdog ([`World::bounded`]).
    pub fn barrier(&self) {
        self.bounded("MPI_Barrier", |c| c.barrier());
    }

    /// Runs `call`, which makes a blocking collective call of the MPI library on the world
    /// communicator it is given (`what` names it), under the process's watchdog: if the call
    /// has not returned after the timeout plus [`SLACK`](crate::SLACK), this rank prints what
    /// it waited in and ends the job with `MPI_Abort` (see [`bounded`](crate::bounded)). The
    /// library's collectives cannot be polled with a deadline as herald's waits are; this is
    /// what keeps a rank that stops answering from hanging the others inside one.
    ///
    /// ```no_run
    /// use mpi::collective::{CommunicatorCollectives, SystemOperation};
    /// let world = herald_mpi::World::init(Default::default())?;
    /// let mut total = 0u64;
    /// world.bounded("MPI_Allreduce (a count)", |c| {
    ///     c.all_reduce_into(&1u64, &mut total, SystemOperation::sum())
    /// });
    /// assert_eq!(total, world.size() as u64);
    /// # Ok::<(), herald_mpi::Error>(())
    /// ```
    pub fn bounded<T>(&self, what: &str, call: impl FnOnce(&SimpleCommunicator) -> T) -> T {
        crate::bounded(self.rank, self.timeout + crate::SLACK, what, || {
            call(&self.comm)
        })
    }

    /// Ends every process of the job with `code` (`MPI_Abort`): for failures no rank can
    /// report to the others.
    pub fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // MPI_Finalize waits for the other ranks (Open MPI's ends with a fence): a rank that
        // stopped answering after the others finished would hang them there.
        let universe = self.universe.take();
        crate::bounded(
            self.rank,
            self.timeout + crate::SLACK,
            "MPI_Finalize",
            || drop(universe),
        );
    }
}

/// `text` in a fixed-size record (cut at [`RECORD`] − 1 bytes on a character boundary).
fn record(text: &str) -> [u8; RECORD] {
    let mut out = [0u8; RECORD];
    let mut end = text.len().min(RECORD - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out[..end].copy_from_slice(&text.as_bytes()[..end]);
    out
}

fn unrecord(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{record, unrecord, RECORD};

    #[test]
    fn records_round_trip_and_cut_on_characters() {
        assert_eq!(unrecord(&record("run --bytes 8")), "run --bytes 8");
        let long = "λ".repeat(200); // 400 bytes, 2 per character
        let cut = unrecord(&record(&long));
        assert!(cut.len() < RECORD && long.starts_with(&cut) && cut.chars().all(|c| c == 'λ'));
    }
}
