//! The shard schema against schemas/columns.json, read independently of the
//! sink's own parser; every `Row` field against the column it lands in; and the
//! written dataset loaded by pyarrow and Hugging Face `datasets`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Int32Type, UInt64Type};
use pairpipe::dedup::DedupKeys;
use pairpipe::lower::Features;
use pairpipe::row::Row;
use pairpipe::sink::{CardInfo, Sink, SinkOptions, write_dataset_card, write_manifest};
use pairpipe::tokens::TokenCounts;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::parquet_to_arrow_schema;
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::Value;

fn columns_json() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/columns.json");
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["columns"].as_array().unwrap().clone()
}

/// The columns.json spelling of an Arrow type, written out here rather than
/// taken from the sink so the test does not share the code it checks.
fn type_name(t: &DataType) -> String {
    match t {
        DataType::Utf8 => "string".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::List(item) => format!("list<{}>", type_name(item.data_type())),
        other => format!("unexpected {other}"),
    }
}

fn sample_row(index: u64, split: &'static str) -> Row {
    Row {
        index,
        id: format!("seed7-{index}"),
        split,
        category: "control_flow",
        kernel_name: format!("branchy_{index}"),
        python_source: format!(
            "import warp as wp\n\n\n@wp.kernel\ndef branchy_{index}(x: wp.array(dtype=float)):\n    i = wp.tid()\n    if x[i] > 0.0:\n        x[i] = wp.sin(x[i])\n"
        ),
        cpu_forward: Some(format!(
            "void branchy_{index}_cpu_kernel_forward()\n{{\n}}\n"
        )),
        cpu_backward: Some(format!(
            "void branchy_{index}_cpu_kernel_backward()\n{{\n}}\n"
        )),
        cuda_forward: Some(format!(
            "extern \"C\" __global__ void branchy_{index}_cuda_kernel_forward()\n{{\n}}\n"
        )),
        cuda_backward: Some(format!(
            "extern \"C\" __global__ void branchy_{index}_cuda_kernel_backward()\n{{\n}}"
        )),
        cpu_module: Some(format!("// cpu module {index}\n")),
        cuda_module: Some(format!("// cuda module {index}\r\n// µ\n")),
        dedup_key: u64::MAX - index,
        keys: DedupKeys {
            exact: 3 * index + 1,
            renamed: u64::MAX - index,
            shape: 1 << 40 | index,
        },
        builtins: vec!["tid".into(), "sin".into()],
        dtypes: vec!["float32".into()],
        launch_dims: 2,
        launch_spec: Some(format!(
            r#"{{"dim": [{index}, 4], "tiled": false, "params": [{{"name": "x", "kind": "array", "dtype": "float32", "shape": [{index}, 4], "role": "inout", "range": [-1.0, 1.0]}}]}}"#
        )),
        motifs: vec!["spring_force".into(), "euler_step".into()],
        features: Features::FUNCS.union(Features::LOOPS),
        ir_from_lowering: false,
        // A mined row, so that every column has a value.
        provenance: Some(Box::new(pairpipe::row::Provenance {
            repo: Some("owner/repo".into()),
            path: "src/kernels.py".into(),
            line: 12,
            license: Some("MIT".into()),
            file_xxh3: 0xfeed,
        })),
        tokens: TokenCounts {
            python: Some(40 + index as u32),
            ir: [Some(11), Some(12), Some(13), Some(14), Some(15), Some(16)],
        },
    }
}

/// Writes a small dataset (every IR column on) with manifest and card; returns its shards' paths.
fn write_dataset(out: &Path) -> Vec<PathBuf> {
    let opts = SinkOptions {
        out_dir: out.to_path_buf(),
        max_shard_bytes: 1 << 30,
        row_group_bytes: 1 << 20,
        cpu: true,
        cuda: true,
        modules: true,
        metadata: vec![("pairpipe_version".into(), pairpipe::PAIRPIPE_VERSION.into())],
    };
    let mut sink = Sink::create(opts).unwrap();
    let splits = ["train", "train", "train", "validation", "test"];
    for i in 0..20 {
        sink.push(sample_row(i, splits[i as usize % splits.len()]))
            .unwrap();
    }
    let shards = sink.finish().unwrap();
    let rows = |s: &str| {
        shards
            .iter()
            .filter(|x| x.split == s)
            .map(|x| x.rows)
            .sum::<u64>()
    };
    write_manifest(out, &serde_json::json!({ "shards": shards })).unwrap();
    let card = CardInfo {
        name: "schema-test".into(),
        rows_per_split: ["train", "validation", "test"]
            .map(|s| (s.to_string(), rows(s)))
            .to_vec(),
        config_toml: "[run]\nname = \"schema-test\"\n".into(),
        cpu: true,
        cuda: true,
        modules: true,
        tokenizer: "o200k_base".into(),
        origin: Default::default(),
        mined: None,
    };
    write_dataset_card(out, &card).unwrap();
    shards.iter().map(|s| out.join(&s.path)).collect()
}

#[test]
fn written_schema_equals_columns_json() {
    let dir = tempfile::tempdir().unwrap();
    let spec = columns_json();
    for path in write_dataset(dir.path()) {
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata().file_metadata();
        // The schema any reader derives from the Parquet types alone, and the
        // Arrow schema embedded for Arrow readers: both must be the JSON's.
        let from_parquet = parquet_to_arrow_schema(meta.schema_descr(), None).unwrap();
        let embedded =
            parquet_to_arrow_schema(meta.schema_descr(), meta.key_value_metadata()).unwrap();
        for schema in [&from_parquet, &embedded] {
            let got: Vec<(String, String, bool)> = schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), type_name(f.data_type()), f.is_nullable()))
                .collect();
            let want: Vec<(String, String, bool)> = spec
                .iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap().to_string();
                    (s("name"), s("type"), c["nullable"].as_bool().unwrap())
                })
                .collect();
            assert_eq!(got, want, "{}", path.display());
        }
        assert!(
            spec.iter()
                .all(|c| !c["description"].as_str().unwrap().is_empty())
        );
    }
}

