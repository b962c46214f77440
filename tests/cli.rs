//! The `pairpipe` binary as a user runs it: exit codes, one-line errors,
//! help text, and the shape of what each command writes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn pairpipe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pairpipe"))
        .args(args)
        .output()
        .expect("run pairpipe")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A small valid config writing to `output`.
fn config_text(output: &Path) -> String {
    format!(
        r#"[run]
name = "clitest"
seed = 5
output = "{}"

[target]
rows = 200

[ir]
cpu = true
cuda = true

[synth]
categories = {{ arithmetic = 1, math = 1, control_flow = 1, scalar_param = 1, atomic = 1 }}

[dedup]
expected_items = 10000
false_positive_rate = 0.001

[shards]
max_bytes = "256KiB"
row_group_bytes = "64KiB"
"#,
        output.display()
    )
}

fn write_config(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("pipe.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Exit status 2 and exactly one line on stderr, `error: ...`, containing every `needle`.
fn assert_user_error(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} does not mention {n:?}");
    }
}

#[test]
fn help_on_every_command() {
    let top = pairpipe(&["--help"]);
    assert!(top.status.success());
    let text = String::from_utf8_lossy(&top.stdout);
    for cmd in ["run", "merge", "report", "lower", "synth"] {
        assert!(text.contains(cmd), "{cmd} missing from --help:\n{text}");
    }
    let flags: [(&str, &[&str]); 5] = [
        (
            "run",
            &[
                "--output",
                "--count",
                "--seed",
                "--workers",
                "--part",
                "CONFIG",
            ],
        ),
        ("merge", &["--output", "PARTS"]),
        ("report", &["--json", "DIR"]),
        (
            "lower",
            &[
                "--target",
                "cpu",
                "cuda",
                "FILE",
                "--max-generated",
                "64MiB",
            ],
        ),
        (
            "synth",
            &["--count", "--seed", "--category", "--out", "arithmetic"],
        ),
    ];
    for (cmd, needles) in flags {
        let out = pairpipe(&[cmd, "--help"]);
        assert!(out.status.success(), "{cmd} --help failed");
        let help = String::from_utf8_lossy(&out.stdout);
        for n in needles {
            assert!(help.contains(n), "`{cmd} --help` lacks {n}:\n{help}");
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(pairpipe(&[]).status.code(), Some(2));
    assert_eq!(pairpipe(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(pairpipe(&["run"]).status.code(), Some(2));
    assert_eq!(
        pairpipe(&["run", "x.toml", "--count", "0"]).status.code(),
        Some(2)
    );
    assert_eq!(
        pairpipe(&["lower", "x.py", "--target", "gpu"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn config_errors_are_one_line_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let good = config_text(&dir.path().join("out"));
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            good.replace("seed = 5", "seed = 5\nsede = 6"),
            vec!["run.sede", "unknown field", "pipe.toml:4:1: "],
        ),
        (
            good.replace("[dedup]", "[dedupe]"),
            vec!["dedupe", "unknown field"],
        ),
        (
            good.replace("rows = 200", "text_bytes = \"12 parsecs\""),
            vec!["target.text_bytes", "invalid size"],
        ),
        (
            good.replace("math = 1", "maths = 1"),
            vec!["synth.categories", "unknown category \"maths\""],
        ),
        (
            good.replace("rows = 200", "rows = 200\ntext_bytes = 1000"),
            vec!["target", "exactly one"],
        ),
        (
            good.replace("false_positive_rate = 0.001", "false_positive_rate = 2"),
            vec!["dedup.false_positive_rate"],
        ),
        (
            good.replace("name = \"clitest\"", "name = 7"),
            vec!["run.name"],
        ),
        (
            good.replace("[dedup]", "statements = [9, 3]\n\n[dedup]"),
            vec!["synth.statements", "[9, 3]"],
        ),
        (
            good.replace("[dedup]", "dtypes = [\"float32\", \"float64\"]\n\n[dedup]"),
            vec!["synth.dtypes", "unknown dtype \"float64\""],
        ),
        (
            good.replace("[dedup]", "loop_depth = 7\n\n[dedup]"),
            vec!["synth.loop_depth"],
        ),
        (
            format!("{good}\n[lower]\nmax_generated_bytes = \"12 parsecs\"\n"),
            vec!["lower.max_generated_bytes", "invalid size"],
        ),
        (
            format!("{good}\n[lower]\nmax_generated_bytes = 100\n"),
            vec!["lower.max_generated_bytes", "at least 1KiB"],
        ),
        (
            format!("{good}\n[lower]\nmax_generated = \"1MiB\"\n"),
            vec!["lower.max_generated", "unknown field"],
        ),
    ];
    for (text, needles) in cases {
        let path = write_config(dir.path(), &text);
        let out = pairpipe(&["run", path.to_str().unwrap()]);
        let mut all = needles.clone();
        all.push(path.to_str().unwrap());
        assert_user_error(&out, &all);
    }
    assert!(
        !dir.path().join("out").exists(),
        "a bad config must not create output"
    );
    let missing = dir.path().join("missing.toml");
    assert_user_error(
        &pairpipe(&["run", missing.to_str().unwrap()]),
        &["missing.toml"],
    );
}

#[test]
fn unwritable_output_is_a_user_error() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where the output folder's parent should be: not
    // writable even for root.
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "").unwrap();
    let path = write_config(dir.path(), &config_text(&blocker.join("out")));
    assert_user_error(
        &pairpipe(&["run", path.to_str().unwrap()]),
        &["run.output", "blocker"],
    );
    // The same through --output.
    let path = write_config(dir.path(), &config_text(&dir.path().join("fine")));
    let out = pairpipe(&[
        "run",
        path.to_str().unwrap(),
        "--output",
        blocker.to_str().unwrap(),
    ]);
    assert_user_error(&out, &["run.output"]);
}

#[test]
fn set_up_failure_after_the_workers_start_is_reported() {
    // The output folder is fine but its `data` is a file: the sink fails to
    // set up after the source and workers have started, and the run must
    // stop with that error (not hang on its threads), leaving no shard.
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(out_dir.join("data"), "").unwrap();
    let path = write_config(dir.path(), &config_text(&out_dir));
    let out = pairpipe(&["run", path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(
        err.contains("cannot create output directory") && err.contains("data"),
        "{err}"
    );
    assert!(!out_dir.join("manifest.json").exists());
}

#[test]
fn run_writes_exactly_count_rows_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let path = write_config(dir.path(), &config_text(&dir.path().join("unused")));
    let out = pairpipe(&[
        "run",
        path.to_str().unwrap(),
        "--count",
        "123",
        "--output",
        out_dir.to_str().unwrap(),
        "--seed",
        "99",
        "--workers",
        "2",
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("wrote 123 rows"), "{err}");
    for word in ["duplicates", "rejected", "text", "on disk", "rows/s"] {
        assert!(err.contains(word), "summary lacks {word}: {err}");
    }
    assert!(!dir.path().join("unused").exists());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["seed"], 99);
    assert_eq!(manifest["counters"]["written"], 123);
    assert_eq!(
        manifest["config"]["target"],
        serde_json::json!({ "rows": 123 })
    );
    assert!(out_dir.join("README.md").is_file());
    let rows: u64 = manifest["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(rows, 123);
    for shard in manifest["shards"].as_array().unwrap() {
        assert!(out_dir.join(shard["path"].as_str().unwrap()).is_file());
    }

    // report reads it back.
    let report = pairpipe(&["report", out_dir.to_str().unwrap()]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert!(!report.stdout.is_empty());
    let json = pairpipe(&["report", out_dir.to_str().unwrap(), "--json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    serde_json::from_slice::<Value>(&json.stdout).expect("report --json prints JSON");
}

#[test]
fn same_seed_same_shards_for_any_worker_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &config_text(&dir.path().join("unused")));
    let checksums = |workers: &str| {
        let out_dir = dir.path().join(format!("w{workers}"));
        let out = pairpipe(&[
            "run",
            path.to_str().unwrap(),
            "--count",
            "600",
            "--workers",
            workers,
            "--output",
            out_dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let m: Value =
            serde_json::from_slice(&std::fs::read(out_dir.join("manifest.json")).unwrap()).unwrap();
        let shards: Vec<(String, String)> = m["shards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["path"].as_str().unwrap().to_string(),
                    s["xxh3"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let c = &m["counters"];
        (
            shards,
            c["generated"].clone(),
            c["duplicates"].clone(),
            c["rejected"].clone(),
        )
    };
    let one = checksums("1");
    assert!(one.0.len() > 1, "expected several shards: {:?}", one.0);
    assert_eq!(one, checksums("2"));
    assert_eq!(one, checksums("8"));
}

#[test]
fn synth_writes_indexed_sources() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str, extra: &[&str]| {
        let d = dir.path().join(name);
        let mut args = vec![
            "synth",
            "--count",
            "25",
            "--seed",
            "3",
            "--out",
            d.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = pairpipe(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut files: Vec<(String, String)> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        // Each kernel's launch spec lies next to it as JSON.
        let (py, json): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| f.0.ends_with(".py"));
        assert_eq!(py.len(), json.len());
        for ((p, _), (j, spec)) in py.iter().zip(&json) {
            assert_eq!(p.strip_suffix(".py"), j.strip_suffix(".json"));
            let v: serde_json::Value = serde_json::from_str(spec).unwrap();
            assert!(v["dim"].is_array() && v["params"].is_array(), "{spec}");
        }
        py
    };
    let a = out("a", &[]);
    assert_eq!(a.len(), 25);
    assert!(
        a[0].0.starts_with("000000_") && a[24].0.starts_with("000024_"),
        "{:?}",
        a[0].0
    );
    for (name, src) in &a {
        let category = name[7..].strip_suffix(".py").unwrap();
        assert!(pairpipe::synth::CATEGORIES.contains(&category), "{name}");
        assert!(
            src.contains("import warp as wp") && src.contains("@wp.kernel"),
            "{src}"
        );
    }
    assert_eq!(a, out("b", &[]), "same seed, same files");
    let math = out("m", &["--category", "math"]);
    assert!(math.iter().all(|(n, _)| n.ends_with("_math.py")));
    let bad = pairpipe(&[
        "synth",
        "--count",
        "1",
        "--category",
        "nope",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn lower_prints_module_or_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("saxpy.py");
    std::fs::write(
        &good,
        "import warp as wp\n\n@wp.kernel\ndef saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):\n    i = wp.tid()\n    y[i] = a * x[i] + y[i]\n",
    )
    .unwrap();
    let cuda = pairpipe(&["lower", good.to_str().unwrap(), "--target", "cuda"]);
    assert!(cuda.status.success(), "{}", stderr(&cuda));
    let text = String::from_utf8_lossy(&cuda.stdout);
    assert!(
        text.contains("extern \"C\" __global__ void saxpy_")
            && text.contains("_cuda_kernel_backward(")
    );
    let cpu = pairpipe(&["lower", good.to_str().unwrap(), "--target", "cpu"]);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    assert!(String::from_utf8_lossy(&cpu.stdout).contains("WP_API void saxpy_"));

    let bad = dir.path().join("bad.py");
    std::fs::write(&bad, "import warp as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    x[0] = undefined_name\n").unwrap();
    let out = pairpipe(&["lower", bad.to_str().unwrap(), "--target", "cuda"]);
    assert_user_error(&out, &[&format!("error: {}:5:", bad.display())]);

    let missing = dir.path().join("nope.py");
    assert_user_error(
        &pairpipe(&["lower", missing.to_str().unwrap(), "--target", "cpu"]),
        &["nope.py"],
    );
}

#[test]
fn report_of_a_missing_folder_is_a_user_error() {
    assert_user_error(
        &pairpipe(&["report", "/nonexistent/pairpipe-run"]),
        &["/nonexistent/pairpipe-run"],
    );
}

/// A kernel file: `body` (indented by 4) after `i = wp.tid()`.
fn kernel_file(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    i = wp.tid()\n{body}"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `body` inside `depth` nested `for jN in range(16):` loops (warp unrolls each).
fn nested_loops(depth: usize, body: &str) -> String {
    let mut text = String::from("    s = float(0.0)\n");
    for d in 0..depth {
        text += &format!("{}for j{d} in range(16):\n", "    ".repeat(d + 1));
    }
    text += &format!("{}{body}\n    a[i] = s\n", "    ".repeat(depth + 1));
    text
}

/// `pairpipe lower FILE --target cpu` and what it took.
fn lower_timed(file: &Path, extra: &[&str]) -> (Output, std::time::Duration) {
    let started = std::time::Instant::now();
    let mut args = vec!["lower", file.to_str().unwrap(), "--target", "cpu"];
    args.extend_from_slice(extra);
    let out = pairpipe(&args);
    (out, started.elapsed())
}

/// Input that overflowed the stack or filled memory now stops with one
/// line at a position and exit 2, quickly; what CPython accepts still lowers.
#[test]
fn lower_stops_hostile_input_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 5000;
    let cases: Vec<(PathBuf, &str, &str)> = vec![
        (
            kernel_file(
                d,
                "parens.py",
                &format!("    a[i] = {}1.0{}\n", "(".repeat(n), ")".repeat(n)),
            ),
            ":7:212: ",
            "too many nested parentheses",
        ),
        (
            kernel_file(
                d,
                "unary.py",
                &format!("    a[i] = {}a[i]\n", "-".repeat(n)),
            ),
            ":7:",
            "too many nested expressions",
        ),
        (
            kernel_file(
                d,
                "chain.py",
                &format!("    a[i] = {}\n", vec!["a[i]"; 10_000].join(" + ")),
            ),
            ":7:",
            "too many nested expressions",
        ),
        (
            kernel_file(d, "indent.py", &{
                let mut body = String::new();
                for level in 0..120 {
                    body += &format!("{}if i > {level}:\n", " ".repeat(4 + level));
                }
                body + &" ".repeat(124) + "a[i] = 0.0\n"
            }),
            ":106:104: ",
            "too many levels of indentation",
        ),
        (
            kernel_file(d, "loops.py", &nested_loops(6, "s = s + a[i]")),
            ":9:9: ",
            "exceeds the limit of 64 MiB",
        ),
    ];
    for (file, at, what) in &cases {
        let (out, took) = lower_timed(file, &[]);
        let located = format!("error: {}{at}", file.display());
        assert_user_error(&out, &[&located, what]);
        assert!(took.as_secs() < 10, "{}: took {took:?}", file.display());
    }
    // Deep, but within Python's limits: lowers (on a stack with room for it).
    let deep = kernel_file(
        d,
        "deep.py",
        &format!("    a[i] = {}a[i]\n", "-".repeat(2000)),
    );
    let (out, _) = lower_timed(&deep, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let deep = kernel_file(
        d,
        "deep_chain.py",
        &format!("    a[i] = {}\n", vec!["a[i]"; 2500].join(" + ")),
    );
    let (out, _) = lower_timed(&deep, &[]);
    assert!(out.status.success(), "{}", stderr(&out));

    // --keep-going: the kernel past the bound is reported, the other one lowered.
    let both = d.join("both.py");
    let loops = std::fs::read_to_string(&cases[4].0).unwrap();
    std::fs::write(
        &both,
        format!(
            "{loops}\n\n@wp.kernel\ndef fine(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n"
        ),
    )
    .unwrap();
    let (out, took) = lower_timed(&both, &["--keep-going"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(took.as_secs() < 10, "took {took:?}");
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("{}:9:9: kernel 'k': ", both.display()))
            && first.contains("exceeds the limit of 64 MiB"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("void fine_"));

    // Not UTF-8: one line, exit 2.
    let binary = d.join("binary.py");
    std::fs::write(&binary, b"import warp as wp\n\xff\xfe\x00\n").unwrap();
    let (out, _) = lower_timed(&binary, &[]);
    assert_user_error(&out, &["binary.py", "UTF-8"]);
}

/// `--max-generated` sets the bound: a kernel within the default fails
/// under a lower one, with the bound in its message.
#[test]
fn lower_max_generated_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let file = kernel_file(dir.path(), "loops.py", &nested_loops(3, "s = s + a[i]"));
    let (out, _) = lower_timed(&file, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let size = out.stdout.len();
    assert!(size > 1 << 20, "three nested loops made only {size} bytes");
    let (out, _) = lower_timed(&file, &["--max-generated", "256KiB"]);
    assert_user_error(
        &out,
        &[
            "loops.py:",
            "exceeds the limit of 262144 bytes",
            "--max-generated",
        ],
    );
    let (out, _) = lower_timed(&file, &["--max-generated", "1GiB"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for bad in ["100", "lots"] {
        let (out, _) = lower_timed(&file, &["--max-generated", bad]);
        assert_eq!(out.status.code(), Some(2), "--max-generated {bad}");
    }
}

/// In the pipeline a kernel past `[lower] max_generated_bytes` is a
/// rejection counted by its reason, `too_large`, in the manifest.
#[test]
fn pipeline_rejects_kernels_past_the_generated_bound() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let text = format!(
        "{}\n[lower]\nmax_generated_bytes = \"8KiB\"\n",
        config_text(&out_dir)
    );
    let path = write_config(dir.path(), &text);
    let out = pairpipe(&["run", path.to_str().unwrap(), "--count", "50", "--quiet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("too_large"), "{}", stderr(&out));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("manifest.json")).unwrap())
            .unwrap();
    let counters = &manifest["counters"];
    assert_eq!(counters["written"], 50);
    let too_large = counters["rejected"]["too_large"].as_u64().unwrap_or(0);
    assert!(too_large > 0, "{counters}");
    let example = &counters["rejected_examples"]["too_large"][0]["message"];
    assert!(
        example
            .as_str()
            .unwrap()
            .contains("exceeds the limit of 8192 bytes"),
        "{example}"
    );
    assert_eq!(manifest["config"]["lower"]["max_generated_bytes"], 8192);
}
