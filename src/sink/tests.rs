//! Sink behaviour on real files: written, read back with the parquet crate, compared.

use std::fs::{self, File};
use std::path::Path;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Int32Type, Int64Type, UInt64Type};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::*;

fn row(index: u64, split: &'static str, cpu: bool, cuda: bool) -> Row {
    let name = format!("k{index}");
    let ir = |on: bool, kind: &str| {
        on.then(|| format!("void {name}_{kind}() {{\n    x = {index};\n}}\n"))
    };
    Row {
        index,
        id: format!("r{index:08}"),
        split,
        category: ["arithmetic", "math", "atomic"][index as usize % 3],
        python_source: format!(
            "import warp as wp\n\n@wp.kernel\ndef {name}(a: wp.array(dtype=float)):\n    a[0] = {index}.0  # é\n"
        ),
        kernel_name: name.clone(),
        cpu_forward: ir(cpu, "cpu_fwd"),
        cpu_backward: ir(cpu, "cpu_bwd"),
        cuda_forward: ir(cuda, "cuda_fwd"),
        cuda_backward: ir(cuda, "cuda_bwd"),
        cpu_module: None,
        cuda_module: None,
        dedup_key: index.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        keys: crate::dedup::DedupKeys {
            exact: index,
            renamed: index.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            shape: index / 2,
        },
        builtins: (0..index % 3).map(|i| format!("b{i}")).collect(),
        dtypes: vec!["float32".into()],
        launch_dims: 1 + (index % 3) as u32,
        launch_spec: (index % 2 == 0).then(|| format!(r#"{{"dim": [{index}]}}"#)),
        motifs: (0..index % 2).map(|_| "map".into()).collect(),
        features: crate::lower::Features::ALL[index as usize % 7].1,
        ir_from_lowering: false,
        provenance: None,
        tokens: Default::default(),
    }
}

fn split_of(index: u64) -> &'static str {
    match index % 10 {
        0 => "validation",
        1 => "test",
        _ => "train",
    }
}

fn options(out: &Path, max_shard_bytes: u64, row_group_bytes: u64) -> SinkOptions {
    SinkOptions {
        out_dir: out.to_path_buf(),
        max_shard_bytes,
        row_group_bytes,
        cpu: false,
        cuda: true,
        modules: false,
        metadata: vec![
            ("pairpipe_version".into(), "test".into()),
            ("config".into(), "[run]".into()),
        ],
    }
}

fn write(out: &Path, opts: SinkOptions, n: u64) -> Vec<ShardInfo> {
    let mut sink = Sink::create(SinkOptions {
        out_dir: out.into(),
        ..opts
    })
    .unwrap();
    for i in 0..n {
        sink.write(row(i, split_of(i), false, true)).unwrap();
    }
    sink.finish().unwrap()
}

fn read(path: &Path) -> Vec<RecordBatch> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    reader.map(Result::unwrap).collect()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn rows_round_trip_with_sizes_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let shards = write(dir.path(), options(dir.path(), 1 << 30, 1 << 20), 100);
    let paths: Vec<&str> = shards.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "data/train-00000.parquet",
            "data/validation-00000.parquet",
            "data/test-00000.parquet"
        ]
    );
    assert_eq!(
        shards.iter().map(|s| s.rows).collect::<Vec<_>>(),
        [80, 10, 10]
    );

    for shard in &shards {
        let path = dir.path().join(&shard.path);
        let bytes = fs::read(&path).unwrap();
        assert_eq!(shard.bytes, bytes.len() as u64);
        assert_eq!(
            shard.xxh3,
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
        );

        let batches = read(&path);
        let mut next = 0;
        for b in &batches {
            let col = |name: &str| b.column_by_name(name).unwrap().clone();
            for r in 0..b.num_rows() {
                // Rows of a split come back in push order.
                let i = (next..).find(|&i| split_of(i) == shard.split).unwrap();
                next = i + 1;
                let want = row(i, split_of(i), false, true);
                assert_eq!(col("id").as_string::<i32>().value(r), want.id);
                assert_eq!(col("index").as_primitive::<UInt64Type>().value(r), i);
                assert_eq!(col("split").as_string::<i32>().value(r), shard.split);
                assert_eq!(
                    col("python_source").as_string::<i32>().value(r),
                    want.python_source
                );
                assert_eq!(
                    col("cuda_forward").as_string::<i32>().value(r),
                    want.cuda_forward.as_deref().unwrap()
                );
                assert!(col("cpu_forward").is_null(r) && col("cpu_forward_chars").is_null(r));
                assert!(col("cuda_module").is_null(r) && col("cuda_module_lines").is_null(r));
                assert_eq!(
                    col("dedup_key").as_primitive::<UInt64Type>().value(r),
                    want.dedup_key
                );
                let builtins = col("builtins").as_list::<i32>().value(r);
                let builtins: Vec<&str> = builtins
                    .as_string::<i32>()
                    .iter()
                    .map(Option::unwrap)
                    .collect();
                assert_eq!(builtins, want.builtins);
                let src = &want.python_source;
                // One non-ASCII char: chars count scalars, not bytes; 5 lines, newline-terminated.
                assert_eq!(
                    col("python_chars").as_primitive::<Int32Type>().value(r) as usize,
                    src.len() - 1
                );
                assert_eq!(col("python_lines").as_primitive::<Int32Type>().value(r), 5);
                assert_eq!(
                    col("cuda_backward_lines")
                        .as_primitive::<Int32Type>()
                        .value(r),
                    3
                );
                assert_eq!(
                    col("text_bytes").as_primitive::<Int64Type>().value(r) as u64,
                    want.text_bytes()
                );
            }
        }
        assert_eq!(
            batches.iter().map(|b| b.num_rows() as u64).sum::<u64>(),
            shard.rows
        );

        let meta = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let kv = meta
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .unwrap();
        let get = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
        assert_eq!(get("pairpipe_version").as_deref(), Some("test"));
        assert_eq!(get("config").as_deref(), Some("[run]"));
        let rg = meta.metadata().row_group(0);
        let column = |name: &str| {
            rg.columns()
                .iter()
                .find(|c| c.column_path().string() == name)
                .unwrap()
        };
        // Text is zstd (the file records the codec, not the level), without
        // min/max statistics; the small columns are stored plain, with them.
        let python = column("python_source");
        assert!(matches!(python.compression(), Compression::ZSTD(_)));
        assert!(python.statistics().is_none(), "no statistics on text");
        let chars = column("python_chars");
        assert_eq!(chars.compression(), Compression::UNCOMPRESSED);
        assert!(
            chars.statistics().is_some(),
            "statistics on the size columns"
        );
        // Only text the run fills is compressed: not the all-null IR columns
        // of a target that is off (cpu here), nor the string lists.
        assert!(matches!(
            column("cuda_backward").compression(),
            Compression::ZSTD(_)
        ));
        for name in [
            "cpu_forward",
            "cpu_module",
            "builtins.list.item",
            "dtypes.list.item",
        ] {
            assert_eq!(
                column(name).compression(),
                Compression::UNCOMPRESSED,
                "{name}"
            );
        }
        // Statistics per chunk, no page index: every small column's chunk is
        // a single page, so the index would repeat them.
        for c in rg.columns() {
            assert!(c.offset_index_offset().is_none() && c.column_index_offset().is_none());
        }
    }
    let names = files_in(&dir.path().join("data"));
    assert_eq!(
        names,
        [
            "test-00000.parquet",
            "train-00000.parquet",
            "validation-00000.parquet"
        ]
    );
}

