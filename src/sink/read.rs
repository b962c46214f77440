//! Reading back what the sink wrote: a shard's columns, a shard's checksum.
//! Used by `merge` (parts) and by a resumed run (its committed shards).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use arrow::array::{AsArray, RecordBatch, UInt64Array};
use arrow::datatypes::UInt64Type;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use xxhash_rust::xxh3::Xxh3;

use super::ShardInfo;
use crate::config::user_error;

/// Reads only `columns` of the shard at `path`, `batch_rows` rows at a time.
pub fn open_shard(
    path: &Path,
    columns: &[&str],
    batch_rows: usize,
) -> Result<ParquetRecordBatchReader> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("reading {}", path.display()))?;
    let schema = builder.parquet_schema();
    for name in columns {
        if !schema
            .columns()
            .iter()
            .any(|c| c.path().parts()[0] == *name)
        {
            return Err(user_error(format!(
                "{}: no column {name}; not a pairpipe shard?",
                path.display()
            )));
        }
    }
    let mask = ProjectionMask::columns(schema, columns.iter().copied());
    builder
        .with_projection(mask)
        .with_batch_size(batch_rows)
        .build()
        .with_context(|| format!("reading {}", path.display()))
}

pub fn u64_column<'a>(batch: &'a RecordBatch, name: &str, path: &Path) -> Result<&'a UInt64Array> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<UInt64Type>())
        .ok_or_else(|| anyhow!("{}: column {name} is not uint64", path.display()))
}

/// Checks that the file `dir/shard.path` is the shard `shard` describes
/// (size and xxh3 of its bytes); `whose` prefixes the error, which is the
/// user's to fix (exit 2): the file was changed, truncated or removed.
pub fn verify_shard(dir: &Path, shard: &ShardInfo, whose: &str) -> Result<()> {
    let path = dir.join(&shard.path);
    let file =
        File::open(&path).map_err(|e| user_error(format!("{whose}{}: {e}", path.display())))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = reader
            .read(&mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    let xxh3 = format!("{:016x}", hasher.digest());
    if bytes != shard.bytes || xxh3 != shard.xxh3 {
        return Err(user_error(format!(
            "{whose}{} is not the shard its manifest lists ({bytes} bytes, xxh3 {xxh3}; \
             manifest: {} bytes, xxh3 {}): changed or incomplete",
            path.display(),
            shard.bytes,
            shard.xxh3
        )));
    }
    Ok(())
}
