//! The shard columns: parsed once from `schemas/columns.json`, turned into the
//! Arrow schema, and each column bound to the `Row` field (or derived measure)
//! that fills it, so the writer and the JSON can never disagree silently.

use std::sync::{Arc, LazyLock};

use anyhow::{Context, Result, anyhow, bail};
use arrow::array::builder::NullBufferBuilder;
use arrow::array::{
    ArrayRef, Int32Array, Int64Array, ListBuilder, StringBuilder, StringViewArray, UInt64Array,
    make_view, new_null_array,
};
use arrow::buffer::{Buffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use serde::Deserialize;

use crate::config::DedupLevel;
use crate::row::Row;

/// The machine-readable column list, compiled in so the binary needs no data files.
pub const COLUMNS_JSON: &str = include_str!("../../schemas/columns.json");

/// One entry of `schemas/columns.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub name: String,
    /// One of: string, uint64, int32, int64, list<string>.
    #[serde(rename = "type")]
    pub type_name: String,
    pub nullable: bool,
    pub description: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ColumnsFile {
    #[serde(rename = "_comment")]
    _comment: Option<String>,
    columns: Vec<ColumnSpec>,
}

/// The IR text columns; `Option<String>` in `Row`, all-null when their target is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ir {
    CpuForward,
    CpuBackward,
    CudaForward,
    CudaBackward,
    CpuModule,
    CudaModule,
}

impl Ir {
    pub const ALL: [Ir; 6] = [
        Ir::CpuForward,
        Ir::CpuBackward,
        Ir::CudaForward,
        Ir::CudaBackward,
        Ir::CpuModule,
        Ir::CudaModule,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Ir::CpuForward => "cpu_forward",
            Ir::CpuBackward => "cpu_backward",
            Ir::CudaForward => "cuda_forward",
            Ir::CudaBackward => "cuda_backward",
            Ir::CpuModule => "cpu_module",
            Ir::CudaModule => "cuda_module",
        }
    }

    pub(crate) fn get(self, row: &Row) -> Option<&str> {
        match self {
            Ir::CpuForward => row.cpu_forward.as_deref(),
            Ir::CpuBackward => row.cpu_backward.as_deref(),
            Ir::CudaForward => row.cuda_forward.as_deref(),
            Ir::CudaBackward => row.cuda_backward.as_deref(),
            Ir::CpuModule => row.cpu_module.as_deref(),
            Ir::CudaModule => row.cuda_module.as_deref(),
        }
    }

    fn take(self, row: &mut Row) -> Option<String> {
        match self {
            Ir::CpuForward => row.cpu_forward.take(),
            Ir::CpuBackward => row.cpu_backward.take(),
            Ir::CudaForward => row.cuda_forward.take(),
            Ir::CudaBackward => row.cuda_backward.take(),
            Ir::CpuModule => row.cpu_module.take(),
            Ir::CudaModule => row.cuda_module.take(),
        }
    }

    /// Whether the run fills this column, from the sink's target switches.
    pub(crate) fn enabled(self, cpu: bool, cuda: bool, modules: bool) -> bool {
        match self {
            Ir::CpuForward | Ir::CpuBackward => cpu,
            Ir::CudaForward | Ir::CudaBackward => cuda,
            Ir::CpuModule => cpu && modules,
            Ir::CudaModule => cuda && modules,
        }
    }
}

/// A text that size columns measure: python_source or one IR column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Text {
    Python,
    Ir(Ir),
}

impl Text {
    fn get(self, row: &Row) -> Option<&str> {
        match self {
            Text::Python => Some(&row.python_source),
            Text::Ir(ir) => ir.get(row),
        }
    }

    /// Whether this text is plain (ASCII, `\n` its only break), given
    /// whether the row's Python source is: then its chars are its bytes and
    /// its lines its `\n`s. An IR text the lowering made from a plain source
    /// is plain too: it is warp's ASCII templates plus text taken from the
    /// source (names, numbers, the comments that echo its lines), so the sink
    /// need not scan ~30 KB a row again to know. Rows from elsewhere
    /// (`Row::ir_from_lowering` false) have their IR counted in full.
    fn is_plain_given(self, row: &Row, source_is_plain: bool) -> bool {
        let plain = source_is_plain && (self == Text::Python || row.ir_from_lowering);
        debug_assert!(
            !plain || self.get(row).is_none_or(is_plain),
            "a plain source and an IR text of it are plain"
        );
        plain
    }

