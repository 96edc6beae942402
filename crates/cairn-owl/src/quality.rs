//! The quality score of a class page: which fields of three tiers it fills, and a
//! 0..1 score from them, used to refuse a proposal below `min_proposal_quality` with
//! what it lacks.
//!
//! Tiers (docs/ontology.md, quality tiers; tier 1's list was given, tiers 2 and 3 are
//! Cairn's choice, documented here):
//!
//! - Tier 1, required (weight 0.6): `term-id` (shaped `AI-0851`), `preferred-term`,
//!   `source-domain`, `status`, `last-updated` (a date `YYYY-MM-DD`), `definition`,
//!   `owl:class` (an IRI), `owl:physicality`, `owl:role`, and a place in the hierarchy
//!   (`is-subclass-of`, or `owl:subClassOf` / `owl:equivalentClass`).
//! - Tier 2, recommended (weight 0.3): `public-access`, `alt-terms`, `maturity`,
//!   `authority-score` (a number in 0..1), and at least one relationship
//!   (`has-part`, `requires`, `enables`, `bridges-to` or `relates-to`).
//! - Tier 3, enriching (weight 0.1): `source` (where the definition comes from),
//!   `version`, `example`, and a cross-domain link (`bridges-to`).
//!
//! The definition counts as filled when it has substance: at least
//! [`DEFINITION_WORDS`] words, half of them not the term's own (`x`, or the term
//! repeated, does not count); a proposal whose definition lacks it is refused
//! whatever it scores.
//!
//! The score is the weighted sum of the fraction filled in each tier, so a page with
//! every required field and nothing else scores 0.6 (above the default
//! `min_proposal_quality` of 0.5), and one missing two required fields of ten scores
//! at most 0.88.
//! `quality-score` itself is not counted: it is what this computes.
//!
//! Knows pages only.

use super::entity::keys;
use super::expr::looks_like_iri;
use super::page::Page;
use std::fmt;

/// A score as the decimal it prints as (`0.6`, not `0.6000000238418579`, the f32's
/// exact value widened): what is stored and answered.
pub fn decimal(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// Weights of tiers 1, 2 and 3.
pub const WEIGHTS: [f32; 3] = [0.6, 0.3, 0.1];

/// One tier's coverage.
#[derive(Debug, Clone, PartialEq)]
pub struct TierReport {
    /// 1, 2 or 3.
    pub tier: u8,
    /// Fields filled.
    pub present: usize,
    /// Fields in the tier.
    pub total: usize,
    /// What is missing or malformed (with the expected shape when malformed).
    pub missing: Vec<String>,
}

/// A page's quality.
#[derive(Debug, Clone, PartialEq)]
pub struct QualityReport {
    /// 0..1, two decimals.
    pub score: f32,
    /// Tiers 1, 2, 3.
    pub tiers: [TierReport; 3],
}

/// A proposal refused for its quality.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The page's score.
    pub score: f32,
    /// The minimum it had to reach.
    pub min: f32,
    /// `(tier, field)` for every missing field.
    pub missing: Vec<(u8, String)>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.score + f32::EPSILON >= self.min {
            write!(
                f,
                "quality {:.2} reaches the minimum {:.2} but the definition lacks substance; missing",
                self.score, self.min
            )?;
        } else {
            write!(
                f,
                "quality {:.2} is below the minimum {:.2}; missing",
                self.score, self.min
            )?;
        }
        for t in 1..=3u8 {
            let fields: Vec<&str> = self
                .missing
                .iter()
                .filter(|(k, _)| *k == t)
                .map(|(_, s)| s.as_str())
                .collect();
            if !fields.is_empty() {
                write!(f, " tier {t}: {};", fields.join(", "))?;
            }
        }
        Ok(())
    }
}

impl QualityReport {
    /// The pull request body's "Tier Coverage" line: `10/10 · 3/5 · 1/4`.
    pub fn coverage(&self) -> String {
        let t: Vec<String> = self
            .tiers
            .iter()
            .map(|t| format!("{}/{}", t.present, t.total))
            .collect();
        t.join(" · ")
    }

