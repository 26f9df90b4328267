//! Threads, channels, programs and collectives: the only module with `unsafe`.
