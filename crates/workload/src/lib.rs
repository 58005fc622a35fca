//! Workload generation (being written).
