//! Build script: the ranks of the built-in encodings (o200k_base, cl100k_base)
//! as compact tables that `src/tokens.rs` compiles in.
//!
//! tiktoken-rs embeds OpenAI's rank files and parses them into its `CoreBPE`
//! (base64 decoding, two hash maps, a sort of every token, the pattern
//! compiled): ~800 M instructions at every start of a run that counts
//! tokens. Done here once, at build time, with the same crate, the run only
//! walks a table of (rank, bytes) records.
//!
//! Table format, records in rank order: rank as u32 little-endian, the
//! token's length as one byte, the token's bytes. The special tokens (which
//! `encode_ordinary` never produces) are left out.
//!
//! Index format: the slots of an open-addressing hash table over the
//! records (a power of two, at least twice their number), each a u32
//! little-endian, 0 for a free slot, else 1 + the record's offset in the
//! table. A token's first slot is its xxh3-64 hash masked to the slot count;
//! a lookup goes on slot by slot to a free one. Built here, the run reads it
//! as compiled in, where building a hash map of the ~200,000 tokens took
//! ~20 ms at every start, while both cores waited.

use std::io::Write;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let encodings = [
        ("o200k_base", tiktoken_rs::o200k_base()),
        ("cl100k_base", tiktoken_rs::cl100k_base()),
    ];
    for (name, bpe) in encodings {
        let bpe = bpe.unwrap_or_else(|e| panic!("loading {name} from tiktoken-rs: {e}"));
        let specials = bpe.special_tokens();
        let mut table = Vec::new();
        let mut misses = 0;
        for rank in 0u32.. {
            match bpe.decode_bytes(&[rank]) {
                Ok(bytes) => {
                    if std::str::from_utf8(&bytes).is_ok_and(|s| specials.contains(s)) {
                        continue;
                    }
                    let len = u8::try_from(bytes.len())
                        .unwrap_or_else(|_| panic!("{name}: token {rank} longer than 255 bytes"));
                    table.extend_from_slice(&rank.to_le_bytes());
                    table.push(len);
                    table.extend_from_slice(&bytes);
                    misses = 0;
                }
                // Gaps (o200k's special tokens sit past the ordinary ranks):
                // stop after a long run of ranks that decode to nothing.
                Err(_) => {
                    misses += 1;
                    if misses > 4096 {
                        break;
                    }
                }
            }
        }
        let path = Path::new(&out).join(format!("{name}.ranks"));
        let mut f = std::fs::File::create(&path).expect("create the ranks table");
        f.write_all(&table).expect("write the ranks table");
        let path = Path::new(&out).join(format!("{name}.index"));
        let mut f = std::fs::File::create(&path).expect("create the ranks index");
        f.write_all(&index(&table)).expect("write the ranks index");
    }
}

/// The index of a table (format above).
fn index(table: &[u8]) -> Vec<u8> {
    let mut offsets = Vec::new();
    let mut i = 0;
    while i < table.len() {
        offsets.push(i);
        i += 5 + table[i + 4] as usize;
    }
    let slots = (offsets.len() * 2).next_power_of_two();
    let mut index = vec![0u32; slots];
    for at in offsets {
        let bytes = &table[at + 5..at + 5 + table[at + 4] as usize];
        let mut k = xxhash_rust::xxh3::xxh3_64(bytes) as usize & (slots - 1);
        while index[k] != 0 {
            k = (k + 1) & (slots - 1);
        }
        index[k] = u32::try_from(at + 1).expect("a table under 4 GiB");
    }
    index.iter().flat_map(|v| v.to_le_bytes()).collect()
}