    fn take(self, row: &mut Row) -> Option<String> {
        match self {
            Text::Python => Some(std::mem::take(&mut row.python_source)),
            Text::Ir(ir) => ir.take(row),
        }
    }
}

/// Where a column's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Id,
    Index,
    Split,
    Category,
    KernelName,
    Text(Text),
    DedupKey,
    Key(DedupLevel),
    LaunchDims,
    Builtins,
    Dtypes,
    LaunchSpec,
    Motifs,
    Features,
    Chars(Text),
    Lines(Text),
    TextBytes,
    Tokens(Text),
    PairTokens,
    Origin,
    SourceRepo,
    SourcePath,
    SourceLine,
    SourceLicense,
    SourceFileHash,
}

impl Source {
    /// Binds a column name to its source; `None` for a name the writer cannot fill.
    fn for_name(name: &str) -> Option<Source> {
        let text = |prefix: &str| match prefix {
            "python" => Some(Text::Python),
            _ => Ir::ALL
                .into_iter()
                .find(|ir| ir.name() == prefix)
                .map(Text::Ir),
        };
        Some(match name {
            "id" => Source::Id,
            "index" => Source::Index,
            "split" => Source::Split,
            "category" => Source::Category,
            "kernel_name" => Source::KernelName,
            "python_source" => Source::Text(Text::Python),
            "dedup_key" => Source::DedupKey,
            "key_exact" => Source::Key(DedupLevel::Exact),
            "key_renamed" => Source::Key(DedupLevel::Renamed),
            "key_shape" => Source::Key(DedupLevel::Shape),
            "launch_dims" => Source::LaunchDims,
            "builtins" => Source::Builtins,
            "dtypes" => Source::Dtypes,
            "launch_spec" => Source::LaunchSpec,
            "motifs" => Source::Motifs,
            "features" => Source::Features,
            "text_bytes" => Source::TextBytes,
            "python_source_tokens" => Source::Tokens(Text::Python),
            "pair_tokens" => Source::PairTokens,
            "origin" => Source::Origin,
            "source_repo" => Source::SourceRepo,
            "source_path" => Source::SourcePath,
            "source_line" => Source::SourceLine,
            "source_license" => Source::SourceLicense,
            "source_file_xxh3" => Source::SourceFileHash,
            _ => {
                if let Some(prefix) = name.strip_suffix("_chars") {
                    Source::Chars(text(prefix)?)
                } else if let Some(prefix) = name.strip_suffix("_lines") {
                    Source::Lines(text(prefix)?)
                } else if let Some(prefix) = name.strip_suffix("_tokens") {
                    let ir = Ir::ALL.into_iter().find(|ir| ir.name() == prefix)?;
                    Source::Tokens(Text::Ir(ir))
                } else {
                    Source::Text(Text::Ir(Ir::ALL.into_iter().find(|ir| ir.name() == name)?))
                }
            }
        })
    }

    /// The Arrow type this source produces, and whether it can be null.
    fn produces(self) -> (DataType, bool) {
        let maybe_null = |t: Text| matches!(t, Text::Ir(_));
        match self {
            Source::Id | Source::Split | Source::Category | Source::KernelName => {
                (DataType::Utf8, false)
            }
            Source::Text(t) => (DataType::Utf8, maybe_null(t)),
            Source::Index | Source::DedupKey | Source::Key(_) => (DataType::UInt64, false),
            Source::LaunchDims => (DataType::Int32, false),
            Source::Builtins | Source::Dtypes | Source::Motifs | Source::Features => {
                (list_of_strings(), false)
            }
            // Null for mined rows (and synthesized ones without a spec).
            Source::LaunchSpec => (DataType::Utf8, true),
            Source::Chars(t) | Source::Lines(t) => (DataType::Int32, maybe_null(t)),
            Source::TextBytes => (DataType::Int64, false),
            // Null without a tokenizer.
            Source::Tokens(_) | Source::PairTokens => (DataType::Int32, true),
            Source::Origin => (DataType::Utf8, false),
            // Null for synthesized rows.
            Source::SourceRepo | Source::SourcePath | Source::SourceLicense => {
                (DataType::Utf8, true)
            }
            Source::SourceLine => (DataType::Int32, true),
            Source::SourceFileHash => (DataType::UInt64, true),
        }
    }

