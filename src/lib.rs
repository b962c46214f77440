//! pairpipe: synthesize Warp kernels, lower them warp-exact to C++/CUDA in Rust,
//! and stream the pairs into sharded Parquet.
//!
//! Modules follow the data flow of the pipeline:
//! config → synth → lang/lower → verify → dedup → sink, glued by `pipeline`;
//! `report` reads the shards back with polars; `merge` joins the parts of a
//! run made on several machines (`run --part i/N`).

pub mod config;
pub mod dedup;
pub mod lang;
pub mod lower;
pub mod memory;
pub mod merge;
pub mod pipeline;
pub mod report;
pub mod row;
pub mod simd;
pub mod sink;
pub mod source;
pub mod synth;
pub mod text;
pub mod tokens;
pub mod verify;

/// The warp-lang release whose code generator pairpipe reproduces.
pub const WARP_VERSION: &str = "1.19.0";
/// pairpipe's own version, recorded in manifests and Parquet metadata.
pub const PAIRPIPE_VERSION: &str = env!("CARGO_PKG_VERSION");
