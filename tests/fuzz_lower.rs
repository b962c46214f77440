//! Property test: the parser and the lowering never panic or hang. Every one of
//! 100,000 sources — the hand-written corpus mutated at random (bytes and lines
//! deleted, duplicated, swapped; tokens inserted; identifiers replaced) plus
//! random token soup — either lowers or fails with a positioned error.
//!
//! A second test does the same to real Warp code nobody here wrote: the
//! `tests/**/test_*.py` and `examples/**/*.py` of the installed warp-lang
//! (found through `PAIRPIPE_WARP_DIR`, or the venv of `PAIRPIPE_VENV` or
//! ~/.cache/pairpipe-venv; `tests/run_all.sh` sets `PAIRPIPE_WARP_DIR`),
//! mutated the same ways and also nested deeper (brackets, unary operators,
//! indentation, unrolled loops around a line), cut anywhere and salted with
//! junk characters; each must lower or fail with a positioned error within a
//! bounded time.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pairpipe::lower::{THREAD_STACK, lower, lower_file_with};
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

const CASES: usize = 100_000;

const TOKENS: &[&str] = &[
    ":",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    "+=",
    "-=",
    "*",
    "/",
    "//",
    "%",
    "**",
    "-",
    "not ",
    " and ",
    " or ",
    "if ",
    "else",
    "elif ",
    "for ",
    " in ",
    "range(",
    "while ",
    "return",
    "break",
    "continue",
    "wp.",
    "wp.tid()",
    "x",
    "i",
    "1",
    "1.0",
    "-2.5",
    "True",
    "\n",
    "    ",
    "\t",
    "'",
    "\"",
    "#",
    "\\",
    "@wp.kernel\n",
    "@wp.func\n",
    "def ",
    "lambda",
    "wp.vec3(",
    "wp.mat33(",
    "wp.array(dtype=float)",
    ".x",
    "[0]",
    "[i, j]",
    "0x",
    "1e",
    ";",
    "...",
    "é",
    "\r\n",
];

fn corpus() -> Vec<String> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("tests/kernels exists") {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                out.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out.sort();
    out
}

fn pick<'a, T>(rng: &mut Pcg64Mcg, items: &'a [T]) -> &'a T {
    &items[(rng.next_u64() % items.len() as u64) as usize]
}

fn char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(rng: &mut Pcg64Mcg, src: &str) -> String {
    let mut s = src.to_string();
    let rounds = 1 + rng.next_u64() % 4;
    for _ in 0..rounds {
        let len = s.len().max(1) as u64;
        let at = char_boundary(&s, (rng.next_u64() % len) as usize);
        match rng.next_u64() % 7 {
            0 => {
                let end = char_boundary(&s, at + (rng.next_u64() % 12) as usize);
                s.replace_range(at..end, "");
            }
            1 => s.insert_str(at, *pick(rng, TOKENS)),
            2 => {
                let end = char_boundary(&s, at + 1 + (rng.next_u64() % 6) as usize);
                s.replace_range(at..end, *pick(rng, TOKENS));
            }
            3 | 4 => {
                let mut lines: Vec<&str> = s.split('\n').collect();
                let n = lines.len() as u64;
                let (a, b) = ((rng.next_u64() % n) as usize, (rng.next_u64() % n) as usize);
                if rng.next_u64() % 2 == 0 {
                    lines.swap(a, b);
                } else {
                    let l = lines[a];
                    lines.insert(b, l);
                }
                s = lines.join("\n");
            }
            5 => {
                // Rename one identifier occurrence to another identifier of the file.
                let idents: Vec<&str> = src
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .filter(|w| !w.is_empty())
                    .collect();
                if !idents.is_empty() {
                    let from = *pick(rng, &idents);
                    let to = *pick(rng, &idents);
                    s = s.replacen(from, to, 1);
                }
            }
            _ => s.truncate(at),
        }
    }
    s
}

fn token_soup(rng: &mut Pcg64Mcg) -> String {
    let mut s = String::from(
        "import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    i = wp.tid()\n",
    );
    for _ in 0..(rng.next_u64() % 40) {
        s.push_str(*pick(rng, TOKENS));
    }
    s
}

fn run_cases() -> (usize, usize) {
    let seeds = corpus();
    assert!(
        seeds.len() >= 20,
        "the corpus under tests/kernels should hold the hand-written kernels"
    );
    let mut rng = Pcg64Mcg::new(0x5eed_f00d_u128);
    let (mut lowered, mut rejected) = (0, 0);
    for case in 0..CASES {
        let src = if case % 10 == 9 {
            token_soup(&mut rng)
        } else {
            let seed = pick(&mut rng, &seeds).clone();
            mutate(&mut rng, &seed)
        };
        let result = std::panic::catch_unwind(|| lower(&src, true, true));
        match result {
            Ok(Ok(l)) => {
                lowered += 1;
                assert!(l.cpu.is_some() && l.cuda.is_some());
            }
            Ok(Err(e)) => {
                rejected += 1;
                assert!(
                    e.line >= 1 && e.col >= 1,
                    "error without a position for:\n{src}\n{e}"
                );
                assert!(!e.message.is_empty(), "empty error message for:\n{src}");
            }
            Err(_) => panic!("lowering panicked on case {case}:\n----\n{src}\n----"),
        }
    }
    (lowered, rejected)
}