    /// Columns whose values are (nearly) unique per row gain nothing from a
    /// Parquet dictionary and only cost time building one.
    pub(crate) fn wants_dictionary(self) -> bool {
        !matches!(
            self,
            Source::Id
                | Source::Index
                | Source::Text(_)
                | Source::DedupKey
                | Source::Key(_)
                | Source::TextBytes
                | Source::SourceFileHash
                | Source::SourceLine
                | Source::LaunchSpec
        )
    }
}

fn list_of_strings() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

/// Arrow type for a `type` string of columns.json.
pub fn arrow_type(type_name: &str) -> Option<DataType> {
    Some(match type_name {
        "string" => DataType::Utf8,
        "uint64" => DataType::UInt64,
        "int32" => DataType::Int32,
        "int64" => DataType::Int64,
        "list<string>" => list_of_strings(),
        _ => return None,
    })
}

/// The parsed and checked column set, shared by every sink in the process.
pub(crate) struct Columns {
    pub specs: Vec<ColumnSpec>,
    pub schema: SchemaRef,
    /// `schema` with the text columns as string views: what
    /// [`Columns::take_batch`] builds.
    view_schema: SchemaRef,
    sources: Vec<Source>,
}

static COLUMNS: LazyLock<Result<Columns, String>> =
    LazyLock::new(|| Columns::parse(COLUMNS_JSON).map_err(|e| format!("{e:#}")));

/// The columns of schemas/columns.json, parsed once; an error only if the
/// compiled-in file is inconsistent with `Row` (a build defect, reported, not panicked).
pub(crate) fn columns() -> Result<&'static Columns> {
    COLUMNS
        .as_ref()
        .map_err(|e| anyhow!("schemas/columns.json (compiled in) is invalid: {e}"))
}

/// The column list of schemas/columns.json, in shard order.
pub fn column_specs() -> Result<&'static [ColumnSpec]> {
    Ok(&columns()?.specs)
}

/// The Arrow schema every shard is written with.
pub fn arrow_schema() -> Result<SchemaRef> {
    Ok(columns()?.schema.clone())
}

impl Columns {
    fn parse(json: &str) -> Result<Columns> {
        let file: ColumnsFile = serde_json::from_str(json).context("parsing JSON")?;
        let mut fields = Vec::with_capacity(file.columns.len());
        let mut sources = Vec::with_capacity(file.columns.len());
        for spec in &file.columns {
            let data_type = arrow_type(&spec.type_name).ok_or_else(|| {
                anyhow!("column {}: unknown type {:?}", spec.name, spec.type_name)
            })?;
            let source = Source::for_name(&spec.name)
                .ok_or_else(|| anyhow!("column {}: no Row field fills it", spec.name))?;
            let (want_type, may_be_null) = source.produces();
            if want_type != data_type {
                bail!(
                    "column {}: declared {}, but the writer fills it with {want_type}",
                    spec.name,
                    spec.type_name
                );
            }
            if may_be_null && !spec.nullable {
                bail!(
                    "column {}: can be null but is declared non-nullable",
                    spec.name
                );
            }
            if sources.contains(&source) {
                bail!("column {}: declared twice", spec.name);
            }
            fields.push(Field::new(&spec.name, data_type, spec.nullable));
            sources.push(source);
        }
        let view_fields: Vec<Field> = fields
            .iter()
            .zip(&sources)
            .map(|(f, s)| match s {
                Source::Text(_) => f.clone().with_data_type(DataType::Utf8View),
                _ => f.clone(),
            })
            .collect();
        Ok(Columns {
            specs: file.columns,
            schema: Arc::new(Schema::new(fields)),
            view_schema: Arc::new(Schema::new(view_fields)),
            sources,
        })
    }

    /// Per column, whether Parquet should dictionary-encode it.
    pub fn dictionary_flags(&self) -> impl Iterator<Item = (&str, bool)> {
        self.specs
            .iter()
            .zip(&self.sources)
            .map(|(spec, s)| (spec.name.as_str(), s.wants_dictionary()))
    }

    /// The source and IR text columns, each with whether the run fills it
    /// (python_source always, an IR column if `enabled`).
    pub fn text_columns(&self, enabled: impl Fn(Ir) -> bool) -> impl Iterator<Item = (&str, bool)> {
        self.specs
            .iter()
            .zip(&self.sources)
            .filter_map(move |(spec, s)| match s {
                Source::Text(Text::Python) => Some((spec.name.as_str(), true)),
                Source::Text(Text::Ir(ir)) => Some((spec.name.as_str(), enabled(*ir))),
                _ => None,
            })
    }

