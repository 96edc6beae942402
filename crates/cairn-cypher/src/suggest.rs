//! Nearest known names to a misspelled one, by characters, and the rule that decides
//! when the best of them is clear enough to put in its place. Works on any Unicode
//! text, empty strings included, and never panics. Knows nothing of queries.

/// Names longer than this (in characters) are not compared: the cost of an edit
/// distance grows with the product of the lengths, and no real name is this long.
const MAX_CHARS: usize = 128;
/// A candidate scoring below this is not worth showing.
const HINT_SCORE: f64 = 0.6;
/// The best candidate must score at least this to be used as a repair...
const REPAIR_SCORE: f64 = 0.8;
/// ...with an edit distance this close (normalised, 1.0 = identical)...
const REPAIR_EDIT: f64 = 0.7;
/// ...and lead the next-best candidate by at least this much.
const REPAIR_MARGIN: f64 = 0.05;
/// At most this many suggestions are returned.
const MAX_SUGGESTIONS: usize = 5;

/// What the known names say about a name the schema does not hold.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Nearest {
    /// The nearest names, best first.
    pub suggestions: Vec<String>,
    /// The name to use instead, when one is clearly meant.
    pub repair: Option<String>,
}

/// The form names are compared in: lower case, without the separators that
/// naming conventions disagree on (`has_part`, `hasPart`, `HAS-PART` are one),
/// and with `ß` as the `ss` it folds to (`Straße`, `STRASSE`).
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '_' | '-' | ' ' => {}
            'ß' | 'ẞ' => out.push_str("ss"),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// Similarity of two folded names in [0, 1]: a blend of normalised
/// Damerau-Levenshtein (which counts typos) and Jaro-Winkler (which rewards a
/// shared beginning). Returns the blend and the edit part.
fn similarity(a: &str, b: &str) -> (f64, f64) {
    let edit = strsim::normalized_damerau_levenshtein(a, b);
    let jw = strsim::jaro_winkler(a, b);
    (0.6 * edit + 0.4 * jw, edit)
}

/// Ranks `candidates` against `name`. Each candidate is a text to compare and the
/// names it stands for (an alias may stand for several labels; a name stands for
/// itself). Returns suggestions and, when one target is clearly meant, a repair:
/// first a target whose spelling differs from `name` only in case and separators,
/// else the best-scoring target if it is close and well ahead of the next.
pub fn nearest<'a, I, T>(name: &str, candidates: I) -> Nearest
where
    I: IntoIterator<Item = (&'a str, T)>,
    T: IntoIterator<Item = &'a str>,
{
    let folded = fold(name);
    let long = folded.chars().count() > MAX_CHARS;
    // Best (score, edit) per target.
    let mut scored: Vec<(&'a str, f64, f64)> = Vec::new();
    let mut same_fold: Vec<&'a str> = Vec::new();
    for (text, targets) in candidates {
        let f = fold(text);
        let exact = f == folded;
        let (score, edit) = if exact {
            (1.0, 1.0)
        } else if long || f.chars().count() > MAX_CHARS {
            continue;
        } else {
            similarity(&folded, &f)
        };
        if !exact && score < HINT_SCORE {
            continue;
        }
        for t in targets {
            if exact && !same_fold.contains(&t) {
                same_fold.push(t);
            }
            match scored.iter_mut().find(|(n, _, _)| *n == t) {
                Some(entry) => {
                    if score > entry.1 {
                        entry.1 = score;
                        entry.2 = edit;
                    }
                }
                None => scored.push((t, score, edit)),
            }
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let suggestions: Vec<String> = scored
        .iter()
        .take(MAX_SUGGESTIONS.max(same_fold.len()))
        .map(|(n, _, _)| n.to_string())
        .collect();
    let repair = if same_fold.len() == 1 {
        same_fold.first().map(|s| s.to_string())
    } else if !same_fold.is_empty() {
        None
    } else {
        match (scored.first(), scored.get(1)) {
            (Some(&(best, s, e)), second)
                if s >= REPAIR_SCORE
                    && e >= REPAIR_EDIT
                    && second.is_none_or(|&(_, s2, _)| s - s2 >= REPAIR_MARGIN) =>
            {
                Some(best.to_string())
            }
            _ => None,
        }
    };
    Nearest {
        suggestions,
        repair,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain<'a>(names: &'a [&'a str]) -> impl Iterator<Item = (&'a str, [&'a str; 1])> {
        names.iter().map(|n| (*n, [*n]))
    }

    const TYPES: &[&str] = &[
        "HAS_PART",
        "REQUIRES",
        "ENABLES",
        "BRIDGES_TO",
        "RELATES_TO",
        "SUBCLASS_OF",
        "INSTANCE_OF",
    ];

    #[test]
    fn case_and_separators_repair_first() {
        assert_eq!(
            nearest("has_part", plain(TYPES)).repair.as_deref(),
            Some("HAS_PART")
        );
        assert_eq!(
            nearest("hasPart", plain(TYPES)).repair.as_deref(),
            Some("HAS_PART")
        );
        assert_eq!(
            nearest("subclassOf", plain(TYPES)).repair.as_deref(),
            Some("SUBCLASS_OF")
        );
    }

    #[test]
    fn a_clear_typo_repairs_and_a_far_name_only_hints() {
        let n = nearest("HAS_PRT", plain(TYPES));
        assert_eq!(n.repair.as_deref(), Some("HAS_PART"));
        assert_eq!(n.suggestions.first().map(String::as_str), Some("HAS_PART"));
        let n = nearest("REQIURES", plain(TYPES));
        assert_eq!(n.repair.as_deref(), Some("REQUIRES"));
        let n = nearest("CONTAINS", plain(TYPES));
        assert_eq!(n.repair, None);
    }

    #[test]
    fn two_equally_near_names_are_not_chosen_between() {
        let n = nearest("Cat", plain(&["Bat", "Hat"]));
        assert_eq!(n.repair, None);
        let n = nearest("colour", plain(&["Colour", "COLOUR"]));
        assert_eq!(n.repair, None);
        assert_eq!(n.suggestions.len(), 2);
    }

    #[test]
    fn odd_input_never_panics() {
        for name in [
            "",
            " ",
            "é",
            "日本語",
            "\u{0}",
            "İstanbul",
            &"x".repeat(5000),
        ] {
            let _ = nearest(name, plain(&["", "É", "日本", "Istanbul", "x"]));
        }
        let n = nearest("Kategorie", plain(&["Kätegorie", "Category"]));
        assert_eq!(n.repair.as_deref(), Some("Kätegorie"));
    }
}