#[test]
fn lowering_never_panics_or_hangs_on_mutated_sources() {
    // A hang is a failure too: run the cases on a thread and bound the wait.
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let _ = tx.send(run_cases());
        })
        .unwrap();
    let (lowered, rejected) = rx
        .recv_timeout(Duration::from_secs(600))
        .expect("fuzz cases did not finish: a hang?");
    assert_eq!(lowered + rejected, CASES);
    // Both outcomes must actually occur, or the mutations are not exercising anything.
    assert!(
        lowered > 1000,
        "too few mutated sources still lowered: {lowered}"
    );
    assert!(
        rejected > 10_000,
        "too few mutated sources were rejected: {rejected}"
    );
    eprintln!(
        "fuzz: {CASES} sources, {lowered} lowered, {rejected} rejected with a positioned error"
    );
}

/// Mutated real files lowered, and the most one of them may take.
const REAL_CASES: usize = 30_000;
const REAL_CASE_LIMIT: Duration = Duration::from_secs(5);
/// The generated-code bound for these cases: far above any real kernel, low
/// enough that a mutation nesting unrolled loops stops quickly.
const REAL_MAX_GENERATED: u64 = 4 << 20;

/// Python's limits and the generated-code bound, each by a phrase of its error.
const LIMITS: [(&str, &str); 4] = [
    ("nested brackets", "too many nested parentheses"),
    ("indentation", "too many levels of indentation"),
    ("tree depth", "too many nested expressions"),
    ("generated code", "exceeds the limit of"),
];

/// The installed warp-lang package folder, if there is one.
fn warp_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PAIRPIPE_WARP_DIR") {
        return Some(PathBuf::from(dir)).filter(|d| d.join("tests").is_dir());
    }
    let venv = std::env::var_os("PAIRPIPE_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/pairpipe-venv")))?;
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages/warp"))
        .find(|d| d.join("tests").is_dir())
}

/// warp's test and example sources, sorted by path.
fn real_files(warp: &Path) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    let mut stack = vec![warp.join("examples")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                paths.push(path);
            }
        }
    }
    // The tests, with those in the folders below (tile, geometry, cuda, ...).
    let mut stack = vec![warp.join("tests")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("warp/tests") {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name.starts_with("test_") && name.ends_with(".py") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            Some((p.display().to_string(), text))
        })
        .collect()
}

/// Characters that have no business in a kernel: controls, NUL, a BOM,
/// combining marks, right-to-left text, a lone surrogate's replacement.
const JUNK: &[&str] = &[
    "\0", "\x01", "\x7f", "\u{feff}", "\u{200b}", "\u{0301}", "\u{202e}", "\u{fffd}", "ß", "中",
    "\x0c", "\x0b", "\r", "$", "?", "`", "!", "\\x",
];

/// One line of `src` made deeper: its expression wrapped in brackets or
/// unary operators (up to past Python's limits), or the line put inside
/// nested `if`s or unrolled `for` loops.
fn deepen(rng: &mut Pcg64Mcg, src: &str) -> String {
    let mut lines: Vec<String> = src.split('\n').map(str::to_string).collect();
    let n = lines.len() as u64;
    let at = (rng.next_u64() % n) as usize;
    let line = lines[at].clone();
    let indent = line.len() - line.trim_start().len();
    let pad = &line[..indent];
    let depth = match rng.next_u64() % 4 {
        0 => 1 + rng.next_u64() % 8,
        1 => 190 + rng.next_u64() % 20,
        2 => 2800 + rng.next_u64() % 200,
        _ => 1 + rng.next_u64() % 5000,
    } as usize;
    match rng.next_u64() % 5 {
        0 | 1 => {
            // `x = EXPR` -> `x = ((EXPR))` or `x = ---EXPR`
            if let Some(eq) = line.find(" = ") {
                let (lhs, rhs) = line.split_at(eq + 3);
                let wrapped = match rng.next_u64() % 4 {
                    0 => format!("{}{rhs}{}", "(".repeat(depth), ")".repeat(depth)),
                    1 => format!("{}({rhs})", "-".repeat(depth)),
                    2 => format!("{}({rhs})", "not ".repeat(depth)),
                    _ => {
                        format!("{}{rhs}", "(x + ".repeat(depth.min(300)))
                            + &")".repeat(depth.min(300))
                    }
                };
                lines[at] = format!("{lhs}{wrapped}");
            }
        }
        2 => {
            // A long operator chain or call chain: deep trees without brackets.
            if let Some(eq) = line.find(" = ") {
                let (lhs, rhs) = line.split_at(eq + 3);
                let chain = match rng.next_u64() % 3 {
                    0 => vec![rhs.trim(); depth].join(" + "),
                    1 => format!("{}{rhs}", "1.0 if c else ".repeat(depth)),
                    _ => format!("f{}", "()".repeat(depth)),
                };
                lines[at] = format!("{lhs}{chain}");
            }
        }
        _ => {
            // Wrapped in nested blocks: `for` loops warp unrolls, or `if`s.
            let levels = if rng.next_u64().is_multiple_of(2) {
                1 + rng.next_u64() % 8
            } else {
                90 + rng.next_u64() % 20
            } as usize;
            let mut block = Vec::with_capacity(levels + 1);
            for l in 0..levels {
                let head = if rng.next_u64().is_multiple_of(2) {
                    format!("for _fz{l} in range(16):")
                } else {
                    "if True:".to_string()
                };
                block.push(format!("{pad}{}{head}", " ".repeat(l)));
            }
            block.push(format!("{pad}{}{}", " ".repeat(levels), line.trim_start()));
            lines.splice(at..=at, block);
        }
    }
    lines.join("\n")
}

