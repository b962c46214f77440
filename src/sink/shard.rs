//! One shard file, written a row group at a time with a compact footer.
//!
//! Parquet's file writer keeps every finished row group's metadata as
//! structs until the footer: ~25 KB a row group with this schema (34 column
//! chunks of ~730 bytes, most of it slots for page indexes and bloom filters
//! the run never writes), ~2.4 MB for a full 128 MiB shard. That made a long
//! run's peak memory depend on how far its open shard had got (BENCHMARKS.md).
//!
//! So each row group is written by a writer of its own into the shard's
//! file: its data goes to the file, and its footer, ~3 KB of Thrift, is kept
//! as bytes. Closing the shard decodes the group footers one by one, moves
//! their offsets to where the groups sit in the shard, and writes the
//! shard's footer: the same bytes one writer for the whole shard would have
//! written.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::file::metadata::{
    FileMetaData, ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader,
    ParquetMetaDataWriter, RowGroupMetaData,
};
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;
use xxhash_rust::xxh3::Xxh3;

use super::ShardInfo;
use super::pages::CompactPages;
use crate::memory::with_growth_room;

/// Room for a buffer of page values while parquet encodes (see
/// [`with_growth_room`]). Parquet adds up to a page limit of values at a
/// time to a page that may be just under it, so a text page ends below twice
/// the limit, and its buffer, doubling, asks for up to twice that.
const PAGE_BUFFER_ROOM: usize = 4 * super::TEXT_PAGE_BYTES;

/// "PAR1": a Parquet file starts and ends with it.
const MAGIC: &[u8; 4] = b"PAR1";
/// The footer's trailer: its length (u32, little-endian) and the magic.
const TRAILER_LEN: usize = 8;

/// How every shard of a run is encoded.
pub(super) struct ShardFormat {
    schema: SchemaRef,
    /// Each row group's writer: the run's properties without the key-value
    /// metadata, which only the shard's footer carries.
    group_options: ArrowWriterOptions,
    /// The footer of a shard without rows (schema, key-value metadata with
    /// the Arrow schema, created_by, column orders): a shard's footer is this
    /// with its row groups and their row count.
    template: FileMetaData,
    /// Decoding a group's footer: with the schema above, and every field
    /// as written (by default page encoding stats come back as a bit mask).
    read_options: ParquetMetaDataOptions,
    /// Size of an empty shard.
    pub empty_bytes: usize,
}

impl ShardFormat {
    pub fn new(schema: SchemaRef, props: &WriterProperties) -> Result<ShardFormat> {
        let empty = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props.clone()))
            .and_then(|w| w.into_inner())
            .context("writing an empty shard")?;
        let template = decode_footer(&empty)
            .context("reading back an empty shard")?
            .file_metadata()
            .clone();
        let group_props = props
            .clone()
            .into_builder()
            .set_key_value_metadata(None)
            .build();
        let group_options = ArrowWriterOptions::new()
            .with_properties(group_props)
            .with_skip_arrow_metadata(true)
            .with_page_store_factory(Arc::new(CompactPages));
        let read_options = ParquetMetaDataOptions::new()
            .with_schema(template.schema_descr_ptr())
            .with_encoding_stats_as_mask(false);
        Ok(ShardFormat {
            schema,
            group_options,
            read_options,
            template,
            empty_bytes: empty.len(),
        })
    }

    /// The footer of a shard made of `groups`, trailer included.
    fn footer(&self, groups: &GroupFooters) -> Result<Vec<u8>> {
        let mut row_groups = Vec::with_capacity(groups.groups.len());
        let mut num_rows = 0;
        for (ordinal, (thrift, shift)) in groups.iter().enumerate() {
            let mut decoded = ParquetMetaDataReader::decode_metadata_with_options(
                thrift,
                Some(&self.read_options),
            )?
            .into_builder()
            .take_row_groups();
            let (Some(rg), true) = (decoded.pop(), decoded.is_empty()) else {
                bail!("a row group's footer must hold exactly one row group");
            };
            num_rows += rg.num_rows();
            row_groups.push(moved(rg, shift, ordinal)?);
        }
        let t = &self.template;
        let file = FileMetaData::new(
            t.version(),
            num_rows,
            t.created_by().map(str::to_string),
            t.key_value_metadata().cloned(),
            t.schema_descr_ptr(),
            t.column_orders().cloned(),
        );
        let mut out = Vec::new();
        ParquetMetaDataWriter::new(&mut out, &ParquetMetaData::new(file, row_groups))
            .with_preserve_page_index_locations(false)
            .finish()?;
        Ok(out)
    }
}