#[test]
fn row_groups_follow_row_group_bytes() {
    row_groups_are_cut_at(8 << 10, 1000);
}

#[test]
fn large_row_groups_are_encoded_a_batch_at_a_time() {
    // Groups of 1 MiB take ~4 encoding batches each: the cuts must not move,
    // and no split may hold more than a batch of rows unencoded.
    let group = 1 << 20;
    row_groups_are_cut_at(group, 40_000);
    let dir = tempfile::tempdir().unwrap();
    let mut sink = Sink::create(options(dir.path(), 1 << 30, group)).unwrap();
    let mut encoded_mid_group = false;
    for i in 0..40_000 {
        let r = row(i, split_of(i), false, true);
        let bytes = row_bytes(&r);
        sink.push(r).unwrap();
        for split in &sink.splits {
            assert!(
                split.pending < ENCODE_BATCH_BYTES,
                "{}: {} bytes pending",
                split.split,
                split.pending
            );
            assert_eq!(split.pending, split.rows.iter().map(row_bytes).sum::<u64>());
            assert!(split.buffered < group);
            encoded_mid_group |=
                split.buffered > split.pending + bytes && split.group_rows > split.rows.len();
        }
    }
    assert!(
        encoded_mid_group,
        "some rows were encoded before their group was complete"
    );
    let shards = sink.finish().unwrap();
    let ids: Vec<String> = read(&dir.path().join(&shards[0].path))
        .iter()
        .flat_map(|b| {
            let col = b.column_by_name("id").unwrap().as_string::<i32>();
            col.iter()
                .map(|v| v.unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let want: Vec<String> = (0..40_000)
        .filter(|&i| split_of(i) == "train")
        .map(|i| format!("r{i:08}"))
        .collect();
    assert_eq!(ids, want);
}

#[test]
fn text_pages_stay_small() {
    // One 4 MiB row group: its python_source holds over 1 MiB, which
    // parquet's default limit would write as pages of 1 MiB. The text
    // must come in pages of TEXT_PAGE_BYTES (each may overshoot by the last
    // batch written into it); the small columns keep the default.
    let dir = tempfile::tempdir().unwrap();
    let shards = write(dir.path(), options(dir.path(), 1 << 30, 4 << 20), 40_000);
    let reader =
        SerializedFileReader::new(File::open(dir.path().join(&shards[0].path)).unwrap()).unwrap();
    let group = reader.get_row_group(0).unwrap();
    let columns = group.metadata().columns().to_vec();
    for (i, chunk) in columns.iter().enumerate() {
        let name = chunk.column_path().string();
        let mut pages = 0;
        let mut largest = 0;
        for page in group.get_column_page_reader(i).unwrap() {
            let page = page.unwrap();
            if page.page_type() == parquet::basic::PageType::DATA_PAGE_V2 {
                pages += 1;
                largest = largest.max(page.buffer().len());
            }
        }
        let text = chunk.uncompressed_size() > 600 << 10
            && matches!(chunk.compression(), Compression::ZSTD(_));
        if text {
            assert!(pages >= 3, "{name}: {pages} pages");
            assert!(
                largest <= TEXT_PAGE_BYTES + ENCODE_BATCH_BYTES as usize,
                "{name}: a page of {largest} bytes"
            );
        }
    }
    assert!(
        columns
            .iter()
            .any(|c| c.column_path().string() == "python_source"
                && c.uncompressed_size() > 1 << 20)
    );
}

/// Writes `n` rows with row groups of `group` bytes and checks the train
/// shard's groups are cut at the first row that fills one.
fn row_groups_are_cut_at(group: u64, n: u64) {
    let dir = tempfile::tempdir().unwrap();
    let shards = write(dir.path(), options(dir.path(), 1 << 30, group), n);
    let train = dir.path().join(&shards[0].path);
    let meta = SerializedFileReader::new(File::open(&train).unwrap()).unwrap();
    let groups = meta.metadata().row_groups();
    assert!(groups.len() >= 3, "{} row groups", groups.len());
    // Train rows in push order, cut where the file's row groups are cut.
    let mut train_rows = (0..)
        .filter(|&i| split_of(i) == "train")
        .map(|i| row(i, "train", false, true));
    for (i, g) in groups.iter().enumerate() {
        let sizes: Vec<u64> = (0..g.num_rows())
            .map(|_| row_bytes(&train_rows.next().unwrap()))
            .collect();
        let total: u64 = sizes.iter().sum();
        if i + 1 < groups.len() {
            // Cut at the first row that fills the group, not before, not after.
            assert!(
                total >= group && total - sizes.last().unwrap() < group,
                "group {i}: {total} bytes"
            );
        } else {
            assert!(total > 0 && total < group, "last group {i}: {total} bytes");
        }
    }
}

#[test]
fn shards_rotate_by_size_and_stay_near_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let cap = 64 << 10;
    let shards = write(dir.path(), options(dir.path(), cap, 4 << 10), 6000);
    let train: Vec<&ShardInfo> = shards.iter().filter(|s| s.split == "train").collect();
    assert!(train.len() >= 3, "{} train shards", train.len());
    for (n, s) in train.iter().enumerate() {
        assert_eq!(s.path, format!("data/train-{n:05}.parquet"));
        // Closed before the cap would be passed, by estimate: never far over it,
        // and (but the last) not much under it either.
        assert!(s.bytes <= cap + cap / 20, "{} is {} bytes", s.path, s.bytes);
        if n + 1 < train.len() {
            assert!(
                s.bytes >= cap * 3 / 4,
                "{} is only {} bytes",
                s.path,
                s.bytes
            );
        }
    }
    let mut per_split = [0u64; 3];
    for s in &shards {
        per_split[SPLITS.iter().position(|x| *x == s.split).unwrap()] += s.rows;
        assert_eq!(
            read(&dir.path().join(&s.path))
                .iter()
                .map(|b| b.num_rows() as u64)
                .sum::<u64>(),
            s.rows
        );
    }
    assert_eq!(per_split, [4800, 600, 600]);
    assert!(
        files_in(&dir.path().join("data"))
            .iter()
            .all(|n| !n.ends_with(".tmp"))
    );
}

#[test]
fn disk_bytes_counts_written_groups() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = Sink::create(options(dir.path(), 1 << 30, 4 << 10)).unwrap();
    assert_eq!(sink.disk_bytes(), 0);
    let mut last = 0;
    for i in 0..500 {
        sink.push(row(i, "train", false, true)).unwrap();
        assert!(sink.disk_bytes() >= last);
        last = sink.disk_bytes();
    }
    assert!(last > 4 << 10, "{last}");
    let shards = sink.finish().unwrap();
    assert!(shards[0].bytes > last);
}

#[test]
fn same_rows_give_identical_files() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let opts = options(a.path(), 32 << 10, 4 << 10);
    assert_eq!(
        write(a.path(), opts.clone(), 2000),
        write(b.path(), opts, 2000)
    );
}