fn mutate_real(rng: &mut Pcg64Mcg, src: &str) -> String {
    match rng.next_u64() % 8 {
        0..=2 => mutate(rng, src),
        3 | 4 => deepen(rng, src),
        5 => {
            // Two lines' tokens swapped: a token soup of real code.
            let words: Vec<&str> = src.split(' ').collect();
            let n = words.len() as u64;
            let mut words = words;
            for _ in 0..1 + rng.next_u64() % 8 {
                let (a, b) = ((rng.next_u64() % n) as usize, (rng.next_u64() % n) as usize);
                words.swap(a, b);
            }
            words.join(" ")
        }
        6 => {
            let mut s = src.to_string();
            for _ in 0..1 + rng.next_u64() % 4 {
                let at = char_boundary(&s, (rng.next_u64() % s.len().max(1) as u64) as usize);
                s.insert_str(at, *pick(rng, JUNK));
            }
            s
        }
        _ => {
            let at = char_boundary(src, (rng.next_u64() % src.len().max(1) as u64) as usize);
            src[..at].to_string()
        }
    }
}

#[test]
fn lowering_never_panics_or_hangs_on_mutated_real_warp_files() {
    let Some(warp) = warp_dir() else {
        eprintln!(
            "note: warp-lang not found (set PAIRPIPE_WARP_DIR or PAIRPIPE_VENV): \
             the fuzz of mutated real Warp files is skipped"
        );
        return;
    };
    let files = real_files(&warp);
    let n_files = files.len();
    assert!(
        files.len() >= 50,
        "{}: expected warp-lang's tests and examples, found {} files",
        warp.display(),
        files.len()
    );
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let mut rng = Pcg64Mcg::new(0x0bad_5eed_u128);
            let (mut lowered, mut rejected, mut slowest) = (0usize, 0usize, Duration::ZERO);
            // How often each of Python's limits and the size bound answered.
            let mut limits = [0usize; LIMITS.len()];
            let mut tally = |e: &pairpipe::lower::LowerError| {
                for (n, (_, text)) in limits.iter_mut().zip(LIMITS) {
                    *n += usize::from(e.message.contains(text));
                }
            };
            for case in 0..REAL_CASES {
                let (path, text) = pick(&mut rng, &files);
                let src = mutate_real(&mut rng, text);
                let started = Instant::now();
                let result = std::panic::catch_unwind(|| {
                    lower_file_with(&src, path, true, true, true, REAL_MAX_GENERATED)
                });
                let took = started.elapsed();
                slowest = slowest.max(took);
                let show = || format!("case {case}, a mutation of {path}:\n----\n{src}\n----");
                assert!(took < REAL_CASE_LIMIT, "took {took:?} on {}", show());
                let positioned = |e: &pairpipe::lower::LowerError| {
                    e.line >= 1 && e.col >= 1 && !e.message.is_empty()
                };
                match result {
                    Ok(Ok(l)) => {
                        lowered += 1;
                        for (kernel, e) in &l.skipped {
                            assert!(positioned(e), "kernel {kernel}: {e} in {}", show());
                            tally(e);
                        }
                    }
                    Ok(Err(e)) => {
                        rejected += 1;
                        assert!(positioned(&e), "{e} in {}", show());
                        tally(&e);
                    }
                    Err(_) => panic!("lowering panicked on {}", show()),
                }
            }
            let _ = tx.send((lowered, rejected, slowest, limits));
        })
        .unwrap();
    let (lowered, rejected, slowest, limits) = rx
        .recv_timeout(Duration::from_secs(600))
        .expect("fuzz cases of real files did not finish: a hang?");
    assert_eq!(lowered + rejected, REAL_CASES);
    assert!(
        lowered > 1000,
        "too few mutated real files lowered: {lowered}"
    );
    assert!(
        rejected > 500,
        "too few mutated real files rejected: {rejected}"
    );
    for ((what, _), n) in LIMITS.iter().zip(limits) {
        assert!(n > 0, "no mutation ran into the limit on {what}");
        eprintln!("fuzz: {n} stopped by the limit on {what}");
    }
    eprintln!(
        "fuzz: {REAL_CASES} mutations of {} real Warp files from {}, {lowered} lowered \
         (kernels that fail reported), {rejected} rejected with a positioned error; \
         slowest {slowest:?}",
        n_files,
        warp.display()
    );
}
