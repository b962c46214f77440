//! Writes synthesized modules as files, to check them against warp-lang:
//! `cargo run --release --example dump_synth -- --count N --seed S --out DIR [--category C]`
//! Files are named `{category}_{index}.py`; every category gets N samples.

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
    std::fs::create_dir_all(&out)?;
    let start = std::time::Instant::now();
    let mut bytes = 0usize;
    for (c, &category) in CATEGORIES.iter().enumerate() {
        if only.as_deref().is_some_and(|o| o != category) {
            continue;
        }
        for n in 0..count {
            // Disjoint index ranges per category, as a mixed run would have.
            let index = c as u64 * count + n;
            let sample = synthesize(category, index, &mut sample_rng(seed, index));
            bytes += sample.python_source.len();
            std::fs::write(
                out.join(format!("{category}_{index}.py")),
                &sample.python_source,
            )?;
        }
    }
    eprintln!("wrote {bytes} bytes of source in {:.2?}", start.elapsed());
    Ok(())
}