#[test]
fn disabled_targets_are_null_and_rows_that_fill_them_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let opts = SinkOptions {
        cpu: true,
        cuda: false,
        modules: true,
        ..options(dir.path(), 1 << 30, 1 << 20)
    };
    let mut sink = Sink::create(opts).unwrap();
    let mut with_module = row(0, "train", true, false);
    with_module.cpu_module = Some("// module\n".into());
    sink.push(with_module).unwrap();
    let err = sink.push(row(1, "train", true, true)).unwrap_err();
    assert!(
        format!("{err:#}").contains("r00000001: cuda_forward is filled"),
        "{err:#}"
    );
    let err = sink.push(row(2, "dev", true, false)).unwrap_err();
    assert!(
        format!("{err:#}").contains("unknown split \"dev\""),
        "{err:#}"
    );
    let shards = sink.finish().unwrap();
    assert_eq!(shards.len(), 1);
    let b = &read(&dir.path().join(&shards[0].path))[0];
    assert_eq!(b.num_rows(), 1);
    assert_eq!(
        b.column_by_name("cpu_module")
            .unwrap()
            .as_string::<i32>()
            .value(0),
        "// module\n"
    );
    assert_eq!(
        b.column_by_name("cpu_module_lines")
            .unwrap()
            .as_primitive::<Int32Type>()
            .value(0),
        1
    );
    assert!(b.column_by_name("cuda_forward").unwrap().is_null(0));
    assert!(b.column_by_name("cuda_module").unwrap().is_null(0));
}

