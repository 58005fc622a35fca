//! Baseline congestion-control schemes (being written).