fn column(batch: &RecordBatch, name: &str) -> ArrayRef {
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .clone()
}

fn string_at(batch: &RecordBatch, name: &str, r: usize) -> Option<String> {
    let c = column(batch, name);
    (!c.is_null(r)).then(|| c.as_string::<i32>().value(r).to_string())
}

#[test]
fn every_row_field_maps_to_a_column() {
    let dir = tempfile::tempdir().unwrap();
    let shards = write_dataset(dir.path());
    let train = shards
        .iter()
        .find(|p| p.ends_with("train-00000.parquet"))
        .unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(train).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batch = reader.map(Result::unwrap).next().unwrap();
    let r = 1; // second train row: index 1
    // Exhaustive destructuring: adding a field to Row breaks this test until
    // the field is given a column here (and in columns.json).
    let Row {
        index,
        id,
        split,
        category,
        kernel_name,
        python_source,
        cpu_forward,
        cpu_backward,
        cuda_forward,
        cuda_backward,
        cpu_module,
        cuda_module,
        dedup_key,
        keys,
        builtins,
        dtypes,
        launch_dims,
        launch_spec,
        motifs,
        features,
        ir_from_lowering: _,
        tokens,
        provenance,
    } = sample_row(1, "train");
    let ints = |name: &str| column(&batch, name).as_primitive::<Int32Type>().value(r);
    assert_eq!(ints("python_source_tokens") as u32, tokens.python.unwrap());
    for (name, want) in [
        "cpu_forward_tokens",
        "cpu_backward_tokens",
        "cuda_forward_tokens",
        "cuda_backward_tokens",
        "cpu_module_tokens",
        "cuda_module_tokens",
    ]
    .iter()
    .zip(tokens.ir)
    {
        assert_eq!(Some(ints(*name) as u32), want, "{name}");
    }
    assert_eq!(ints("pair_tokens") as u64, tokens.pair().unwrap());
    assert_eq!(tokens.pair(), Some(41 + 11 + 12 + 13 + 14 + 15 + 16));
    assert_eq!(
        column(&batch, "launch_dims")
            .as_primitive::<Int32Type>()
            .value(r),
        launch_dims as i32
    );
    for (name, want) in [
        ("key_exact", keys.exact),
        ("key_renamed", keys.renamed),
        ("key_shape", keys.shape),
    ] {
        assert_eq!(
            column(&batch, name).as_primitive::<UInt64Type>().value(r),
            want,
            "{name}"
        );
    }
    assert_eq!(
        column(&batch, "index")
            .as_primitive::<UInt64Type>()
            .value(r),
        index
    );
    assert_eq!(
        column(&batch, "dedup_key")
            .as_primitive::<UInt64Type>()
            .value(r),
        dedup_key
    );
    let texts = [
        ("id", Some(id)),
        ("split", Some(split.to_string())),
        ("category", Some(category.to_string())),
        ("kernel_name", Some(kernel_name)),
        ("python_source", Some(python_source)),
        ("cpu_forward", cpu_forward),
        ("cpu_backward", cpu_backward),
        ("cuda_forward", cuda_forward),
        ("cuda_backward", cuda_backward),
        ("cpu_module", cpu_module),
        ("cuda_module", cuda_module),
        ("origin", Some("mined".into())),
        ("source_repo", Some("owner/repo".into())),
        ("source_path", Some("src/kernels.py".into())),
        ("source_license", Some("MIT".into())),
        ("launch_spec", launch_spec),
    ];
    let p = provenance.expect("sample_row is a mined row");
    assert_eq!(
        column(&batch, "source_line")
            .as_primitive::<Int32Type>()
            .value(r) as u32,
        p.line
    );
    assert_eq!(
        column(&batch, "source_file_xxh3")
            .as_primitive::<arrow::datatypes::UInt64Type>()
            .value(r),
        p.file_xxh3
    );
    for (name, want) in texts {
        assert!(want.is_some(), "sample_row fills {name}");
        assert_eq!(string_at(&batch, name, r), want, "{name}");
    }
    let motifs: Vec<String> = motifs.iter().map(|m| m.to_string()).collect();
    let features: Vec<String> = features.names().map(String::from).collect();
    assert_eq!(features, ["funcs", "loops"]);
    for (name, want) in [
        ("builtins", builtins),
        ("dtypes", dtypes),
        ("motifs", motifs),
        ("features", features),
    ] {
        let list = column(&batch, name).as_list::<i32>().value(r);
        let got: Vec<String> = list
            .as_string::<i32>()
            .iter()
            .map(|s| s.unwrap().to_string())
            .collect();
        assert_eq!(got, want, "{name}");
    }
    // The derived columns too: nothing in the schema is left unfilled.
    for field in batch.schema().fields() {
        assert_eq!(
            column(&batch, field.name()).null_count(),
            0,
            "{} has nulls",
            field.name()
        );
    }
}

/// pyarrow, pandas, polars and `datasets` (offline) read what the sink wrote:
/// tests/python/check_sink_load.py run on this test's output.
#[test]
fn python_readers_load_the_dataset() {
    let python = std::env::var_os("PAIRPIPE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/pairpipe-venv/bin/python")
        });
    if !python.exists() {
        eprintln!(
            "skipped: no Python venv at {} (set PAIRPIPE_PYTHON)",
            python.display()
        );
        return;
    }
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dataset(dir.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_sink_load.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(dir.path())
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_CACHE", cache.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\nstdout:\n{}\nstderr:\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