#[test]
fn previous_shards_are_replaced_and_other_files_kept() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), options(dir.path(), 16 << 10, 4 << 10), 2000);
    let data = dir.path().join("data");
    assert!(files_in(&data).len() > 3);
    fs::write(data.join("notes.txt"), "mine").unwrap();
    fs::write(data.join(".train-00007.parquet.tmp"), "crashed run").unwrap();
    write(dir.path(), options(dir.path(), 1 << 30, 4 << 10), 100);
    assert_eq!(
        files_in(&data),
        [
            "notes.txt",
            "test-00000.parquet",
            "train-00000.parquet",
            "validation-00000.parquet"
        ]
    );
}

#[test]
fn a_failing_finish_is_an_error_from_either_thread() {
    // finish() closes train here and the other splits on a second thread:
    // an error on either side comes back as the run's error.
    for gone in ["train", "test"] {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = Sink::create(options(dir.path(), 1 << 30, 1 << 20)).unwrap();
        for i in 0..30 {
            sink.push(row(i, split_of(i), false, true)).unwrap();
        }
        // A directory where the split's shard is to be created.
        fs::create_dir(dir.path().join(format!("data/.{gone}-00000.parquet.tmp"))).unwrap();
        let err = format!("{:#}", sink.finish().unwrap_err());
        assert!(err.contains(gone), "{err}");
    }
}

