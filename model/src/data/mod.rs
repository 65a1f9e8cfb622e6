//! Training data: programs to trace (generated and real), episodes sampled from their
//! state trees, and the sharded dataset on disk.

pub mod corpus;
pub mod generate;