    /// Builds one record batch from buffered rows. IR columns whose target is
    /// off (per `enabled`) are written all-null, with their size columns.
    /// The tests' reference for what [`Columns::take_batch`] must write.
    #[cfg(test)]
    pub fn batch(&self, rows: &[Row], enabled: impl Fn(Ir) -> bool) -> Result<RecordBatch> {
        let arrays = self.arrays(rows, &self.schema, &enabled, |source| match source {
            Source::Text(t) => Some(strings(rows, |r| t.get(r))),
            _ => None,
        })?;
        let arrays = arrays
            .into_iter()
            .map(|a| a.expect("every column built"))
            .collect();
        RecordBatch::try_new(self.schema.clone(), arrays).context("building a record batch")
    }

    /// Like [`Columns::batch`], but the text columns take their strings out of
    /// `rows` instead of copying them: each becomes a string view over the
    /// row's own buffer. Parquet writes the same bytes for a view column as for
    /// a plain string column of the same values (the view type never reaches
    /// the file: the shard's footer carries the schema's `Utf8`), and the text,
    /// nearly all of a row, is not copied once more on its way to the encoder.
    pub fn take_batch(
        &self,
        rows: &mut [Row],
        enabled: impl Fn(Ir) -> bool,
    ) -> Result<RecordBatch> {
        let mut arrays = self.arrays(rows, &self.view_schema, &enabled, |_| None)?;
        for (slot, &source) in arrays.iter_mut().zip(&self.sources) {
            if let (Source::Text(t), None) = (source, &slot) {
                *slot = Some(string_views(rows, |r| t.take(r)));
            }
        }
        let arrays = arrays
            .into_iter()
            .map(|a| a.expect("every column built"))
            .collect();
        RecordBatch::try_new(self.view_schema.clone(), arrays).context("building a record batch")
    }