#[test]
fn previous_shards_are_removed_in_the_background_and_failures_reported() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    write(dir.path(), options(dir.path(), 16 << 10, 4 << 10), 500);
    assert!(files_in(&data).len() > 3);
    // One old shard name that unlinking cannot remove (a directory).
    fs::create_dir(data.join("train-00042.parquet")).unwrap();
    let mut sink = Sink::create(options(dir.path(), 1 << 30, 4 << 10)).unwrap();
    for i in 0..20 {
        sink.push(row(i, split_of(i), false, true)).unwrap();
    }
    let err = format!("{:#}", sink.finish().unwrap_err());
    assert!(
        err.contains("train-00042.parquet") && err.contains("left by a previous run"),
        "{err}"
    );
    // The run's own shards never met the old ones: a clean run afterwards
    // leaves exactly its own.
    fs::remove_dir(data.join("train-00042.parquet")).unwrap();
    write(dir.path(), options(dir.path(), 1 << 30, 4 << 10), 20);
    assert_eq!(
        files_in(&data),
        [
            "test-00000.parquet",
            "train-00000.parquet",
            "validation-00000.parquet"
        ]
    );
}

#[test]
fn dropped_sink_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = Sink::create(options(dir.path(), 1 << 30, 1 << 10)).unwrap();
    for i in 0..50 {
        sink.push(row(i, "train", false, true)).unwrap();
    }
    assert!(
        files_in(&dir.path().join("data"))
            .iter()
            .any(|n| n == ".train-00000.parquet.tmp")
    );
    drop(sink);
    assert!(files_in(&dir.path().join("data")).is_empty());
}

#[test]
fn bad_output_paths_and_options_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    fs::write(&file, "").unwrap();
    let err = Sink::create(options(&file, 1 << 30, 1 << 20))
        .err()
        .unwrap();
    assert_eq!(
        format!("{err}"),
        format!(
            "output path {} exists and is not a directory",
            file.display()
        )
    );
    let err = Sink::create(options(&file.join("sub"), 1 << 30, 1 << 20))
        .err()
        .unwrap();
    assert!(format!("{err:#}").contains(&format!(
        "cannot create output directory {}",
        file.join("sub/data").display()
    )));
    let err = Sink::create(options(dir.path(), 1 << 30, 0)).err().unwrap();
    assert!(format!("{err}").contains("row_group_bytes"));
    let err = write_manifest(&file, &serde_json::json!({})).unwrap_err();
    assert!(
        format!("{err:#}").contains(&file.display().to_string()),
        "{err:#}"
    );
}

#[test]
fn disk_full_is_reported_with_the_shard_path() {
    // /dev/full accepts opens and fails every write with ENOSPC.
    // Linux only; elsewhere there is no such device to test with.
    let Ok(full) = File::options().write(true).open("/dev/full") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join(".train-00000.parquet.tmp");
    let schema = arrow_schema().unwrap();
    let props = WriterProperties::builder().build();
    let format = Arc::new(ShardFormat::new(schema, &props).unwrap());
    // The shard's name is a path in the temp dir (what the error must name, and
    // what the failed shard's Drop removes); its bytes go to /dev/full.
    let batch = columns::columns()
        .unwrap()
        .batch(&[row(0, "train", false, true)], |_| true)
        .unwrap();
    let err = OpenShard::new(
        format,
        full,
        "train",
        "train-00000.parquet".into(),
        tmp.clone(),
    )
    .and_then(|mut shard| {
        shard.encode(&batch)?;
        shard.end_group()?;
        shard.finish(dir.path())
    })
    .unwrap_err();
    let msg = format!("{err:#}");
    let want = format!("writing shard {}", tmp.display());
    assert!(
        msg.contains(&want) && msg.contains("No space left"),
        "{msg}"
    );
}

