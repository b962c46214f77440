//! Writes synthesized modules as files, to check them against warp-lang:
//! `cargo run --release --example dump_synth -- --count N --seed S --out DIR [--category C]`
//! Files are named `{category}_{index}.py`; every category gets N samples.
//! `--out -` writes nothing and reports the synthesis rate instead.

use anyhow::{Context, Result, bail};
use pairpipe::synth::{CATEGORIES, sample_rng, synthesize};
use std::path::PathBuf;

fn main() -> Result<()> {
    let (mut count, mut seed, mut out, mut only) = (100u64, 1u64, PathBuf::from("synth_out"), None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--count" => count = value.parse()?,
            "--seed" => seed = value.parse()?,
            "--out" => out = value.into(),
            "--category" => only = Some(value),
            _ => bail!("unknown flag {flag}"),
        }
    }
    let write = out.as_os_str() != "-";
    if write {
        std::fs::create_dir_all(&out)?;
    }
    let start = std::time::Instant::now();
    let (mut bytes, mut samples) = (0usize, 0u64);
    for (c, &category) in CATEGORIES.iter().enumerate() {
        if only.as_deref().is_some_and(|o| o != category) {
            continue;
        }
        for n in 0..count {
            // Disjoint index ranges per category, as a mixed run would have.
            let index = c as u64 * count + n;
            let sample = synthesize(category, index, &mut sample_rng(seed, index));
            bytes += sample.python_source.len();
            samples += 1;
            if write {
                let path = out.join(format!("{category}_{index}.py"));
                std::fs::write(path, &sample.python_source)?;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{samples} samples, {bytes} bytes of source in {secs:.3} s ({:.0} samples/s)",
        samples as f64 / secs
    );
    Ok(())
}
