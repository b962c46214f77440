//! `pairpipe report` on small shard sets written here with arrow/parquet,
//! laid out as CONTRACT.md says: numbers checked against hand-computed values.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, Int32Array, Int64Array, ListBuilder, StringArray, StringBuilder, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use serde_json::{Value, json};

/// One row as the report sees it: labels and the sizes of its text.
struct Spec {
    split: &'static str,
    category: &'static str,
    python_chars: usize,
    /// Chars of cuda_forward (backward gets twice that); None when CUDA is off.
    cuda_chars: Option<usize>,
}

fn spec(
    split: &'static str,
    category: &'static str,
    python_chars: usize,
    cuda_chars: Option<usize>,
) -> Spec {
    Spec {
        split,
        category,
        python_chars,
        cuda_chars,
    }
}

/// Text of `chars` characters on lines of 10 (9 chars + '\n').
fn text(chars: usize) -> String {
    (0..chars)
        .map(|i| if i % 10 == 9 { '\n' } else { 'x' })
        .collect()
}

fn lines(s: &str) -> i32 {
    s.lines().count() as i32
}

/// Writes `rows` as one Parquet shard with every contract column.
/// With `tokens`, the token columns too: 100 tokens a char of every text
/// (and `pair_tokens` their sum); without, none (shards of an older run).
fn write_shard(path: &Path, rows: &[Spec], first_index: usize, tokens: bool) {
    let n = rows.len();
    let python: Vec<String> = rows.iter().map(|r| text(r.python_chars)).collect();
    let cuda_f: Vec<Option<String>> = rows.iter().map(|r| r.cuda_chars.map(text)).collect();
    let cuda_b: Vec<Option<String>> = rows
        .iter()
        .map(|r| r.cuda_chars.map(|c| text(2 * c)))
        .collect();
    let nulls = || Arc::new(StringArray::from(vec![None::<&str>; n])) as ArrayRef;
    let null_ints = || Arc::new(Int32Array::from(vec![None; n])) as ArrayRef;
    let strs = |v: Vec<String>| Arc::new(StringArray::from(v)) as ArrayRef;
    let opt_strs = |v: &[Option<String>]| Arc::new(StringArray::from(v.to_vec())) as ArrayRef;
    let opt_chars = |v: &[Option<String>]| {
        Arc::new(Int32Array::from(
            v.iter()
                .map(|s| s.as_ref().map(|s| s.len() as i32))
                .collect::<Vec<_>>(),
        )) as ArrayRef
    };
    let opt_lines = |v: &[Option<String>]| {
        Arc::new(Int32Array::from(
            v.iter()
                .map(|s| s.as_deref().map(lines))
                .collect::<Vec<_>>(),
        )) as ArrayRef
    };
    let lists = || {
        let mut b = ListBuilder::new(StringBuilder::new());
        for _ in 0..n {
            b.values().append_value("tid");
            b.append(true);
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let text_bytes: Vec<i64> = (0..n)
        .map(|i| {
            (python[i].len()
                + cuda_f[i].as_ref().map_or(0, |s| s.len())
                + cuda_b[i].as_ref().map_or(0, |s| s.len())) as i64
        })
        .collect();

    let mut columns: Vec<(&str, ArrayRef)> = vec![
        (
            "id",
            strs((0..n).map(|i| format!("run-{}", first_index + i)).collect()),
        ),
        (
            "split",
            strs(rows.iter().map(|r| r.split.to_owned()).collect()),
        ),
        (
            "category",
            strs(rows.iter().map(|r| r.category.to_owned()).collect()),
        ),
        (
            "kernel_name",
            strs((0..n).map(|i| format!("k{}", first_index + i)).collect()),
        ),
        ("python_source", strs(python.clone())),
        ("cpu_forward", nulls()),
        ("cpu_backward", nulls()),
        ("cuda_forward", opt_strs(&cuda_f)),
        ("cuda_backward", opt_strs(&cuda_b)),
        ("cpu_module", nulls()),
        ("cuda_module", nulls()),
        (
            "dedup_key",
            Arc::new(UInt64Array::from(
                (0..n as u64)
                    .map(|i| i * 7919 + first_index as u64)
                    .collect::<Vec<_>>(),
            )),
        ),
        ("builtins", lists()),
        ("dtypes", lists()),
        (
            "python_chars",
            Arc::new(Int32Array::from(
                python.iter().map(|s| s.len() as i32).collect::<Vec<_>>(),
            )),
        ),
        (
            "python_lines",
            Arc::new(Int32Array::from(
                python.iter().map(|s| lines(s)).collect::<Vec<_>>(),
            )),
        ),
        ("cpu_forward_chars", null_ints()),
        ("cpu_forward_lines", null_ints()),
        ("cpu_backward_chars", null_ints()),
        ("cpu_backward_lines", null_ints()),
        ("cuda_forward_chars", opt_chars(&cuda_f)),
        ("cuda_forward_lines", opt_lines(&cuda_f)),
        ("cuda_backward_chars", opt_chars(&cuda_b)),
        ("cuda_backward_lines", opt_lines(&cuda_b)),
        ("cpu_module_chars", null_ints()),
        ("cpu_module_lines", null_ints()),
        ("cuda_module_chars", null_ints()),
        ("cuda_module_lines", null_ints()),
    ];
    columns.push(("text_bytes", Arc::new(Int64Array::from(text_bytes))));
    if tokens {
        let per = |v: &[Option<String>]| {
            Arc::new(Int32Array::from(
                v.iter()
                    .map(|s| s.as_ref().map(|s| 100 * s.len() as i32))
                    .collect::<Vec<_>>(),
            )) as ArrayRef
        };
        let python_opt: Vec<Option<String>> = python.iter().cloned().map(Some).collect();
        columns.push(("python_source_tokens", per(&python_opt)));
        columns.push(("cpu_forward_tokens", null_ints()));
        columns.push(("cpu_backward_tokens", null_ints()));
        columns.push(("cuda_forward_tokens", per(&cuda_f)));
        columns.push(("cuda_backward_tokens", per(&cuda_b)));
        columns.push(("cpu_module_tokens", null_ints()));
        columns.push(("cuda_module_tokens", null_ints()));
        let pair: Vec<i32> = (0..n)
            .map(|i| 100 * text_bytes_of(&python, &cuda_f, &cuda_b, i))
            .collect();
        columns.push(("pair_tokens", Arc::new(Int32Array::from(pair))));
    }
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| {
            Field::new(
                *name,
                a.data_type().clone(),
                a.null_count() > 0 || a.data_type() == &DataType::Int32,
            )
        })
        .collect();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap();
    let mut w =
        ArrowWriter::try_new(fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn text_bytes_of(
    python: &[String],
    cuda_f: &[Option<String>],
    cuda_b: &[Option<String>],
    i: usize,
) -> i32 {
    (python[i].len()
        + cuda_f[i].as_ref().map_or(0, |s| s.len())
        + cuda_b[i].as_ref().map_or(0, |s| s.len())) as i32
}

/// A run folder: shards grouped by split (train split over two files), manifest.json.
fn write_run(dir: &Path, name: &str, rows: &[Spec], counters: Value, tokens: bool) {
    fs::create_dir_all(dir.join("data")).unwrap();
    let mut index = 0;
    for split in ["train", "validation", "test"] {
        let of_split: Vec<&Spec> = rows.iter().filter(|r| r.split == split).collect();
        let chunk = if split == "train" {
            of_split.len().div_ceil(2).max(1)
        } else {
            of_split.len().max(1)
        };
        for (k, part) in of_split.chunks(chunk).enumerate() {
            let owned: Vec<Spec> = part
                .iter()
                .map(|r| spec(r.split, r.category, r.python_chars, r.cuda_chars))
                .collect();
            write_shard(
                &dir.join(format!("data/{split}-{k:05}.parquet")),
                &owned,
                index,
                tokens,
            );
            index += part.len();
        }
    }
    let mut manifest = json!({ "name": name, "seed": 1, "counters": counters });
    if tokens {
        manifest["tokenizer"] = json!("o200k_base");
    }
    fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

/// Seven rows: categories a×4, b×2, c×1; splits train 5, validation 1, test 1;
/// python 10..70 chars; cuda_forward twice python, cuda_backward four times.
fn alpha_rows() -> Vec<Spec> {
    let c = |p: usize| Some(2 * p);
    vec![
        spec("train", "a", 10, c(10)),
        spec("train", "a", 70, c(70)),
        spec("validation", "a", 30, c(30)),
        spec("train", "b", 40, c(40)),
        spec("test", "a", 50, c(50)),
        spec("train", "b", 60, c(60)),
        spec("train", "c", 20, c(20)),
    ]
}

fn alpha_counters() -> Value {
    json!({ "generated": 12, "written": 7, "duplicates": 3, "rejected": {"lower": 1, "verify": 1},
            "rows_per_split": {"train": 5, "validation": 1, "test": 1}, "seconds": 2.0, "rows_per_second": 3.5 })
}

fn report_json(dir: &Path) -> Value {
    serde_json::from_str(&pairpipe::report::run(dir, true).unwrap()).unwrap()
}

fn share(list: &Value, name: &str) -> (u64, f64) {
    let s = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"));
    (s["rows"].as_u64().unwrap(), s["share"].as_f64().unwrap())
}

fn column<'a>(section: &'a Value, name: &str) -> &'a Value {
    section["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("alpha");
    write_run(&run, "alpha", &alpha_rows(), alpha_counters(), true);
    // A half-written shard the sink has not renamed yet must be ignored.
    fs::write(run.join("data/.train-00002.parquet.tmp"), b"not parquet").unwrap();

    let r = report_json(&run);
    assert!(r["total"].is_null());
    let s = &r["runs"][0];
    assert_eq!(s["name"], "alpha");
    assert_eq!(s["rows"], 7);
    assert_eq!(s["storage"]["shards"], 4);
    assert_eq!(share(&s["splits"], "train"), (5, 5.0 / 7.0));
    assert_eq!(share(&s["splits"], "validation").0, 1);
    assert_eq!(share(&s["splits"], "test").0, 1);
    let split_order: Vec<&str> = s["splits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(split_order, ["train", "validation", "test"]);
    assert_eq!(share(&s["categories"], "a"), (4, 4.0 / 7.0));
    assert_eq!(share(&s["categories"], "b"), (2, 2.0 / 7.0));
    assert_eq!(share(&s["categories"], "c"), (1, 1.0 / 7.0));
    assert_eq!(s["categories"][0]["name"], "a", "most frequent first");

    // Text columns: python and cuda only; cpu and modules are all null.
    let names: Vec<&str> = s["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["column"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["python_source", "cuda_forward", "cuda_backward"]);
    let py = column(s, "python_source");
    assert_eq!(py["rows"], 7);
    assert!(close(py["chars"]["mean"].as_f64().unwrap(), 40.0));
    assert_eq!(py["chars"]["p50"], 40);
    assert_eq!(py["chars"]["p95"], 70);
    assert_eq!(py["chars"]["max"], 70);
    // 10..70 chars on lines of 10 → 1..7 lines.
    assert_eq!(py["lines"]["p50"], 4);
    assert_eq!(py["lines"]["max"], 7);
    assert!(py["expansion"].is_null());
    let cf = column(s, "cuda_forward");
    assert_eq!(cf["chars"]["p50"], 80);
    assert!(close(cf["expansion"].as_f64().unwrap(), 2.0));
    assert!(close(
        column(s, "cuda_backward")["expansion"].as_f64().unwrap(),
        4.0
    ));

    // 7 × (1 + 2 + 4) × mean 40 chars of ASCII.
    assert_eq!(s["storage"]["text_bytes"], 7 * 7 * 40);
    let disk: u64 = fs::read_dir(run.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| fs::metadata(p).unwrap().len())
        .sum();
    assert_eq!(s["storage"]["disk_bytes"], disk);
    assert!(close(
        s["storage"]["compression_ratio"].as_f64().unwrap(),
        1960.0 / disk as f64
    ));

    let c = &s["counters"];
    assert_eq!(
        (
            c["generated"].as_u64(),
            c["written"].as_u64(),
            c["duplicates"].as_u64()
        ),
        (Some(12), Some(7), Some(3))
    );
    assert_eq!(c["rejected"], json!({"lower": 1, "verify": 1}));
    assert_eq!(c["rejected_total"], 2);
    assert!(close(c["rows_per_second"].as_f64().unwrap(), 3.5));
    assert_eq!(s["warnings"], json!([]));

    let md = pairpipe::report::run(&run, false).unwrap();
    assert!(md.contains("| a | 4 | 57.1% |"), "{md}");
    assert!(md.contains("| train | 5 | 71.4% |"), "{md}");
    assert!(
        md.contains("| python_source | 7 | 40.0 | 40 | 70 | 70 | 4.0 | 4 | 7 | 7 | – |"),
        "{md}"
    );
    assert!(
        md.contains("| cuda_forward | 7 | 80.0 | 80 | 140 | 140 |"),
        "{md}"
    );
    assert!(md.contains("| 12 | 7 | 3 | 2 | 2.00 | 4 |"), "{md}");
    assert!(md.contains("| lower | 1 |"), "{md}");

    // Tokens: 100 a char; pairs of 700 × python chars (7,000 to 49,000).
    let t = &s["tokens"];
    assert_eq!(t["tokenizer"], "o200k_base");
    assert_eq!(
        (t["rows"].as_u64(), t["total"].as_u64()),
        (Some(7), Some(196_000))
    );
    assert_eq!(t["pair"]["p50"], 28_000);
    assert_eq!(t["pair"]["max"], 49_000);
    assert!(close(t["pair"]["mean"].as_f64().unwrap(), 28_000.0));
    let fits: Vec<(i64, u64)> = t["context_fit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["context"].as_i64().unwrap(), f["rows"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        fits,
        [(2048, 0), (4096, 0), (8192, 1), (16384, 2), (32768, 4)]
    );
    let total = |list: &Value, name: &str| {
        let e = list
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap();
        (e["rows"].as_u64().unwrap(), e["tokens"].as_u64().unwrap())
    };
    assert_eq!(total(&t["per_split"], "train"), (5, 140_000));
    assert_eq!(total(&t["per_split"], "validation"), (1, 21_000));
    assert_eq!(total(&t["per_split"], "test"), (1, 35_000));
    assert_eq!(total(&t["per_category"], "a"), (4, 700 * 160));
    assert_eq!(t["per_category"][0]["name"], "a", "most tokens first");
    let cb = &column(&s, "cuda_backward")["tokens"];
    assert_eq!(
        (cb["p50"].as_i64(), cb["max"].as_i64()),
        (Some(16_000), Some(28_000))
    );
    assert!(column(&s, "python_source")["tokens"]["max"] == 7_000);
    assert!(md.contains("### Tokens (o200k_base)"), "{md}");
    assert!(md.contains("| 32768 | 4 | 57.1% |"), "{md}");
    assert!(md.contains("| pair | 28000.0 | 28000 |"), "{md}");
}

#[test]
fn several_runs_and_a_total() {
    let tmp = tempfile::tempdir().unwrap();
    write_run(
        &tmp.path().join("alpha"),
        "alpha",
        &alpha_rows(),
        alpha_counters(),
        true,
    );
    // beta: CUDA off, 3 rows, and a manifest that disagrees with its shards.
    let beta = [
        spec("train", "c", 100, None),
        spec("train", "c", 200, None),
        spec("test", "d", 300, None),
    ];
    let beta_counters = json!({ "generated": 5, "written": 4, "duplicates": 1, "rejected": {"lower": 2},
                                "rows_per_split": {"train": 2, "test": 1}, "seconds": 1.0 });
    // Shards of a run without token columns.
    write_run(
        &tmp.path().join("beta"),
        "beta",
        &beta,
        beta_counters,
        false,
    );
    fs::create_dir(tmp.path().join("not-a-run")).unwrap();

    let r = report_json(tmp.path());
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (runs[0]["name"].as_str(), runs[1]["name"].as_str()),
        (Some("alpha"), Some("beta"))
    );
    let beta = &runs[1];
    assert_eq!(beta["rows"], 3);
    let names: Vec<&str> = beta["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["column"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["python_source"]);
    assert_eq!(column(beta, "python_source")["chars"]["p50"], 200);
    assert_eq!(
        beta["warnings"],
        json!(["manifest says 4 rows written, shards hold 3"])
    );
    // Without a rows_per_second counter, the rate is computed from written and seconds.
    assert!(close(
        beta["counters"]["rows_per_second"].as_f64().unwrap(),
        4.0
    ));

    // beta's shards have no token columns: no token section, no token stats per column.
    assert!(beta["tokens"].is_null());
    assert!(column(beta, "python_source")["tokens"].is_null());
    let t = &r["total"];
    assert_eq!(t["rows"], 10);
    // The total's tokens are over the rows that have counts (alpha's), its tokenizer unknown.
    assert_eq!(t["tokens"]["rows"], 7);
    assert_eq!(t["tokens"]["total"], 196_000);
    assert!(t["tokens"]["tokenizer"].is_null());
    assert_eq!(share(&t["splits"], "train"), (7, 0.7));
    assert_eq!(share(&t["categories"], "c"), (3, 0.3));
    assert_eq!(share(&t["categories"], "d"), (1, 0.1));
    let py = column(t, "python_source");
    assert_eq!(py["rows"], 10);
    // 10,20,...,70,100,200,300: nearest rank of the median is 60.
    assert_eq!(py["chars"]["p50"], 60);
    assert_eq!(py["chars"]["max"], 300);
    assert_eq!(column(t, "cuda_forward")["rows"], 7);
    assert_eq!(t["storage"]["shards"], 7);
    let c = &t["counters"];
    assert_eq!(
        (
            c["generated"].as_u64(),
            c["written"].as_u64(),
            c["duplicates"].as_u64()
        ),
        (Some(17), Some(11), Some(4))
    );
    assert_eq!(c["rejected"], json!({"lower": 3, "verify": 1}));
    assert!(close(c["seconds"].as_f64().unwrap(), 3.0));

    let md = pairpipe::report::run(tmp.path(), false).unwrap();
    assert!(md.contains("## total of 2 runs ("), "{md}");
    assert!(
        md.contains("> warning: manifest says 4 rows written"),
        "{md}"
    );
}

#[test]
fn clear_errors_name_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let err = pairpipe::report::run(tmp.path(), false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&tmp.path().display().to_string()) && err.contains("no pairpipe shards"),
        "{err}"
    );

    // A run folder whose data/ is empty.
    let run = tmp.path().join("empty");
    fs::create_dir_all(run.join("data")).unwrap();
    fs::write(run.join("manifest.json"), "{}").unwrap();
    let err = format!("{:#}", pairpipe::report::run(&run, false).unwrap_err());
    assert!(
        err.contains("no Parquet shards") && err.contains(&run.join("data").display().to_string()),
        "{err}"
    );

    let missing = tmp.path().join("missing");
    let err = pairpipe::report::run(&missing, true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("missing") && err.contains("not a directory"),
        "{err}"
    );
}

/// On a real run: the contents tables (line buckets, builtins, dtypes,
/// launch dimensions, distinct kernels per dedup level) agree with the rows
/// read back from the shards.
#[test]
fn contents_agree_with_the_rows_of_a_real_run() {
    use std::collections::{BTreeMap, HashSet};

    use arrow::array::AsArray;
    use arrow::datatypes::{Int32Type, UInt64Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let dir = tempfile::tempdir().unwrap();
    let config = pairpipe::config::Config::parse(&format!(
        r#"[run]
name = "contents"
seed = 3
output = "{}"
[target]
rows = 600
[ir]
cpu = false
cuda = true
[synth]
categories = {{ arithmetic = 1, vector = 1, grid_2d = 1, grid_3d = 1, atomic = 1 }}
[dedup]
level = "exact"
"#,
        dir.path().display()
    ))
    .unwrap();
    pairpipe::pipeline::run(&config, false).unwrap();

    let mut builtins: BTreeMap<String, u64> = BTreeMap::new();
    let mut dtypes: BTreeMap<String, u64> = BTreeMap::new();
    let mut dims: BTreeMap<String, u64> = BTreeMap::new();
    let mut features: BTreeMap<String, u64> = BTreeMap::new();
    // (category, motif) -> rows using it.
    let mut motifs: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut buckets: BTreeMap<String, u64> = BTreeMap::new();
    let mut keys = [HashSet::new(), HashSet::new(), HashSet::new()];
    let mut rows = 0u64;
    for entry in fs::read_dir(dir.path().join("data")).unwrap() {
        let file = fs::File::open(entry.unwrap().path()).unwrap();
        for batch in ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
        {
            let b = batch.unwrap();
            let c = |n: &str| b.column_by_name(n).unwrap().clone();
            for i in 0..b.num_rows() {
                rows += 1;
                for (name, counts) in [("builtins", &mut builtins), ("dtypes", &mut dtypes)] {
                    let list = c(name).as_list::<i32>().value(i);
                    for s in list.as_string::<i32>().iter() {
                        *counts.entry(s.unwrap().to_string()).or_default() += 1;
                    }
                }
                let list = c("features").as_list::<i32>().value(i);
                for s in list.as_string::<i32>().iter() {
                    *features.entry(s.unwrap().to_string()).or_default() += 1;
                }
                let category = c("category").as_string::<i32>().value(i).to_string();
                let list = c("motifs").as_list::<i32>().value(i);
                let used: HashSet<&str> =
                    list.as_string::<i32>().iter().map(Option::unwrap).collect();
                for m in used {
                    *motifs.entry((category.clone(), m.to_string())).or_default() += 1;
                }
                let d = c("launch_dims").as_primitive::<Int32Type>().value(i);
                *dims.entry(format!("{d}-D")).or_default() += 1;
                let lines = c("python_lines").as_primitive::<Int32Type>().value(i);
                let bucket = match lines {
                    ..=5 => "1-5",
                    6..=10 => "6-10",
                    11..=20 => "11-20",
                    21..=40 => "21-40",
                    41..=80 => "41-80",
                    81..=160 => "81-160",
                    _ => ">160",
                };
                *buckets.entry(bucket.to_string()).or_default() += 1;
                for (set, name) in keys
                    .iter_mut()
                    .zip(["key_exact", "key_renamed", "key_shape"])
                {
                    set.insert(c(name).as_primitive::<UInt64Type>().value(i));
                }
            }
        }
    }
    assert_eq!(rows, 600);
    let report = report_json(dir.path());
    let contents = &report["runs"][0]["contents"];
    let table = |name: &str| -> BTreeMap<String, u64> {
        contents[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_string(),
                    s["rows"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(table("builtins"), builtins);
    assert_eq!(table("dtypes"), dtypes);
    assert_eq!(table("launch_dims"), dims);
    // Every feature is listed, those no row uses with 0 rows.
    let mut listed = table("features");
    assert_eq!(listed.len(), pairpipe::lower::Features::ALL.len());
    listed.retain(|_, n| *n > 0);
    assert_eq!(listed, features);
    assert!(
        features.contains_key("atomics") && features.contains_key("loops"),
        "atomic and loop kernels expected: {features:?}"
    );
    let reported: BTreeMap<(String, String), u64> = contents["motifs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            let category = c["category"].as_str().unwrap().to_string();
            c["motifs"].as_array().unwrap().iter().map(move |m| {
                (
                    (category.clone(), m["name"].as_str().unwrap().to_string()),
                    m["rows"].as_u64().unwrap(),
                )
            })
        })
        .collect();
    assert_eq!(reported, motifs);
    assert_eq!(table("python_lines"), buckets);
    assert!(
        dims.len() >= 3,
        "1-D, 2-D and 3-D launches expected: {dims:?}"
    );
    let distinct: Vec<u64> = contents["distinct"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kernels"].as_u64().unwrap())
        .collect();
    let want: Vec<u64> = keys.iter().map(|s| s.len() as u64).collect();
    assert_eq!(distinct, want);
    // Deduplicated at the exact level: every row is a distinct text.
    assert_eq!(want[0], 600);
    // The Markdown has the same tables.
    let md = pairpipe::report::run(dir.path(), false).unwrap();
    for heading in [
        "### Builtins",
        "### Data types",
        "### Launch dimensions",
        "### Features",
        "### Distinct kernels by dedup level",
        "### Kernel size",
    ] {
        assert!(md.contains(heading), "no {heading} in\n{md}");
    }
}
