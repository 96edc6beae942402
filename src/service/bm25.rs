//! The ranking core's lexical list for rows that have no full-text index (tasks,
//! features, projects, ontology classes): BM25 computed in memory over the rows a
//! search was given, with the words of the FTS indexes' queries (`ranking::fts_tokens`
//! with prefixes: stop words dropped, each word a stemmed prefix) and their weights
//! (a name match four times a body match), AND first, OR when no row holds every
//! word. What it answers goes to `ranking::rank` as a precomputed lexical list, so
//! these rows are fused exactly as the indexed ones are.

use crate::service::ranking::{query_terms, Match};

/// BM25's term-frequency saturation and length normalisation (FTS5's defaults).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A name column's weight against a body's, as in `store::semantic::lexical`.
const NAME_WEIGHT: f64 = 4.0;

/// One row's text: its name (title, preferred term) and its body.
pub struct Doc<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub body: &'a str,
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The rows matching the query's words, best first (ties by input order), with
/// their BM25 (bigger is better), and whether they hold every word.
pub fn rank(docs: &[Doc<'_>], query: &str, limit: usize) -> (Vec<(String, f64)>, Match) {
    let terms = query_terms(query);
    if terms.is_empty() || docs.is_empty() {
        return (Vec::new(), Match::Some);
    }
    let cols: Vec<[Vec<String>; 2]> = docs
        .iter()
        .map(|d| [words(d.name), words(d.body)])
        .collect();
    let n = docs.len() as f64;
    let avg = |c: usize| {
        let total: usize = cols.iter().map(|x| x[c].len()).sum();
        (total as f64 / n).max(1.0)
    };
    let avgs = [avg(0), avg(1)];
    // tf[row][term][column]
    let tf: Vec<Vec<[usize; 2]>> = cols
        .iter()
        .map(|x| {
            terms
                .iter()
                .map(|t| {
                    let count =
                        |c: usize| x[c].iter().filter(|w| w.starts_with(t.as_str())).count();
                    [count(0), count(1)]
                })
                .collect()
        })
        .collect();
    let idf: Vec<f64> = (0..terms.len())
        .map(|t| {
            let df = tf.iter().filter(|r| r[t][0] + r[t][1] > 0).count() as f64;
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    let score = |r: usize| -> f64 {
        let mut s = 0.0;
        for (t, idf_t) in idf.iter().enumerate() {
            for (c, weight) in [NAME_WEIGHT, 1.0].into_iter().enumerate() {
                let f = tf[r][t][c] as f64;
                if f > 0.0 {
                    let len = cols[r][c].len() as f64;
                    s += weight * idf_t * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avgs[c]));
                }
            }
        }
        s
    };
    let holds = |r: usize, t: usize| tf[r][t][0] + tf[r][t][1] > 0;
    let all: Vec<usize> = (0..docs.len())
        .filter(|&r| (0..terms.len()).all(|t| holds(r, t)))
        .collect();
    let (rows, how) = if !all.is_empty() || terms.len() == 1 {
        (all, Match::All)
    } else {
        let some = (0..docs.len())
            .filter(|&r| (0..terms.len()).any(|t| holds(r, t)))
            .collect();
        (some, Match::Some)
    };
    let mut scored: Vec<(usize, f64)> = rows.into_iter().map(|r| (r, score(r))).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(limit);
    (
        scored
            .into_iter()
            .map(|(r, s)| (docs[r].id.to_string(), s))
            .collect(),
        how,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(id: &'a str, name: &'a str, body: &'a str) -> Doc<'a> {
        Doc { id, name, body }
    }

    #[test]
    fn every_word_first_then_some_and_names_weigh_more() {
        let docs = [
            doc(
                "a",
                "Retry failed uploads",
                "the uploader gives up after one error",
            ),
            doc(
                "b",
                "Upload progress bar",
                "show how much of an upload is done",
            ),
            doc("c", "Docs", "how retries of uploads are configured"),
            doc("d", "Unrelated", "nothing here"),
        ];
        let (hits, how) = rank(&docs, "retries uploads", 10);
        assert_eq!(how, Match::All);
        let ids: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
        // "retries" is the stem "retr", a prefix of "retry" and "retries"; the name
        // match weighs more than the body's.
        assert_eq!(ids, ["a", "c"]);
        let (hits, how) = rank(&docs, "upload nothing", 10);
        assert_eq!(how, Match::Some);
        assert_eq!(hits.len(), 4);
        assert!(rank(&docs, "the of", 10).0.is_empty());
    }
}
