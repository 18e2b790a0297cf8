//! Every profile profkit reads as Arrow record batches, and Hive-partitioned Parquet datasets of
//! many hosts for engines that scale past one machine (DuckDB, Spark, Trino, Polars,
//! DataFusion).
//!
//! An input becomes an [`EventBatches`] stream: XSpaces are read one plane at a time
//! ([`sources::xspace`]), the other formats (Chrome and Kineto JSON, Paddle's `Profile` and node
//! trees, Poplar execution profiles, XDL datasets) through profkit-convert's conversions to the
//! XSpace ([`sources`]). The stream is an Arrow [`RecordBatchReader`](arrow_array::RecordBatchReader)
//! of the `events` table whose batches hold [`Options::batch_rows`] rows and may span planes. Each
//! plane is read through a zero-copy view of its bytes ([`profkit_xplane::XPlaneView`]), never
//! decoded into an owned tree, so memory is one plane's bytes plus one batch. When it ends it gives the
//! small `planes`, `lines` and `metadata` tables ([`EventBatches::side_tables`]). XDL records
//! have a table of their own ([`xdl::records`]).
//!
//! The tables' columns are versioned ([`schema::VERSION`], in each schema's and file's
//! metadata): see [`schema`] and `docs/scale.md`. Names are dictionary-encoded; start times are
//! exact picoseconds (`Decimal128(38, 0)`), durations `Int64` picoseconds; the stats tools query
//! most have typed columns ([`schema::TYPED_STATS`]) and every stat is in the `stats` map. For
//! data frames, [`Layout::Frame`] holds the same values in columns that need no object per row
//! (the exact `Int64` pair `timestamp_ns` and `offset_ps`, the stats as JSON text).
//!
//! [`HostWriter`] writes one host into a dataset `ROOT/host=<host>/table=<table>/*.parquet`
//! (zstd, row groups of a million rows), appearing whole or not at all; other hosts' files are
//! never touched, so a cluster's profiles can be converted host by host, in parallel.
//!
//! ```
//! use arrow_array::RecordBatchReader;
//! use profkit_arrow::{HostInfo, HostWriter, Options, WriteOptions, sources};
//! use profkit_xplane::{PlaneBuilder, XPlane, XSpace};
//!
//! let mut plane = XPlane::default();
//! let mut b = PlaneBuilder::new(&mut plane);
//! b.set_name("/device:GPU:0");
//! b.line(1).set_name("Stream #1").add_event("matmul").set_offset_ps(1_000).set_duration_ps(2_500);
//! let space = XSpace { planes: vec![plane], ..XSpace::default() };
//!
//! // As record batches:
//! let info = HostInfo::new("worker0", "xspace", ["worker0.xplane.pb"]);
//! let mut events = sources::space(space.clone(), info.clone(), Options::default());
//! assert_eq!(events.schema().field(0).name(), "host");
//! let batch = events.next_batch()?.expect("one batch");
//! assert_eq!(batch.num_rows(), 1);
//! assert!(events.next_batch()?.is_none());
//! assert_eq!(events.side_tables()?.planes.num_rows(), 1);
//!
//! // As a host of a Parquet dataset:
//! let root = std::env::temp_dir().join(format!("profkit-arrow-doc-{}", std::process::id()));
//! let mut events = sources::space(space, info, Options::default());
//! let mut host = HostWriter::create(&root, "worker0", WriteOptions::default())?;
//! assert_eq!(host.write_events(&mut events)?, 1);
//! host.write_side(&events.side_tables()?)?;
//! let dir = host.commit()?;
//! assert!(dir.join("table=events/part-0.parquet").exists());
//! // The same host again is refused.
//! assert!(HostWriter::create(&root, "worker0", WriteOptions::default()).is_err());
//! # std::fs::remove_dir_all(&root).ok();
//! # Ok::<(), profkit_arrow::Error>(())
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod dataset;
mod error;
pub mod events;
pub mod hlo_ops;
pub mod kernels;
pub mod op_metrics;
pub mod schema;
pub mod sources;
pub mod steps;
pub mod xdl;

pub use dataset::{HostWriter, WriteOptions, Written, host_name};
pub use error::{Error, Result};
pub use events::{Chunk, EventBatches, HostInfo, Options, RawItems, SideTables};
pub use schema::Layout;

/// Writes one host's events and side tables into the dataset at `root`; the events written and
/// where the host went.
pub fn write_host<I>(
    root: &std::path::Path,
    batches: &mut EventBatches<I>,
    options: WriteOptions,
) -> Result<(u64, std::path::PathBuf)>
where
    I: RawItems,
{
    let mut host = HostWriter::create(root, &batches.info().host, options)?;
    let written = host.write_host_tables(batches)?;
    Ok((written.events, host.commit()?))
}
