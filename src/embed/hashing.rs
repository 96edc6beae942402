//! The built-in fallback embedder: feature hashing of words, word pairs and character
//! trigrams into [`DIM`] signed buckets, then L2 normalisation.
//!
//! It runs when the model is not installed, so Cairn works offline with nothing to
//! download. It captures shared vocabulary (and, through trigrams, shared word stems),
//! not meaning: paraphrases with different words score low. Everything here is integer
//! hashing (FNV-1a, not std's randomly seeded hasher) and f32 sums in a fixed order, so a
//! text gets the same vector on every run and every platform.

use super::{Embedder, Embedding, Error, DIM};

/// Stored with every vector this embedder makes; bump it when the recipe changes so
/// old vectors are re-embedded.
pub const ID: &str = "hashing-v1";

const WORD: u64 = 1;
const PAIR: u64 = 2;
const TRIGRAM: u64 = 3;
const WORD_WEIGHT: f32 = 1.0;
const PAIR_WEIGHT: f32 = 0.5;
const TRIGRAM_WEIGHT: f32 = 0.25;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `bytes`, started from a seed-dependent basis so the feature kinds
/// (words, pairs, trigrams) land in independent buckets.
pub fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    extend(FNV_OFFSET ^ seed.wrapping_mul(FNV_PRIME), bytes)
}

fn extend(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// Splits a text into lower-case words: on anything not alphanumeric, and inside
/// identifiers at camelCase boundaries, so `parseConfigFile` and `parse_config_file`
/// share their words.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase() || c.is_numeric();
            cur.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn add(v: &mut [f32], h: u64, weight: f32) {
    // The low bits pick the bucket, the top bit the sign: signed hashing keeps
    // collisions from adding up in expectation.
    let i = (h % DIM as u64) as usize;
    if h >> 63 == 0 {
        v[i] += weight;
    } else {
        v[i] -= weight;
    }
}

/// The hashed, normalised vector of one text.
pub fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    let ws = words(text);
    for (i, w) in ws.iter().enumerate() {
        add(&mut v, fnv1a(WORD, w.as_bytes()), WORD_WEIGHT);
        if let Some(next) = ws.get(i + 1) {
            let h = extend(fnv1a(PAIR, w.as_bytes()), b" ");
            add(&mut v, extend(h, next.as_bytes()), PAIR_WEIGHT);
        }
        // Trigrams of the word with boundary marks, over chars (not bytes) so that a
        // multi-byte letter is one unit.
        let chars: Vec<char> = std::iter::once('#')
            .chain(w.chars())
            .chain(std::iter::once('#'))
            .collect();
        if chars.len() > 3 {
            let mut buf = [0u8; 12];
            for t in chars.windows(3) {
                let mut n = 0;
                for c in t {
                    n += c.encode_utf8(&mut buf[n..]).len();
                }
                add(&mut v, fnv1a(TRIGRAM, &buf[..n]), TRIGRAM_WEIGHT);
            }
        }
    }
    super::vector::normalize(&mut v);
    v
}

/// The hashing embedder; it has no window, so nothing is ever truncated.
pub struct Hashing;

impl Embedder for Hashing {
    fn id(&self) -> &'static str {
        ID
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Embedding>, Error> {
        Ok(texts
            .iter()
            .map(|t| Embedding {
                vector: vector(t),
                truncated: false,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::vector::dot;

    #[test]
    fn words_split_identifiers() {
        assert_eq!(words("parseConfigFile"), ["parse", "config", "file"]);
        assert_eq!(
            words("parse_config-file v2"),
            ["parse", "config", "file", "v2"]
        );
        assert_eq!(words("HTTPServer Élan"), ["httpserver", "élan"]);
    }

    #[test]
    fn vectors_are_normalised_and_deterministic() {
        let a = vector("Validate the session token before each request");
        assert_eq!(a.len(), DIM);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert_eq!(a, vector("Validate the session token before each request"));
        // Pinned values: a change here changes every stored vector, so it must come
        // with a new ID.
        let nz: Vec<(usize, f32)> = a
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(i, x)| (i, *x))
            .take(3)
            .collect();
        let signature: f32 = a.iter().enumerate().map(|(i, x)| i as f32 * x).sum();
        assert_eq!(
            format!("{nz:?} {signature:.3}"),
            "[(9, 0.073323555), (45, 0.073323555), (56, 0.073323555)] 362.512"
        );
    }

    #[test]
    fn shared_words_score_higher_than_unrelated() {
        let a = vector("parse the configuration file");
        let b = vector("parseConfigFile reads the configuration");
        let c = vector("quarterly revenue grew by ten percent");
        assert!(dot(&a, &b) > dot(&a, &c) + 0.2);
    }

    #[test]
    fn empty_text_is_the_zero_vector() {
        let v = vector(" -- ");
        assert!(v.iter().all(|x| *x == 0.0));
    }
}
