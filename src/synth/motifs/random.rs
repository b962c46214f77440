//! random motifs (written by helper "motifs"; see /work/notes/synth_api.md).

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

pub const MOTIFS: &[Motif] = &[];

#[cfg(test)]
mod tests {
    use super::super::{D1, D2, D3, Motif, TILED, TILED2};
    use crate::synth::kernel::{Kernel, pick};
    use crate::synth::knobs::Knobs;
    use crate::synth::sample_rng;

    /// The motifs of helper "motifs"' four domains.
    fn mine() -> Vec<&'static Motif> {
        [
            super::super::physics::MOTIFS,
            super::super::fields::MOTIFS,
            super::super::geometry::MOTIFS,
            super::MOTIFS,
        ]
        .iter()
        .flat_map(|m| m.iter())
        .collect()
    }

    /// Builds kernels that start with each motif (then more of its first
    /// category's family) in every launch shape it declares; with
    /// PP_MOTIF_DUMP=DIR set, writes each as DIR/NAME_N.py (+ .json spec).
    #[test]
    fn every_motif_builds_in_every_shape_it_declares() {
        let dump = std::env::var("PP_MOTIF_DUMP").ok();
        let per = std::env::var("PP_MOTIF_PER")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3u64);
        let knobs = Knobs::default();
        for (mi, m) in mine().into_iter().enumerate() {
            let shapes: Vec<(usize, bool)> = [
                (D1, 1, false),
                (D2, 2, false),
                (D3, 3, false),
                (TILED, 1, true),
                (TILED2, 2, true),
            ]
            .iter()
            .filter(|s| m.dims & s.0 != 0)
            .map(|s| (s.1, s.2))
            .collect();
            for n in 0..per {
                let mut rng = sample_rng(7 + mi as u64, n);
                let (dims, tiled) = *pick(&mut rng, &shapes);
                let cat = m.categories[n as usize % m.categories.len()];
                let mut k = Kernel::new(&mut rng, &knobs, cat, dims, tiled);
                assert!(
                    (m.build)(&mut k, &mut rng),
                    "{} refused default knobs",
                    m.name
                );
                k.motifs.push(m.name);
                // a second motif of the same family, when one fits
                let fam: Vec<&Motif> = super::super::family(cat)
                    .iter()
                    .copied()
                    .filter(|o| o.fits(&k))
                    .collect();
                if n % 2 == 1 && !fam.is_empty() {
                    let o = *pick(&mut rng, &fam);
                    if (o.build)(&mut k, &mut rng) {
                        k.motifs.push(o.name);
                    }
                }
                let (src, spec) = k.finish(&mut rng, &format!("{}_{n}", m.name));
                assert!(src.contains("@wp.kernel"));
                if let Some(dir) = &dump {
                    std::fs::create_dir_all(dir).unwrap();
                    std::fs::write(format!("{dir}/{}_{n}.py", m.name), &src).unwrap();
                    std::fs::write(format!("{dir}/{}_{n}.json", m.name), &spec).unwrap();
                }
            }
        }
    }
}
