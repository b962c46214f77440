//! Resume: runs killed with SIGKILL at several points (and one stopped by a
//! full disk) are started again with the same command and must end with
//! shards byte-identical to a run that was never interrupted; a changed
//! config is refused without touching what was written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_pairpipe");

/// Several hundred rows in shards of at most 1 MiB: a few dozen cuts.
fn config_text(rows: u64) -> String {
    format!(
        r#"[run]
name = "resume"
seed = 31
output = "unused"
workers = 2

[target]
rows = {rows}

[ir]
cpu = true
cuda = true

[synth]
categories = {{ arithmetic = 1, math = 1, control_flow = 1, vector = 1, matrix = 1, nested = 1, grid_2d = 1, grid_3d = 1 }}

[dedup]
expected_items = 100000
false_positive_rate = 0.001

[splits]
validation = 0.1
test = 0.1

[shards]
max_bytes = "1MiB"
row_group_bytes = "128KiB"
"#
    )
}

fn write_config(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn command(config: &Path, out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args(["run", "--quiet"])
        .arg(config)
        .arg("--output")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn run(config: &Path, out: &Path) -> Output {
    command(config, out).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under OUT/data with its bytes' xxh3, temporary files included.
fn files(out: &Path) -> BTreeMap<String, u64> {
    let Ok(dir) = std::fs::read_dir(out.join("data")) else {
        return BTreeMap::new();
    };
    dir.map(|e| {
        let e = e.unwrap();
        let bytes = std::fs::read(e.path()).unwrap();
        (
            e.file_name().to_string_lossy().into_owned(),
            xxhash_rust::xxh3::xxh3_64(&bytes),
        )
    })
    .collect()
}

fn complete_shards(out: &Path) -> usize {
    std::fs::read_dir(out.join("data"))
        .map(|d| {
            d.filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.ends_with(".parquet") && !name.starts_with('.')
            })
            .count()
        })
        .unwrap_or(0)
}

fn manifest(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

/// The manifest's counters and shard list, without what depends on the
/// clock (the config differs only in the output folder).
fn manifest_sans_timing(out: &Path) -> Value {
    let m = manifest(out);
    let mut counters = m["counters"].clone();
    let c = counters.as_object_mut().unwrap();
    c.remove("seconds");
    c.remove("rows_per_second");
    serde_json::json!({ "counters": counters, "shards": m["shards"] })
}

/// Starts the run and SIGKILLs it once `shards` complete shards exist (or
/// after `delay` if `shards` is 0). Returns whether it was killed before it
/// finished on its own.
fn kill_at(config: &Path, out: &Path, shards: usize, delay: Duration) -> bool {
    let mut child: Child = command(config, out).spawn().unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "run failed before the kill point");
            return false;
        }
        let due = if shards == 0 {
            start.elapsed() >= delay
        } else {
            complete_shards(out) >= shards
        };
        if due {
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            // The run may have finished between the check above and the
            // kill: a manifest is written last (a run removes any old one
            // when it starts), so one there now means it was not killed.
            return !out.join("manifest.json").exists();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

struct Reference {
    files: BTreeMap<String, u64>,
    manifest: Value,
}

fn reference(dir: &Path, config: &Path) -> Reference {
    let out = dir.join("uninterrupted");
    let o = run(config, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let files = files(&out);
    assert!(files.len() > 15, "want many shards, got {}", files.len());
    assert!(!out.join("checkpoint.json").exists());
    Reference {
        files,
        manifest: manifest_sans_timing(&out),
    }
}

fn assert_same_as(reference: &Reference, out: &Path) {
    assert_eq!(
        files(out),
        reference.files,
        "shards differ from the uninterrupted run"
    );
    assert!(
        manifest_sans_timing(out) == reference.manifest,
        "manifests differ"
    );
    assert!(!out.join("checkpoint.json").exists());
}

#[test]
fn killed_runs_resume_to_identical_shards() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "run.toml", &config_text(1500));
    let reference = reference(dir.path(), &config);
    let total = reference.files.len();

    // One kill each: right at the start, then after 1, a third, and most of the shards.
    let points = [
        (0, Duration::from_millis(30)),
        (1, Duration::ZERO),
        (total / 3, Duration::ZERO),
        (total - 3, Duration::ZERO),
    ];
    let mut killed = 0;
    for (k, &(shards, delay)) in points.iter().enumerate() {
        let out = dir.path().join(format!("killed-{k}"));
        if kill_at(&config, &out, shards, delay) {
            killed += 1;
            // Nothing under a final name is partial: every complete shard
            // is one of the uninterrupted run's.
            for (name, hash) in files(&out) {
                if !name.starts_with('.') {
                    assert_eq!(
                        reference.files.get(&name),
                        Some(&hash),
                        "{name} after the kill"
                    );
                }
            }
            // Killed before the run wrote its first checkpoint, there is
            // nothing to resume and the rerun starts afresh.
            assert!(
                out.join("checkpoint.json").exists() || complete_shards(&out) == 0,
                "shards but no checkpoint"
            );
        }
        let o = run(&config, &out);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_same_as(&reference, &out);
    }
    assert!(
        killed >= 3,
        "only {killed} of the runs were killed before finishing"
    );

    // Killed again and again in the same folder, with other worker counts.
    let out = dir.path().join("killed-repeatedly");
    let mut last_killed = false;
    for shards in [2, total / 2, total - 2] {
        last_killed = kill_at(&config, &out, shards, Duration::ZERO);
    }
    let o = command(&config, &out)
        .args(["--workers", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A run can finish before the last kill lands (a fast machine, two
    // shards to go): then there is nothing left to resume.
    if last_killed {
        assert!(stderr(&o).contains("resumed after"), "{}", stderr(&o));
    }
    assert_same_as(&reference, &out);
}

#[test]
fn changed_config_is_refused_and_fresh_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "run.toml", &config_text(1500));
    let out = dir.path().join("out");
    assert!(kill_at(&config, &out, 4, Duration::ZERO));
    let before = files(&out);
    let checkpoint = std::fs::read(out.join("checkpoint.json")).unwrap();

    let changed = write_config(
        dir.path(),
        "changed.toml",
        &config_text(1500).replace("seed = 31", "seed = 32"),
    );
    let o = run(&changed, &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("another config") && err.contains("seed") && err.contains("--fresh"),
        "{err}"
    );
    assert_eq!(files(&out), before, "the refused run touched the shards");
    assert_eq!(
        std::fs::read(out.join("checkpoint.json")).unwrap(),
        checkpoint
    );

    // A damaged shard is refused too, naming it.
    let (victim, _) = before.iter().find(|(n, _)| !n.starts_with('.')).unwrap();
    let victim_path = out.join("data").join(victim);
    let mut bytes = std::fs::read(&victim_path).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&victim_path, &bytes).unwrap();
    let o = run(&config, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(victim.as_str()), "{}", stderr(&o));

    // --fresh discards the interrupted run and makes the changed one.
    let o = command(&changed, &out).arg("--fresh").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(manifest(&out)["seed"], 32);
    assert!(!out.join("checkpoint.json").exists());
}

#[test]
fn output_that_is_a_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "run.toml", &config_text(50));
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "precious").unwrap();
    let o = run(&config, &file);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("exists and is not a folder"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
}

