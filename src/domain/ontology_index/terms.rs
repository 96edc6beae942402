//! Keyword matching for discovery's first step (docs/ontology.md, discovery): the
//! query cut into stems, matched to classes by their terms. Every class's
//! terms (its preferred term, its alternative terms, its local name split at case
//! changes) are cut into stems and kept in one sorted inverted index, so a query
//! costs a binary search per stem, not a scan of the classes.
//!
//! A class's keyword match is the best over its terms of: the share of the query's
//! stems found in the term (a stem matching a longer one as its prefix counts 0.7),
//! times 0.5 + 0.5 × the share of the term those stems cover. A query equal to a
//! term, an IRI or a term id scores 1; "transformer" scores 1 for *Transformer* and
//! 0.75 for *Vision Transformer*.

use std::collections::HashMap;

use crate::domain::ontology::entity::keys;
use crate::domain::ontology::model::local_name;
use crate::domain::ontology::{EntityKind, Ontology};

/// A prefix match's weight against an exact stem match.
const PREFIX_WEIGHT: f32 = 0.7;
/// Stems shorter than this match only exactly.
const PREFIX_MIN: usize = 4;

/// Words that say nothing about which class is meant.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "into", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "what", "which", "with",
];

/// Splits text into lower-case word stems: at non-alphanumerics and at case changes
/// (`VisionTransformer` → `vision`, `transformer`), stop words dropped, plurals cut
/// (`transformers` → `transformer`, `ontologies` → `ontology`).
pub fn stems(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if c.is_alphanumeric() {
            let boundary = c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase());
            if boundary && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev = Some(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
        .into_iter()
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

fn stem(w: &str) -> String {
    let n = w.chars().count();
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..w.len() - 3]);
    }
    if n > 4
        && (w.ends_with("sses") || w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes"))
    {
        return w[..w.len() - 2].to_string();
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        return w[..w.len() - 1].to_string();
    }
    w.to_string()
}

/// One class's terms: its IRI and how many stems each term has.
struct ClassTerms {
    iri: String,
    term_len: Vec<u16>,
}

/// The inverted index of every class's terms.
pub struct Terms {
    classes: Vec<ClassTerms>,
    /// (stem, postings (class, term)), sorted by stem.
    index: Vec<(String, Vec<(u32, u16)>)>,
    /// Lower-cased IRIs, term ids and whole terms (stems joined) → class.
    exact: HashMap<String, u32>,
}

impl Terms {
    /// The index of an ontology's classes.
    pub fn build(o: &Ontology) -> Terms {
        let mut classes = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, u16)>> = HashMap::new();
        let mut exact: HashMap<String, u32> = HashMap::new();
        for (iri, e) in &o.entities {
            if e.kind != EntityKind::Class {
                continue;
            }
            let c = classes.len() as u32;
            let mut texts: Vec<String> = Vec::new();
            if let Some(t) = e.meta.preferred_term() {
                texts.push(t.to_string());
            }
            texts.extend(e.meta.alt_terms());
            if let Some(l) = local_name(iri) {
                texts.push(l);
            }
            exact.entry(iri.to_lowercase()).or_insert(c);
            if let Some(t) = e.meta.get(keys::TERM_ID) {
                exact.entry(t.trim().to_lowercase()).or_insert(c);
            }
            let mut term_len = Vec::new();
            let mut seen: Vec<Vec<String>> = Vec::new();
            for t in texts {
                let s = stems(&t);
                if s.is_empty() || seen.contains(&s) || term_len.len() >= u16::MAX as usize {
                    continue;
                }
                let k = term_len.len() as u16;
                term_len.push(s.len().min(u16::MAX as usize) as u16);
                exact.entry(s.join(" ")).or_insert(c);
                for w in &s {
                    let list = postings.entry(w.clone()).or_default();
                    if list.last() != Some(&(c, k)) {
                        list.push((c, k));
                    }
                }
                seen.push(s);
            }
            classes.push(ClassTerms {
                iri: iri.clone(),
                term_len,
            });
        }
        let mut index: Vec<(String, Vec<(u32, u16)>)> = postings.into_iter().collect();
        index.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Terms {
            classes,
            index,
            exact,
        }
    }

    /// Number of classes indexed.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// The classes the query's words match, with their keyword match in 0..1, best
    /// first (ties by IRI), at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(&str, f32)> {
        let q = query.trim().to_lowercase();
        let qs = {
            let mut v = stems(query);
            v.sort();
            v.dedup();
            v
        };
        let mut best: HashMap<u32, f32> = HashMap::new();
        let whole = [q.clone(), stems(query).join(" ")];
        for w in &whole {
            if let Some(&c) = self.exact.get(w) {
                best.insert(c, 1.0);
            }
        }
        if !qs.is_empty() {
            // (class, term) → (weight of query stems matched, how many matched)
            let mut acc: HashMap<(u32, u16), (f32, u16)> = HashMap::new();
            for s in &qs {
                let mut this: HashMap<(u32, u16), f32> = HashMap::new();
                let start = self.index.partition_point(|(k, _)| k.as_str() < s.as_str());
                for (k, list) in &self.index[start..] {
                    let w = if k == s {
                        1.0
                    } else if s.chars().count() >= PREFIX_MIN && k.starts_with(s.as_str()) {
                        PREFIX_WEIGHT
                    } else {
                        break;
                    };
                    for &p in list {
                        let e = this.entry(p).or_insert(0.0);
                        *e = e.max(w);
                    }
                }
                for (p, w) in this {
                    let e = acc.entry(p).or_insert((0.0, 0));
                    e.0 += w;
                    e.1 += 1;
                }
            }
            for ((c, t), (w, n)) in acc {
                let len = self.classes[c as usize]
                    .term_len
                    .get(t as usize)
                    .copied()
                    .unwrap_or(1)
                    .max(1);
                let covered = (f32::from(n) / f32::from(len)).min(1.0);
                let score = (w / qs.len() as f32) * (0.5 + 0.5 * covered);
                let e = best.entry(c).or_insert(0.0);
                *e = e.max(score);
            }
        }
        let mut out: Vec<(&str, f32)> = best
            .into_iter()
            .map(|(c, s)| (self.classes[c as usize].iri.as_str(), s.min(1.0)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out.truncate(limit);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_split_case_and_cut_plurals() {
        assert_eq!(
            stems("VisionTransformers of the Ontologies"),
            vec!["vision", "transformer", "ontology"]
        );
        assert_eq!(
            stems("Self-Attention, processes"),
            vec!["self", "attention", "process"]
        );
        assert_eq!(stems("GPT-4 über café"), vec!["gpt", "4", "über", "café"]);
        assert!(stems("the of !!").is_empty());
    }
}
