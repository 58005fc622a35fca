//! FCT analysis (being written).
