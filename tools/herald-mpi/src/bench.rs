//! herald against MPI (in progress).