    /// Refuses a score below `min`, naming what is missing.
    pub fn check(&self, min: f32) -> Result<(), Refusal> {
        // A definition without substance refuses whatever the other fields score.
        let thin = self.tiers[0].missing.iter().any(|m| m == THIN);
        if self.score + f32::EPSILON >= min && !thin {
            return Ok(());
        }
        let missing = self
            .tiers
            .iter()
            .flat_map(|t| t.missing.iter().map(move |m| (t.tier, m.clone())))
            .collect();
        Err(Refusal {
            score: self.score,
            min,
            missing,
        })
    }
}

fn filled(p: &Page, key: &str) -> bool {
    p.props
        .iter()
        .any(|x| x.key == key && !x.value.trim().is_empty())
}

fn term_id_ok(v: &str) -> bool {
    match v.split_once('-') {
        Some((d, n)) => {
            !d.is_empty()
                && d.chars().all(|c| c.is_ascii_uppercase())
                && n.len() == 4
                && n.chars().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

fn date_ok(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Words a definition needs at least: a genus and what sets the class apart.
pub const DEFINITION_WORDS: usize = 6;

/// What a definition's substance lacks, as shown in a refusal.
const THIN: &str =
    "definition (at least 6 words saying what it is and how it differs, not the term again)";

/// The words of a text, lower-cased, without punctuation.
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A definition has substance: enough words, and more than the term's own.
fn definition_check(p: &Page) -> Result<(), String> {
    let Some(d) = p
        .get(keys::DEFINITION)
        .map(str::trim)
        .filter(|v| !v.is_empty())
    else {
        return Err(keys::DEFINITION.to_string());
    };
    let term = words(p.get(keys::PREFERRED_TERM).unwrap_or(""));
    let own: Vec<String> = words(d).into_iter().filter(|w| !term.contains(w)).collect();
    if words(d).len() < DEFINITION_WORDS || own.len() < DEFINITION_WORDS / 2 {
        return Err(THIN.to_string());
    }
    Ok(())
}

/// A field check: name shown when missing, and whether the page fills it.
type Check = (&'static str, Box<dyn Fn(&Page) -> Result<(), String>>);

fn key(k: &'static str) -> Check {
    (
        k,
        Box::new(move |p: &Page| {
            if filled(p, k) {
                Ok(())
            } else {
                Err(k.to_string())
            }
        }),
    )
}

fn shaped(k: &'static str, ok: fn(&str) -> bool, shape: &'static str) -> Check {
    (
        k,
        Box::new(
            move |p: &Page| match p.get(k).map(str::trim).filter(|v| !v.is_empty()) {
                None => Err(k.to_string()),
                Some(v) if ok(v) => Ok(()),
                Some(_) => Err(format!("{k} (expected {shape})")),
            },
        ),
    )
}

fn any_of(name: &'static str, ks: &'static [&'static str]) -> Check {
    (
        name,
        Box::new(move |p: &Page| {
            if ks.iter().any(|k| filled(p, k)) {
                Ok(())
            } else {
                Err(name.to_string())
            }
        }),
    )
}

fn tiers() -> [Vec<Check>; 3] {
    use keys::*;
    [
        vec![
            shaped(TERM_ID, term_id_ok, "like AI-0851"),
            key(PREFERRED_TERM),
            key(SOURCE_DOMAIN),
            key(STATUS),
            shaped(LAST_UPDATED, date_ok, "a date like 2026-02-11"),
            (DEFINITION, Box::new(definition_check)),
            shaped(
                OWL_CLASS,
                looks_like_iri,
                "an IRI like ai:VisionTransformer",
            ),
            key(PHYSICALITY),
            key(ROLE),
            any_of(
                "is-subclass-of",
                &[IS_SUBCLASS_OF, SUB_CLASS_OF, EQUIVALENT_CLASS],
            ),
        ],
        vec![
            key(PUBLIC_ACCESS),
            key(ALT_TERMS),
            key(MATURITY),
            shaped(
                AUTHORITY_SCORE,
                |v| v.parse::<f32>().is_ok_and(|x| (0.0..=1.0).contains(&x)),
                "a number in 0..1",
            ),
            any_of(
                "a relationship (has-part, requires, enables, bridges-to or relates-to)",
                &[
                    "has-part",
                    "requires",
                    "enables",
                    "bridges-to",
                    "relates-to",
                ],
            ),
        ],
        vec![
            key("source"),
            key("version"),
            key("example"),
            any_of("bridges-to", &["bridges-to"]),
        ],
    ]
}

fn tier(n: u8, checks: &[Check], page: &Page) -> TierReport {
    let missing: Vec<String> = checks
        .iter()
        .filter_map(|(_, check)| check(page).err())
        .collect();
    TierReport {
        tier: n,
        present: checks.len() - missing.len(),
        total: checks.len(),
        missing,
    }
}

/// Scores a class page.
pub fn assess(page: &Page) -> QualityReport {
    let [t1, t2, t3] = tiers();
    let tiers = [tier(1, &t1, page), tier(2, &t2, page), tier(3, &t3, page)];
    let score: f32 = tiers
        .iter()
        .zip(WEIGHTS)
        .map(|(t, w)| w * t.present as f32 / t.total as f32)
        .sum();
    QualityReport {
        score: (score * 100.0).round() / 100.0,
        tiers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL_TIER_1: &str = "- Vision Transformer\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0851\n    - preferred-term:: Vision Transformer\n    - source-domain:: ai\n    - status:: agent-proposed\n    - last-updated:: 2026-02-11\n    - definition:: A transformer applied to sequences of image patches.\n    - owl:class:: ai:VisionTransformer\n    - owl:physicality:: VirtualEntity\n    - owl:role:: Artifact\n    - is-subclass-of:: [[Transformer]]\n";

    #[test]
    fn tier_one_alone_scores_point_six() {
        let p = Page::parse(FULL_TIER_1).unwrap();
        let q = assess(&p);
        assert_eq!(q.score, 0.6);
        assert_eq!(q.coverage(), "10/10 · 0/5 · 0/4");
        assert!(q.check(0.5).is_ok());
        let r = q.check(0.7).unwrap_err();
        assert!(r.missing.iter().all(|(t, _)| *t > 1));
        assert!(
            r.to_string().contains("tier 2: public-access, alt-terms"),
            "{r}"
        );
    }

    #[test]
    fn missing_and_malformed_fields_are_named() {
        let text = FULL_TIER_1
            .replace("AI-0851", "ai-851")
            .replace("    - owl:role:: Artifact\n", "")
            .replace("2026-02-11", "yesterday");
        let mut p = Page::parse(&text).unwrap();
        p.push("alt-terms", "ViT");
        p.push("has-part", "[[Patch Embedding]]");
        p.push("authority-score", "1.5");
        let q = assess(&p);
        assert_eq!(
            q.tiers[0].missing,
            vec![
                "term-id (expected like AI-0851)",
                "last-updated (expected a date like 2026-02-11)",
                "owl:role"
            ]
        );
        assert_eq!(q.tiers[1].present, 2);
        assert_eq!(
            q.score,
            ((0.6 * 7.0 / 10.0 + 0.3 * 2.0 / 5.0) * 100.0f32).round() / 100.0
        );
        assert_eq!(q.score, 0.54);
        let r = q.check(0.6).unwrap_err();
        assert!(
            r.to_string()
                .starts_with("quality 0.54 is below the minimum 0.60; missing tier 1: term-id"),
            "{r}"
        );
    }

    #[test]
    fn everything_scores_one() {
        let mut p = Page::parse(FULL_TIER_1).unwrap();
        for (k, v) in [
            ("public-access", "true"),
            ("alt-terms", "ViT"),
            ("maturity", "draft"),
            ("authority-score", "0.5"),
            ("bridges-to", "[[Image]]"),
            ("source", "Dosovitskiy et al. 2020"),
            ("version", "1"),
            ("example", "ViT-B/16"),
        ] {
            p.push(k, v);
        }
        assert_eq!(assess(&p).score, 1.0);
    }
}