#[test]
fn manifest_is_replaced_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    write_manifest(&out, &serde_json::json!({"n": 1})).unwrap();
    write_manifest(&out, &serde_json::json!({"n": 2, "shards": []})).unwrap();
    let back: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(back, serde_json::json!({"n": 2, "shards": []}));
    assert_eq!(files_in(&out), ["manifest.json"]);
}

/// The run's properties for `opts`, and batches of rows that fill every kind
/// of column (statistics, dictionaries, lists, nulls, zstd text): per group,
/// the batches as `Columns::batch` builds them (plain strings) and as the sink
/// builds them (`take_batch`, text as string views).
fn format_and_batches(
    groups: u64,
    rows_per_group: u64,
) -> (
    WriterProperties,
    Vec<Vec<RecordBatch>>,
    Vec<Vec<RecordBatch>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), 1 << 30, 1 << 20);
    opts.cpu = true;
    let columns = columns::columns().unwrap();
    let props = writer_properties(columns, &opts).unwrap();
    let (mut plain, mut views) = (Vec::new(), Vec::new());
    for g in 0..groups {
        // Two batches a group, as the sink encodes a group in steps.
        let mut rows: Vec<Row> = (0..rows_per_group)
            .map(|i| row(g * rows_per_group + i, "train", i % 4 != 0, true))
            .collect();
        let half = rows.len() / 2;
        plain.push(
            [&rows[..half], &rows[half..]]
                .map(|part| columns.batch(part, |_| true).unwrap())
                .to_vec(),
        );
        let (a, b) = rows.split_at_mut(half);
        views.push(
            [a, b]
                .map(|part| columns.take_batch(part, |_| true).unwrap())
                .to_vec(),
        );
    }
    (props, plain, views)
}

#[test]
fn shard_written_by_row_group_is_what_one_writer_writes() {
    // Each row group has a writer of its own and the shard's footer is put
    // together from theirs: the file must be the very bytes one writer for
    // the whole shard writes (offsets moved, ordinals, statistics with their
    // deprecated copies, key-value metadata with the Arrow schema).
    for groups in [1, 3, 17] {
        // The reference writer gets plain string columns, the shard the
        // sink's string views: the bytes must not tell them apart.
        let (props, batches, view_batches) = format_and_batches(groups, 9);
        let schema = arrow_schema().unwrap();
        let mut one =
            ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props.clone())).unwrap();
        for group in &batches {
            for batch in group {
                one.write(batch).unwrap();
            }
            one.flush().unwrap();
        }
        let expected = one.into_inner().unwrap();

        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join(".train-00000.parquet.tmp");
        let format = Arc::new(ShardFormat::new(schema, &props).unwrap());
        let mut shard = OpenShard::new(
            format,
            File::create(&tmp).unwrap(),
            "train",
            "train-00000.parquet".into(),
            tmp,
        )
        .unwrap();
        for group in &view_batches {
            for batch in group {
                shard.encode(batch).unwrap();
            }
            let before = shard.bytes_written();
            shard.end_group().unwrap();
            assert!(
                shard.bytes_written() > before,
                "a group's data is in the file once it ends"
            );
        }
        // What the open shard keeps per written group is its footer as
        // bytes, not parquet's ~25 KB of structs (about 160 bytes a column:
        // 32 columns since the provenance columns).
        assert!(
            shard.held_footer_bytes() < 6_500 * groups as usize,
            "{} bytes of footers for {groups} groups",
            shard.held_footer_bytes()
        );
        let info = shard.finish(dir.path()).unwrap();
        let written = fs::read(dir.path().join("train-00000.parquet")).unwrap();
        assert_eq!(written.len(), expected.len(), "{groups} groups");
        assert!(written == expected, "{groups} groups: bytes differ");
        assert_eq!(info.bytes, expected.len() as u64);
        assert_eq!(info.rows, groups * 9);
        assert_eq!(
            info.xxh3,
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&expected))
        );
    }
}

#[test]
fn shard_footer_is_checked_before_it_is_trusted() {
    assert!(shard::decode_footer(b"").is_err());
    assert!(
        shard::decode_footer(b"PAR1\x10\x00\x00\x00PAR1").is_err(),
        "length past the start"
    );
    assert!(
        shard::decode_footer(b"PAR1\x00\x00\x00\x00PAR2").is_err(),
        "no magic"
    );
}
