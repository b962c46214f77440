//! Property test: the parser and the lowering never panic or hang. Every one of
//! 100,000 sources — the hand-written corpus mutated at random (bytes and lines
//! deleted, duplicated, swapped; tokens inserted; identifiers replaced) plus
//! random token soup — either lowers or fails with a positioned error.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use pairpipe::lower::lower;
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
    std::thread::spawn(move || {
        let _ = tx.send(run_cases());
    });
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
