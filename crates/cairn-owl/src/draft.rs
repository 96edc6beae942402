//! Writing pages for proposals: a new class page from a proposal's fields, in the
//! page template order (docs/ontology.md) with the quality score computed, and the
//! edits an amendment
//! makes to an existing page (links added to or removed from a property, a field
//! set), leaving every other line as it was.
//!
//! Knows pages and their vocabulary; no files, no clock (the caller passes the date).

use super::entity::{key_rank, keys, RELATIONSHIPS};
use super::page::Page;
use super::quality;

/// The fields of a proposed class, as a `NoteProposal` carries them
/// (docs/ontology.md, proposals).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassDraft {
    /// The preferred term, also the page's title.
    pub preferred_term: String,
    /// The reserved term id (`AI-0851`).
    pub term_id: String,
    /// The domain prefix (`ai`).
    pub domain: String,
    /// `agent-proposed` for a proposal.
    pub status: String,
    /// Whether the page is public.
    pub public_access: bool,
    /// The date, `YYYY-MM-DD`, from the caller's clock.
    pub last_updated: String,
    /// The definition.
    pub definition: String,
    /// The class IRI (`ai:VisionTransformer`).
    pub owl_class: String,
    /// `VirtualEntity`, `PhysicalEntity`, ...
    pub physicality: String,
    /// `Process`, `Artifact`, `Concept`, ...
    pub role: String,
    /// Parents, as page names or IRIs (written as wiki links).
    pub parents: Vec<String>,
    /// 0..1.
    pub authority_score: f32,
    /// `draft`, ...
    pub maturity: String,
    /// `(relationship key, targets)`, keys among `has-part`, `requires`, `enables`,
    /// `bridges-to`, `relates-to`.
    pub relationships: Vec<(String, Vec<String>)>,
    /// Other names.
    pub alt_terms: Vec<String>,
    /// Classes it is disjoint with, as page names or IRIs (written as wiki links).
    pub disjoint_with: Vec<String>,
    /// Further axioms as `(key, value)` page lines (`owl:equivalentClass`,
    /// `owl:axiom`, ...), added with [`add_statement`].
    pub axioms: Vec<(String, String)>,
}

