//! dcsim facade
