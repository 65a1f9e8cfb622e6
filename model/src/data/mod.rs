//! Training data: programs to trace (generated and real), episodes sampled from their
//! state trees, and the sharded dataset on disk.
//!
//! Read in this order: [`generate`] (programs from seeds), [`corpus`] (programs from real
//! code), [`episodes`] (walks of actions over a run), [`shards`] (the files), [`build`]
//! (the `neural-model dataset` pipeline: [`build_dataset`]).

pub mod build;
pub mod corpus;
pub mod episodes;
pub mod generate;
pub mod shards;

pub use build::{
    build_dataset, build_dataset_counting, split_of, DatasetOptions, Manifest, SPLITS,
};
pub use episodes::{sample_episode, Episode, EpisodeOptions, Mixture};
pub use generate::{generate, GenConfig, GeneratedProgram};
pub use shards::{read_shard, Counts, TokenCounter};