/// The Parquet metadata at the end of `file` (a whole file's bytes).
pub(super) fn decode_footer(file: &[u8]) -> Result<ParquetMetaData> {
    let n = file.len();
    if n < TRAILER_LEN + MAGIC.len() || &file[n - MAGIC.len()..] != MAGIC {
        bail!("not a Parquet file ({n} bytes)");
    }
    let len = u32::from_le_bytes(file[n - 8..n - 4].try_into().expect("4 bytes")) as usize;
    let start = (n - TRAILER_LEN)
        .checked_sub(len)
        .context("Parquet footer longer than its file")?;
    Ok(ParquetMetaDataReader::decode_metadata(
        &file[start..n - TRAILER_LEN],
    )?)
}

/// `rg` as written `shift` bytes further into the file, as its shard's
/// `ordinal`-th row group.
fn moved(rg: RowGroupMetaData, shift: i64, ordinal: usize) -> Result<RowGroupMetaData> {
    let file_offset = rg.file_offset().map(|o| o + shift);
    let mut b = rg.into_builder();
    let columns = b
        .take_columns()
        .into_iter()
        .map(|c| {
            let data = c.data_page_offset() + shift;
            let dictionary = c.dictionary_page_offset().map(|o| o + shift);
            let index = c.index_page_offset().map(|o| o + shift);
            let statistics = c
                .statistics()
                .cloned()
                .map(|s| with_deprecated_min_max(s, c.column_descr().sort_order().is_signed()));
            let mut c = c
                .into_builder()
                .set_data_page_offset(data)
                .set_dictionary_page_offset(dictionary)
                .set_index_page_offset(index);
            if let Some(s) = statistics {
                c = c.set_statistics(s);
            }
            c.build()
        })
        .collect::<Result<Vec<_>, _>>()?;
    b = b
        .set_column_metadata(columns)
        .set_ordinal(i32::try_from(ordinal).context("too many row groups")?);
    if let Some(o) = file_offset {
        b = b.set_file_offset(o);
    }
    Ok(b.build()?)
}

/// `s` with its min and max also in the deprecated fields when `yes`: the
/// writer copies them there for columns whose sort order is signed (for
/// older readers), and decoding does not say whether they were.
fn with_deprecated_min_max(s: Statistics, yes: bool) -> Statistics {
    use Statistics as S;
    match s {
        S::Boolean(v) => S::Boolean(v.with_backwards_compatible_min_max(yes)),
        S::Int32(v) => S::Int32(v.with_backwards_compatible_min_max(yes)),
        S::Int64(v) => S::Int64(v.with_backwards_compatible_min_max(yes)),
        S::Int96(v) => S::Int96(v.with_backwards_compatible_min_max(yes)),
        S::Float(v) => S::Float(v.with_backwards_compatible_min_max(yes)),
        S::Double(v) => S::Double(v.with_backwards_compatible_min_max(yes)),
        S::ByteArray(v) => S::ByteArray(v.with_backwards_compatible_min_max(yes)),
        S::FixedLenByteArray(v) => S::FixedLenByteArray(v.with_backwards_compatible_min_max(yes)),
    }
}

/// Each row group's footer as its own writer wrote it, and how far its
/// offsets are from where the group sits in the shard. All in one buffer: a
/// few-KB allocation per group, kept for the shard's life among the writer's
/// short-lived ones, pinned allocator pages (+2 MB RSS on the main job).
#[derive(Default)]
struct GroupFooters {
    thrift: Vec<u8>,
    /// Per group: where its footer ends in `thrift`, and its shift.
    groups: Vec<(usize, i64)>,
}

impl GroupFooters {
    fn push(&mut self, thrift: &[u8], shift: i64) {
        self.thrift.extend_from_slice(thrift);
        self.groups.push((self.thrift.len(), shift));
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], i64)> {
        let starts = std::iter::once(0).chain(self.groups.iter().map(|&(end, _)| end));
        starts
            .zip(&self.groups)
            .map(|(start, &(end, shift))| (&self.thrift[start..end], shift))
    }
}

/// A shard being written under its temporary name; removed if dropped unfinished.
pub(super) struct OpenShard {
    pub split: &'static str,
    pub name: String,
    pub tmp: PathBuf,
    format: Arc<ShardFormat>,
    /// The file; held by the row group's writer while a group is open.
    file: Option<HashingFile>,
    group: Option<ArrowWriter<GroupSink>>,
    footers: GroupFooters,
    /// Bytes in the file: the magic and the written row groups.
    written: u64,
    pub rows: u64,
    pub row_groups: usize,
    finished: bool,
}

impl OpenShard {
    /// Starts a shard in `file`, which `tmp` names.
    pub fn new(
        format: Arc<ShardFormat>,
        file: File,
        split: &'static str,
        name: String,
        tmp: PathBuf,
    ) -> Result<OpenShard> {
        let mut shard = OpenShard {
            split,
            name,
            tmp,
            format,
            file: None,
            group: None,
            footers: GroupFooters::default(),
            written: 0,
            rows: 0,
            row_groups: 0,
            finished: false,
        };
        let mut file = HashingFile {
            file,
            hasher: Xxh3::new(),
            bytes: 0,
        };
        file.write_all(MAGIC).with_context(|| shard.context())?;
        shard.written = file.bytes;
        shard.file = Some(file);
        Ok(shard)
    }