/// `[[a]], [[b]]`.
pub fn links(targets: &[String]) -> String {
    targets
        .iter()
        .map(|t| format!("[[{}]]", t.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ClassDraft {
    /// The page, in the page template order (docs/ontology.md): `ontology:: true`,
    /// identification, the OWL fields, `is-subclass-of`, scores, relationships in
    /// that order, alternative
    /// terms, disjoint classes. `quality-score` is computed from the page itself ([`quality::assess`]).
    pub fn to_page(&self) -> Page {
        let mut p = Page::new(self.preferred_term.trim());
        let mut push = |k: &str, v: String| {
            if !v.trim().is_empty() {
                p.push(k, v.trim());
            }
        };
        push(keys::ONTOLOGY, "true".into());
        push(keys::TERM_ID, self.term_id.clone());
        push(keys::PREFERRED_TERM, self.preferred_term.clone());
        push(keys::SOURCE_DOMAIN, self.domain.clone());
        push(keys::STATUS, self.status.clone());
        push(keys::PUBLIC_ACCESS, self.public_access.to_string());
        push(keys::LAST_UPDATED, self.last_updated.clone());
        push(keys::DEFINITION, one_line(&self.definition));
        push(keys::OWL_CLASS, self.owl_class.clone());
        push(keys::PHYSICALITY, self.physicality.clone());
        push(keys::ROLE, self.role.clone());
        push(keys::IS_SUBCLASS_OF, links(&self.parents));
        push(keys::AUTHORITY_SCORE, format!("{}", self.authority_score));
        push(keys::MATURITY, self.maturity.clone());
        for (key, _) in RELATIONSHIPS {
            let targets: Vec<String> = self
                .relationships
                .iter()
                .filter(|(k, _)| k == key)
                .flat_map(|(_, ts)| ts.iter().cloned())
                .collect();
            push(key, links(&targets));
        }
        push(keys::ALT_TERMS, self.alt_terms.join(", "));
        push(keys::DISJOINT_WITH, links(&self.disjoint_with));
        for (k, v) in &self.axioms {
            add_statement(&mut p, k, v);
        }
        let q = quality::assess(&p);
        p.set(keys::QUALITY_SCORE, &format!("{:.2}", q.score), &key_rank);
        p
    }
}

/// Prose on one line (a property value cannot span lines): every run of whitespace,
/// line breaks included, becomes one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first character of `value` that has no place in a one-line property value:
/// a line break as CommonMark reads one (LF, CR), a Unicode line break (U+0085,
/// U+2028, U+2029), or any other control character (TAB among them). `None` when the
/// value is one line.
pub fn not_one_line(value: &str) -> Option<char> {
    value
        .chars()
        .find(|&c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
}

/// The items of a comma-separated property value, as written (`[[A]]`, `ai:B`).
pub fn items(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut links, mut parens) = (0i32, 0i32);
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' if chars.peek() == Some(&'[') => {
                chars.next();
                links += 1;
                cur.push_str("[[");
            }
            ']' if chars.peek() == Some(&']') => {
                chars.next();
                links -= 1;
                cur.push_str("]]");
            }
            '(' => {
                parens += 1;
                cur.push(c);
            }
            ')' => {
                parens -= 1;
                cur.push(c);
            }
            ',' if links <= 0 && parens <= 0 => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The name an item refers to, compared as Logseq compares page names.
fn item_key(item: &str) -> String {
    let t = item.trim();
    let t = t
        .strip_prefix("[[")
        .and_then(|x| x.strip_suffix("]]"))
        .unwrap_or(t);
    t.trim().to_lowercase()
}

/// Adds `[[target]]` to a list property (creating it in template order); returns
/// false when the target was already there.
pub fn add_link(page: &mut Page, key: &str, target: &str) -> bool {
    let mut list = page.get(key).map(items).unwrap_or_default();
    if list.iter().any(|i| item_key(i) == item_key(target)) {
        return false;
    }
    list.push(format!("[[{}]]", target.trim()));
    page.set(key, &list.join(", "), &key_rank);
    true
}

/// Removes a target from a list property (the property goes when it empties);
/// returns false when it was not there.
pub fn remove_link(page: &mut Page, key: &str, target: &str) -> bool {
    let Some(value) = page.get(key) else {
        return false;
    };
    let mut list = items(value);
    let before = list.len();
    list.retain(|i| item_key(i) != item_key(target));
    if list.len() == before {
        return false;
    }
    if list.is_empty() {
        page.remove(key);
    } else {
        page.set(key, &list.join(", "), &key_rank);
    }
    true
}

/// Adds one axiom's value under `key`: a line of its own for `owl:axiom::` (one
/// axiom a line), else one more item of the property's list; false when the page
/// states it already.
pub fn add_statement(page: &mut Page, key: &str, value: &str) -> bool {
    let value = value.trim();
    if key == keys::AXIOM {
        if page
            .props
            .iter()
            .any(|p| p.key == key && p.value.trim() == value)
        {
            return false;
        }
        page.add(key, value, &key_rank);
        return true;
    }
    let mut list = page.get(key).map(items).unwrap_or_default();
    if list.iter().any(|i| i == value) {
        return false;
    }
    list.push(value.to_string());
    page.set(key, &list.join(", "), &key_rank);
    true
}

/// Sets a field in place, or inserts it where the template puts it.
pub fn set_field(page: &mut Page, key: &str, value: &str) {
    page.set(key, &one_line(value), &key_rank);
}

#[cfg(test)]
mod tests {
    use super::super::entity::read_entry;
    use super::*;

    fn draft() -> ClassDraft {
        ClassDraft {
            preferred_term: "Vision Transformer".into(),
            term_id: "AI-0851".into(),
            domain: "ai".into(),
            status: "agent-proposed".into(),
            public_access: true,
            last_updated: "2026-02-11".into(),
            definition: "A transformer over\nimage patches, one token each.".into(),
            owl_class: "ai:VisionTransformer".into(),
            physicality: "VirtualEntity".into(),
            role: "Artifact".into(),
            parents: vec!["Transformer".into(), "ai:VisionModel".into()],
            authority_score: 0.5,
            maturity: "draft".into(),
            relationships: vec![
                ("has-part".into(), vec!["Patch Embedding".into()]),
                ("requires".into(), vec!["GPU Accelerator".into()]),
            ],
            alt_terms: vec!["ViT".into()],
            disjoint_with: Vec::new(),
            axioms: Vec::new(),
        }
    }

    #[test]
    fn a_draft_follows_the_template_and_reads_back() {
        let p = draft().to_page();
        let text = p.write();
        assert_eq!(
            text,
            "- Vision Transformer\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0851\n    - preferred-term:: Vision Transformer\n    - source-domain:: ai\n    - status:: agent-proposed\n    - public-access:: true\n    - last-updated:: 2026-02-11\n    - definition:: A transformer over image patches, one token each.\n    - owl:class:: ai:VisionTransformer\n    - owl:physicality:: VirtualEntity\n    - owl:role:: Artifact\n    - is-subclass-of:: [[Transformer]], [[ai:VisionModel]]\n    - quality-score:: 0.90\n    - authority-score:: 0.5\n    - maturity:: draft\n    - has-part:: [[Patch Embedding]]\n    - requires:: [[GPU Accelerator]]\n    - alt-terms:: ViT\n"
        );
        assert_eq!(Page::parse(&text).unwrap(), p);
        assert_eq!(Page::parse(&text).unwrap().write(), text);
        let e = read_entry(&p).unwrap();
        assert_eq!(e.iri, "ai:VisionTransformer");
        assert_eq!(e.statements.len(), 4);
    }

    #[test]
    fn amendments_touch_only_their_lines() {
        let mut p = draft().to_page();
        p.tail.push("- ## Notes".into());
        assert!(add_link(&mut p, "has-part", "Position Embedding"));
        assert!(!add_link(&mut p, "has-part", "patch embedding"));
        assert!(add_link(&mut p, "enables", "Image Classification"));
        assert!(remove_link(&mut p, "requires", "GPU Accelerator"));
        assert!(!remove_link(&mut p, "requires", "GPU Accelerator"));
        set_field(
            &mut p,
            "definition",
            "A transformer that reads an image as patches.",
        );
        let text = p.write();
        assert!(text.contains("    - has-part:: [[Patch Embedding]], [[Position Embedding]]\n    - enables:: [[Image Classification]]\n    - alt-terms:: ViT\n- ## Notes\n"), "{text}");
        assert!(!text.contains("requires::"));
        assert!(text.contains("definition:: A transformer that reads an image as patches."));
    }
}
