//! Machine topology: hwloc discovery, synthetic and XML topologies, rank-to-core maps.