    /// Every column's array, of its type in `schema` (the columns that are
    /// off, all-null), but those `text` leaves to the caller (`None`).
    fn arrays(
        &self,
        rows: &[Row],
        schema: &Schema,
        enabled: &impl Fn(Ir) -> bool,
        text: impl Fn(Source) -> Option<ArrayRef>,
    ) -> Result<Vec<Option<ArrayRef>>> {
        let n = rows.len();
        // The columns that are off (up to 4 texts and their 12 size columns)
        // share one all-null array per type.
        let mut nulls: Vec<ArrayRef> = Vec::new();
        let mut null_array = |data_type: &DataType| {
            if let Some(a) = nulls.iter().find(|a| a.data_type() == data_type) {
                return a.clone();
            }
            let a = new_null_array(data_type, n);
            nulls.push(a.clone());
            a
        };
        // Scanned once a row, not once for each of its size columns.
        let plain_sources: Vec<bool> = rows.iter().map(|r| is_plain(&r.python_source)).collect();
        let plain = |t: Text| {
            rows.iter()
                .zip(&plain_sources)
                .map(move |(r, &source_is_plain)| (r, t.is_plain_given(r, source_is_plain)))
        };
        Ok(self
            .sources
            .iter()
            .zip(schema.fields())
            .map(|(&source, field)| match source {
                Source::Text(Text::Ir(ir))
                | Source::Chars(Text::Ir(ir))
                | Source::Lines(Text::Ir(ir))
                | Source::Tokens(Text::Ir(ir))
                    if !enabled(ir) =>
                {
                    Some(null_array(field.data_type()))
                }
                Source::Text(_) => text(source),
                source => Some(match source {
                    Source::Id => strings(rows, |r| Some(&r.id)),
                    Source::Split => strings(rows, |r| Some(r.split)),
                    Source::Category => strings(rows, |r| Some(r.category)),
                    Source::KernelName => strings(rows, |r| Some(&r.kernel_name)),
                    Source::Text(_) => unreachable!("handled above"),
                    Source::Index => {
                        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.index)))
                    }
                    Source::DedupKey => Arc::new(UInt64Array::from_iter_values(
                        rows.iter().map(|r| r.dedup_key),
                    )),
                    Source::Key(level) => Arc::new(UInt64Array::from_iter_values(
                        rows.iter().map(|r| r.keys.at(level)),
                    )),
                    Source::LaunchDims => Arc::new(Int32Array::from_iter_values(
                        rows.iter().map(|r| r.launch_dims as i32),
                    )),
                    Source::Builtins => string_lists(rows, field, |r| r.builtins.iter()),
                    Source::Dtypes => string_lists(rows, field, |r| r.dtypes.iter()),
                    Source::Motifs => string_lists(rows, field, |r| r.motifs.iter()),
                    Source::Features => string_lists(rows, field, |r| r.features.names()),
                    Source::LaunchSpec => strings(rows, |r| r.launch_spec.as_deref()),
                    Source::Chars(t) => sizes(plain(t).map(|(r, plain)| {
                        t.get(r).map(|s| if plain { s.len() } else { chars(s) })
                    })),
                    Source::Lines(t) => sizes(plain(t).map(|(r, plain)| {
                        t.get(r)
                            .map(|s| if plain { newline_lines(s) } else { lines(s) })
                    })),
                    Source::TextBytes => Arc::new(Int64Array::from_iter_values(
                        rows.iter()
                            .map(|r| i64::try_from(r.text_bytes()).unwrap_or(i64::MAX)),
                    )),
                    Source::Tokens(t) => sizes(rows.iter().map(|r| {
                        let n = match t {
                            Text::Python => r.tokens.python,
                            Text::Ir(ir) => r.tokens.ir[ir as usize],
                        };
                        n.map(|n| n as usize)
                    })),
                    Source::PairTokens => {
                        sizes(rows.iter().map(|r| r.tokens.pair().map(|n| n as usize)))
                    }
                    Source::Origin => strings(rows, |r| {
                        Some(match r.provenance {
                            Some(_) => "mined",
                            None => "synthetic",
                        })
                    }),
                    Source::SourceRepo => strings(rows, |r| {
                        r.provenance.as_ref().and_then(|p| p.repo.as_deref())
                    }),
                    Source::SourcePath => {
                        strings(rows, |r| r.provenance.as_ref().map(|p| p.path.as_str()))
                    }
                    Source::SourceLicense => strings(rows, |r| {
                        r.provenance.as_ref().and_then(|p| p.license.as_deref())
                    }),
                    Source::SourceLine => Arc::new(Int32Array::from_iter(rows.iter().map(|r| {
                        r.provenance
                            .as_ref()
                            .map(|p| p.line.min(i32::MAX as u32) as i32)
                    }))),
                    Source::SourceFileHash => Arc::new(UInt64Array::from_iter(
                        rows.iter()
                            .map(|r| r.provenance.as_ref().map(|p| p.file_xxh3)),
                    )),
                }),
            })
            .collect())
    }
}

/// A string view column over strings taken from the rows: each string's
/// buffer becomes one of the array's data buffers, with no copy.
fn string_views(rows: &mut [Row], mut take: impl FnMut(&mut Row) -> Option<String>) -> ArrayRef {
    let mut views = Vec::with_capacity(rows.len());
    let mut buffers = Vec::with_capacity(rows.len());
    let mut nulls = NullBufferBuilder::new(rows.len());
    for r in rows.iter_mut() {
        match take(r) {
            Some(s) if s.len() > 12 => {
                let bytes = s.into_bytes();
                let len = u32::try_from(bytes.len()).expect("a text under 4 GiB");
                let index = u32::try_from(buffers.len()).expect("under 4G buffers");
                views.push(make_view(&bytes, index, 0));
                debug_assert_eq!(len as usize, bytes.len());
                buffers.push(Buffer::from_vec(bytes));
                nulls.append_non_null();
            }
            // Up to 12 bytes live in the view itself.
            Some(s) => {
                views.push(make_view(s.as_bytes(), 0, 0));
                nulls.append_non_null();
            }
            None => {
                views.push(0);
                nulls.append_null();
            }
        }
    }
    // SAFETY: each view was made by `make_view` from a whole `String` (valid
    // UTF-8) that is the buffer it names, at offset 0, or is inline.
    Arc::new(unsafe {
        StringViewArray::new_unchecked(ScalarBuffer::from(views), buffers.into(), nulls.finish())
    })
}

/// A string column, its buffers allocated once at the exact size.
fn strings<'a>(rows: &'a [Row], get: impl Fn(&'a Row) -> Option<&'a str>) -> ArrayRef {
    let bytes = rows.iter().map(|r| get(r).map_or(0, str::len)).sum();
    let mut b = StringBuilder::with_capacity(rows.len(), bytes);
    for r in rows {
        b.append_option(get(r));
    }
    Arc::new(b.finish())
}