/// A full disk, simulated with a file-size limit (RLIMIT_FSIZE, with SIGXFSZ
/// ignored, so writes fail with EFBIG as they would with ENOSPC): the run
/// stops with exit 2 and a clear message, the shards already complete stay
/// as they were, and the same command resumes once there is room.
#[test]
fn full_disk_stops_cleanly_and_the_run_resumes() {
    if !Path::new("/bin/sh").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "run.toml", &config_text(1500));
    let reference = reference(dir.path(), &config);
    let out = dir.path().join("out");
    assert!(kill_at(&config, &out, 5, Duration::ZERO));
    // The shards the checkpoint vouches for (one renamed just before the
    // kill may not be among them yet, and is rightly written again).
    let checkpoint: Value =
        serde_json::from_slice(&std::fs::read(out.join("checkpoint.json")).unwrap()).unwrap();
    let listed: Vec<String> = checkpoint["sink"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["path"]
                .as_str()
                .unwrap()
                .trim_start_matches("data/")
                .to_string()
        })
        .collect();
    assert!(!listed.is_empty());
    let before: BTreeMap<String, u64> = files(&out)
        .into_iter()
        .filter(|(n, _)| listed.contains(n))
        .collect();

    // 512 KiB per file: less than a shard.
    let o = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -f 512; trap '' XFSZ; exec \"$@\"")
        .arg("sh")
        .args([BIN, "run", "--quiet"])
        .arg(&config)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("disk is full") && err.contains("resume"),
        "{err}"
    );
    let after = files(&out);
    assert!(
        after.keys().all(|n| !n.starts_with('.')),
        "temporary files left: {after:?}"
    );
    for (name, hash) in &before {
        assert_eq!(after.get(name), Some(hash), "{name} was damaged");
    }

    let o = run(&config, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_as(&reference, &out);
}