    fn context(&self) -> String {
        format!("writing shard {}", self.tmp.display())
    }

    /// Bytes in the shard's file so far (the open row group is not there yet).
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Bytes of row-group footers the shard holds until it is finished.
    #[cfg(test)]
    pub fn held_footer_bytes(&self) -> usize {
        self.footers.thrift.len()
    }

    /// Encodes the batch into the open row group (pages are compressed as
    /// they fill; the group stays in memory until [`OpenShard::end_group`]).
    pub fn encode(&mut self, batch: &RecordBatch) -> Result<()> {
        let group = match &mut self.group {
            Some(group) => group,
            none => {
                let file = self.file.take().context("shard already finished")?;
                let sink = GroupSink {
                    file,
                    at: 0,
                    data_end: u64::MAX,
                    footer: Vec::new(),
                };
                let writer = ArrowWriter::try_new_with_options(
                    sink,
                    self.format.schema.clone(),
                    self.format.group_options.clone(),
                )
                .with_context(|| format!("cannot start a row group of {}", self.tmp.display()))?;
                none.insert(writer)
            }
        };
        with_growth_room(PAGE_BUFFER_ROOM, || group.write(batch))
            .with_context(|| self.context())?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Writes the open row group to the file and keeps its footer.
    pub fn end_group(&mut self) -> Result<()> {
        let context = self.context();
        let mut writer = self.group.take().context("no row group to write")?;
        with_growth_room(PAGE_BUFFER_ROOM, || writer.flush()).with_context(|| context.clone())?;
        writer.inner_mut().data_end = writer.bytes_written() as u64;
        let GroupSink { file, footer, .. } =
            with_growth_room(PAGE_BUFFER_ROOM, || writer.into_inner())
                .with_context(|| context.clone())?;
        let thrift = footer
            .len()
            .checked_sub(TRAILER_LEN)
            .map(|n| &footer[..n])
            .context("row group written without a footer")?;
        // The group's writer put its data right after its own magic.
        let shift = self.written as i64 - MAGIC.len() as i64;
        self.footers.push(thrift, shift);
        self.written = file.bytes;
        start_writeback(&file.file);
        self.file = Some(file);
        self.row_groups += 1;
        Ok(())
    }

    /// Writes the footer, syncs the file and gives it its final name.
    pub fn finish(mut self, data_dir: &Path) -> Result<ShardInfo> {
        if self.group.is_some() {
            self.end_group()?;
        }
        let context = self.context();
        let footer = self
            .format
            .footer(&self.footers)
            .with_context(|| context.clone())?;
        let mut file = self.file.take().context("shard already finished")?;
        file.write_all(&footer).with_context(|| context.clone())?;
        file.file.sync_all().with_context(|| context.clone())?;
        let path = data_dir.join(&self.name);
        fs::rename(&self.tmp, &path).with_context(|| {
            format!("cannot rename {} to {}", self.tmp.display(), path.display())
        })?;
        self.finished = true;
        Ok(ShardInfo {
            path: format!("data/{}", self.name),
            split: self.split.to_string(),
            rows: self.rows,
            bytes: file.bytes,
            xxh3: format!("{:016x}", file.hasher.digest()),
        })
    }
}

impl Drop for OpenShard {
    fn drop(&mut self) {
        // Unfinished (an error, or the sink dropped without finish): leave no partial file.
        if !self.finished {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Where a row group's writer writes: its leading magic is dropped (the
/// shard has one), its data goes on to the shard's file, and its footer,
/// from `data_end` on, is kept.
struct GroupSink {
    file: HashingFile,
    /// Bytes the writer has written so far.
    at: u64,
    /// Where the data ends: set once the group is flushed.
    data_end: u64,
    footer: Vec<u8>,
}

impl Write for GroupSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Where `buf` crosses the end of the magic and the end of the data.
        let cut = |until: u64| (until.saturating_sub(self.at)).min(buf.len() as u64) as usize;
        let (skip, data_end) = (cut(MAGIC.len() as u64), cut(self.data_end));
        let data = &buf[skip..data_end.max(skip)];
        self.file.write_all(data)?;
        self.footer.extend_from_slice(&buf[data_end.max(skip)..]);
        self.at += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Starts writing the file's dirty pages to disk without waiting (Linux):
/// the fsync that closes a shard then has little left to wait for, at the
/// end of the run when nothing else runs (it was ~16 ms for the last 30 MB
/// shard). Only a hint: durability still comes from that fsync.
fn start_writeback(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid open descriptor; no memory is passed.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// The shard file, hashing and counting its bytes as they are written so the
/// checksum needs no second read.
struct HashingFile {
    file: File,
    hasher: Xxh3,
    bytes: u64,
}

impl Write for HashingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