fn string_lists<'a, I, S>(rows: &'a [Row], field: &Field, get: impl Fn(&'a Row) -> I) -> ArrayRef
where
    I: Iterator<Item = S> + Clone,
    S: AsRef<str>,
{
    let DataType::List(item) = field.data_type() else {
        unreachable!("checked against Source::produces when columns.json was parsed")
    };
    let (items, bytes) = rows.iter().fold((0, 0), |(n, b), r| {
        get(r).fold((n, b), |(n, b), s| (n + 1, b + s.as_ref().len()))
    });
    let mut b = ListBuilder::with_capacity(StringBuilder::with_capacity(items, bytes), rows.len())
        .with_field(item.clone());
    for r in rows {
        for s in get(r) {
            b.values().append_value(s);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

fn sizes(values: impl Iterator<Item = Option<usize>>) -> ArrayRef {
    // Rows are capped far below i32::MAX bytes when pushed, so this never saturates.
    Arc::new(Int32Array::from_iter(
        values.map(|v| v.map(|v| i32::try_from(v).unwrap_or(i32::MAX))),
    ))
}

/// Whether `s` is ASCII with `\n` as its only line break, so that [`chars`]
/// is its length and [`lines`] is [`newline_lines`].
fn is_plain(s: &str) -> bool {
    s.is_ascii() && !has_rare_break(s.as_bytes())
}

/// Whether `b` holds a line break other than `\n`, or the lead byte of one.
fn has_rare_break(b: &[u8]) -> bool {
    memchr::memchr3(b'\r', 0x0b, 0x0c, b).is_some()
        || memchr::memchr3(0x1c, 0x1d, 0x1e, b).is_some()
        || memchr::memchr2(0xc2, 0xe2, b).is_some()
}

/// [`lines`] of a text whose only line break is `\n`.
fn newline_lines(s: &str) -> usize {
    let b = s.as_bytes();
    bytecount::count(b, b'\n') + usize::from(b.last().is_some_and(|&c| c != b'\n'))
}

/// Unicode scalar values, what Python's `len(str)` counts.
pub fn chars(s: &str) -> usize {
    // Generated code is ASCII: the SIMD check is far cheaper than decoding.
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Lines as Python's `len(s.splitlines())` counts them: a final line break does
/// not open an empty line ("a\n" and "a" are both 1 line, "" is 0), `\r\n` is one
/// break, and the other breaks Python recognises (`\r`, `\v`, `\f`, `\x1c`-`\x1e`,
/// U+0085, U+2028, U+2029) count too, so the column agrees with what a Python
/// user computes from the text.
pub fn lines(s: &str) -> usize {
    let b = s.as_bytes();
    // Fast path (vectorized passes) when `\n` is the only break present.
    if !has_rare_break(b) {
        return newline_lines(s);
    }
    let mut breaks = 0;
    let mut last_break_end = 0;
    let mut i = 0;
    while i < b.len() {
        let len = match b[i] {
            b'\n' | 0x0b | 0x0c | 0x1c..=0x1e => 1,
            b'\r' => 1 + usize::from(b.get(i + 1) == Some(&b'\n')),
            // U+0085 is C2 85; U+2028 / U+2029 are E2 80 A8 / E2 80 A9.
            0xc2 if b.get(i + 1) == Some(&0x85) => 2,
            0xe2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9)) => 3,
            _ => 0,
        };
        if len > 0 {
            breaks += 1;
            i += len;
            last_break_end = i;
        } else {
            i += 1;
        }
    }
    breaks + usize::from(last_break_end < b.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};

    fn row(index: u64, python: &str, cuda: Option<&str>) -> Row {
        Row {
            index,
            id: format!("r{index}"),
            split: "train",
            category: "math",
            kernel_name: "k".into(),
            python_source: python.into(),
            cpu_forward: None,
            cpu_backward: None,
            cuda_forward: cuda.map(str::to_string),
            cuda_backward: cuda.map(|c| format!("{c} // backward")),
            cpu_module: None,
            cuda_module: None,
            dedup_key: index,
            keys: Default::default(),
            builtins: vec![],
            dtypes: vec![],
            launch_dims: 1,
            launch_spec: None,
            motifs: vec![],
            features: Default::default(),
            ir_from_lowering: true,
            provenance: None,
            tokens: Default::default(),
        }
    }

    #[test]
    fn size_columns_count_what_python_counts_whatever_the_source() {
        // IR echoes its source's lines in comments: a source with non-ASCII
        // text or breaks other than `\n` puts them in the IR too, and the
        // sizes of its IR must then be counted in full.
        let sources = [
            "def k():\n    a[0] = 1.0\n",
            "def k():\n    a[0] = 1.0  # é\n",
            "def k():\r\n    a[0] = 1.0\r\n",
            "def k():\n    a[0] = 1.0  # \x0c\u{2028}\n",
        ];
        let mut rows: Vec<Row> = sources
            .iter()
            .zip(0..)
            .map(|(src, i)| {
                // The body line with any `\r` of its break, as warp echoes it.
                let line = src.split_inclusive('\n').nth(1).unwrap_or_default();
                let comment = line.strip_suffix('\n').unwrap_or(line);
                let ir = format!("void k() {{\n    //{comment}\n}}\n");
                row(i, src, Some(&ir))
            })
            .collect();
        // Text that did not come from lowering its plain source.
        rows.push(Row {
            ir_from_lowering: false,
            provenance: None,
            ..row(4, sources[0], Some("void k() {\n    // é\u{2028}\n}\n"))
        });
        let columns = columns().unwrap();
        let batch = columns
            .batch(&rows, |ir: Ir| ir.enabled(false, true, false))
            .unwrap();
        let sizes = |name: &str| {
            let a = batch.column_by_name(name).unwrap();
            let a = a.as_primitive::<arrow::datatypes::Int32Type>();
            (0..a.len())
                .map(|i| a.value(i) as usize)
                .collect::<Vec<_>>()
        };
        let expect = |f: fn(&str) -> usize, get: fn(&Row) -> &str| {
            rows.iter().map(|r| f(get(r))).collect::<Vec<_>>()
        };
        fn fwd(r: &Row) -> &str {
            r.cuda_forward.as_deref().unwrap()
        }
        fn bwd(r: &Row) -> &str {
            r.cuda_backward.as_deref().unwrap()
        }
        assert_eq!(sizes("cuda_forward_chars"), expect(chars, fwd));
        assert_eq!(sizes("cuda_forward_lines"), expect(lines, fwd));
        assert_eq!(sizes("cuda_backward_chars"), expect(chars, bwd));
        assert_eq!(sizes("cuda_backward_lines"), expect(lines, bwd));
        // The cases differ where they should: bytes are not chars with é,
        // and `\r\n`, U+000C and U+2028 are breaks.
        assert_ne!(sizes("cuda_forward_chars")[1], fwd(&rows[1]).len());
        assert_ne!(sizes("cuda_forward_chars")[4], fwd(&rows[4]).len());
        assert_eq!(sizes("cuda_forward_lines"), [3, 3, 3, 5, 4]);
    }

    #[test]
    fn take_batch_moves_the_text_into_views_with_the_same_values() {
        let columns = columns().unwrap();
        // Short texts (held in the view itself), long ones (a buffer of their
        // own), empty and null ones, and an IR column whose target is off.
        let rows = vec![
            row(0, "x = 1", Some("short")),
            row(1, "def k():\n    a[0] = 1.0  # é\n", None),
            row(2, "", Some("void k_cuda_kernel_forward() {}\n")),
        ];
        let cuda_only = |ir: Ir| ir.enabled(false, true, false);
        let plain = columns.batch(&rows, cuda_only).unwrap();
        let mut taken = rows.clone();
        let views = columns.take_batch(&mut taken, cuda_only).unwrap();
        assert_eq!(views.num_columns(), plain.num_columns());
        for (i, field) in plain.schema().fields().iter().enumerate() {
            let (p, v) = (plain.column(i), views.column(i));
            if *field.data_type() == DataType::Utf8 && v.data_type() == &DataType::Utf8View {
                let (p, v) = (p.as_string::<i32>(), v.as_string_view());
                assert_eq!(p.len(), v.len());
                for r in 0..p.len() {
                    assert_eq!(p.is_null(r), v.is_null(r), "{} row {r}", field.name());
                    if !p.is_null(r) {
                        assert_eq!(p.value(r), v.value(r), "{} row {r}", field.name());
                    }
                }
            } else {
                assert_eq!(p, v, "{}", field.name());
            }
        }
        let text = |name: &str| {
            views
                .schema()
                .field_with_name(name)
                .unwrap()
                .data_type()
                .clone()
        };
        assert_eq!(text("python_source"), DataType::Utf8View);
        assert_eq!(text("id"), DataType::Utf8);
        // The texts moved: the rows no longer hold them.
        assert!(
            taken
                .iter()
                .all(|r| r.python_source.is_empty() && r.cuda_forward.is_none())
        );
        assert_eq!(taken[0].id, rows[0].id);
    }

    #[test]
    fn lines_match_python_splitlines() {
        // Expected values are len(s.splitlines()) in CPython.
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("a", 1),
            ("a\n", 1),
            ("a\nb", 2),
            ("a\nb\n", 2),
            ("\n", 1),
            ("\n\n", 2),
            ("a\r\nb\r\n", 2),
            ("a\rb", 2),
            ("a\r\rb", 3),
            ("a\x0bb\x0cc", 3),
            ("a\x1cb\x1dc\x1e", 3),
            ("a\u{85}b", 2),
            ("a\u{2028}b\u{2029}", 2),
            ("é\u{2027}ü", 1),
            ("x = 1\n\n\ny = 2\n", 4),
        ];
        for &(s, want) in cases {
            assert_eq!(lines(s), want, "lines({s:?})");
        }
    }

    #[test]
    fn lines_of_long_texts_see_every_break_wherever_it_sits() {
        // Python's splitlines, char by char, as the reference.
        fn splitlines(s: &str) -> usize {
            let (mut n, mut open, mut it) = (0, false, s.chars().peekable());
            while let Some(c) = it.next() {
                match c {
                    '\r' => {
                        if it.peek() == Some(&'\n') {
                            it.next();
                        }
                        (n, open) = (n + 1, false);
                    }
                    '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
                    | '\u{2029}' => (n, open) = (n + 1, false),
                    _ => open = true,
                }
            }
            n + usize::from(open)
        }
        let base: String = (0..40)
            .map(|i| format!("\tvar_{i} = wp::add(a, b);\n"))
            .collect();
        assert_eq!(lines(&base), splitlines(&base));
        let breaks = [
            "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u{85}", "\u{2028}",
        ];
        let others = ["\x00", "\x1f", "\x7f", "é", "\u{2027}"];
        for at in [0, 1, 63, 64, 65, 127, 500, base.len() - 1, base.len()] {
            for extra in breaks.iter().chain(&others) {
                let mut s = base.clone();
                s.insert_str(at, extra);
                assert_eq!(lines(&s), splitlines(&s), "{extra:?} at {at}");
                let cut = s.strip_suffix('\n').unwrap_or(&s);
                assert_eq!(
                    lines(cut),
                    splitlines(cut),
                    "{extra:?} at {at}, no final newline"
                );
            }
        }
    }

    #[test]
    fn chars_count_scalars_not_bytes() {
        assert_eq!(chars(""), 0);
        assert_eq!(chars("abc"), 3);
        assert_eq!(chars("é∂𝔸"), 3);
    }

    #[test]
    fn compiled_in_columns_parse_and_cover_every_source() {
        let cols = columns().unwrap();
        assert_eq!(cols.specs.len(), cols.schema.fields().len());
        // Each IR column comes with its two size columns.
        for ir in Ir::ALL {
            for suffix in ["", "_chars", "_lines"] {
                let name = format!("{}{suffix}", ir.name());
                assert!(
                    cols.schema.field_with_name(&name).unwrap().is_nullable(),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn inconsistent_json_is_rejected_with_the_column_named() {
        let bad = |cols: &str| {
            let json = format!(r#"{{"columns": [{cols}]}}"#);
            format!(
                "{:#}",
                Columns::parse(&json).err().expect("must be rejected")
            )
        };
        let col = |name: &str, ty: &str, nullable: bool| {
            format!(r#"{{"name":"{name}","type":"{ty}","nullable":{nullable},"description":""}}"#)
        };
        assert!(bad(&col("colour", "string", false)).contains("colour: no Row field"));
        assert!(bad(&col("id", "int32", false)).contains("id: declared int32"));
        assert!(bad(&col("id", "text", false)).contains("unknown type"));
        assert!(bad(&col("cuda_forward", "string", false)).contains("non-nullable"));
        assert!(
            bad(&col("python_chars", "int32", false)
                .repeat(2)
                .replace("}{", "},{"))
            .contains("twice")
        );
    }
}