/// A corpus run ([source] kind = "files") killed mid-run resumes only on the
/// corpus it started with: a file edited or added in between is refused
/// (the rows already written would not be the new corpus's), and once the
/// corpus is restored the resume ends byte-identical to an uninterrupted run.
#[test]
fn corpus_runs_resume_only_on_the_same_corpus() {
    let dir = tempfile::tempdir().unwrap();
    // Real kernel files: the synthesizer's, one module per file.
    let corpus = dir.path().join("corpus");
    let o = Command::new(BIN)
        .args(["synth", "--count", "300", "--seed", "3", "--out"])
        .arg(corpus.join("synth"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = format!(
        r#"[run]
name = "mined-resume"
output = "unused"
workers = 1

[source]
kind = "files"
paths = ["{}"]

[shards]
max_bytes = "64KiB"
row_group_bytes = "16KiB"
"#,
        corpus.display()
    );
    let config = write_config(dir.path(), "mined.toml", &text);
    let reference = reference(dir.path(), &config);

    let out = dir.path().join("out");
    assert!(
        kill_at(&config, &out, 5, Duration::ZERO),
        "finished before the kill"
    );
    assert!(out.join("checkpoint.json").exists());
    let before = files(&out);
    let checkpoint = std::fs::read(out.join("checkpoint.json")).unwrap();
    let refused = |what: &str| {
        let o = run(&config, &out);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains("corpus that has changed") && err.contains("--fresh"),
            "{what}: {err}"
        );
        assert_eq!(
            files(&out),
            before,
            "{what}: the refused run touched the shards"
        );
        assert_eq!(
            std::fs::read(out.join("checkpoint.json")).unwrap(),
            checkpoint,
            "{what}"
        );
        err
    };

    // A comment added to a file: the same kernel, but another file (its
    // rows' source_file_xxh3 would change), so another corpus.
    let victim = corpus.join("synth/000007_math.py");
    let victim = if victim.exists() {
        victim
    } else {
        // (`synth` also writes each kernel's launch spec, NAME.json, which a
        // folder corpus does not read.)
        std::fs::read_dir(corpus.join("synth"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .min()
            .unwrap()
    };
    let original = std::fs::read(&victim).unwrap();
    let mut edited = original.clone();
    edited.extend_from_slice(b"# edited\n");
    std::fs::write(&victim, &edited).unwrap();
    let err = refused("a file edited");
    assert!(err.contains("300 files"), "{err}");
    std::fs::write(&victim, &original).unwrap();

    // A file added: the same size check names the counts.
    let extra = corpus.join("synth/zz_extra.py");
    std::fs::write(&extra, &original).unwrap();
    let err = refused("a file added");
    assert!(
        err.contains("300 files") && err.contains("301 files"),
        "{err}"
    );
    std::fs::remove_file(&extra).unwrap();

    // The corpus as it was: the run resumes and ends as if never killed.
    let o = run(&config, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resumed after"), "{}", stderr(&o));
    assert_same_as(&reference, &out);
}
