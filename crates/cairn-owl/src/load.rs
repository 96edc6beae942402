//! Reading a set of pages into an [`Ontology`], in two steps: each page on its own
//! ([`read_page`]: its document, the entry its block describes and its prefix
//! lines), which needs no other page, so callers may read pages on any thread and
//! keep what they read for a later load; then the names across the set
//! ([`load_read`]). [`load_pages`] is the two in one.

use super::entity::{keys, read_entry, Entry};
use super::model::{Ontology, Problem};
use super::page::{Page, PageError};
use super::prefixes;

/// The result of loading a set of pages.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// What resolved.
    pub ontology: Ontology,
    /// Every page that parsed, with the IRI it declares (when its block read).
    pub pages: Vec<LoadedPage>,
    /// Pages or statements that were skipped, with file and line.
    pub problems: Vec<Problem>,
    /// Files that name no entity, skipped quietly: ordinary Logseq pages (without an
    /// `### OntologyBlock`) and pages holding only prefix lines (`prefixes`).
    pub skipped: Vec<String>,
}

/// A page that parsed.
#[derive(Debug, Clone)]
pub struct LoadedPage {
    /// The file as the caller named it.
    pub file: String,
    /// The document.
    pub page: Page,
    /// The entity it declares, when its block read without error.
    pub iri: Option<crate::Iri>,
}

/// One page read on its own, not yet resolved against the others.
#[derive(Debug, Clone)]
pub struct ReadPage {
    /// The file as the caller named it; problems name it when the set is loaded, so
    /// a page read under one name may be loaded under another.
    pub file: String,
    /// Its `prefix::` lines (line, value).
    decls: Vec<(usize, String)>,
    outcome: Outcome,
}

#[derive(Debug, Clone)]
enum Outcome {
    /// No entity: an ordinary Logseq page, or the prefix map's page.
    Skipped,
    /// The text does not read as a page.
    Broken(PageError),
    /// The document, and its entry or why its block does not read.
    Parsed {
        page: Page,
        entry: Result<Entry, PageError>,
    },
}

impl ReadPage {
    /// The IRI the page declares, when its block read.
    pub fn iri(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Parsed { entry: Ok(e), .. } => Some(&e.iri),
            _ => None,
        }
    }
}

/// Reads one page's text (see [`load_pages`]).
pub fn read_page(file: &str, text: &str) -> ReadPage {
    let read = |decls, outcome| ReadPage {
        file: file.to_string(),
        decls,
        outcome,
    };
    let page = match Page::parse(text) {
        Ok(p) => p,
        Err(e) if e.no_block => return read(Vec::new(), Outcome::Skipped),
        Err(e) => return read(Vec::new(), Outcome::Broken(e)),
    };
    let decls: Vec<(usize, String)> = prefixes::declared(&page)
        .map(|(l, v)| (l, v.to_string()))
        .collect();
    let names = [
        keys::OWL_CLASS,
        keys::OWL_OBJECT_PROPERTY,
        keys::OWL_INDIVIDUAL,
    ];
    if !decls.is_empty() && !page.props.iter().any(|p| names.contains(&p.key.as_str())) {
        // The prefix map's page: it names no entity, and is no error.
        return read(decls, Outcome::Skipped);
    }
    let entry = read_entry(&page);
    read(decls, Outcome::Parsed { page, entry })
}

fn problem(file: &str, e: PageError) -> Problem {
    Problem {
        file: file.into(),
        line: e.line,
        column: e.column,
        message: e.message,
    }
}

/// Resolves pages read with [`read_page`] across the set (in the order given) and
/// builds the ontology, as [`load_pages`] does.
pub fn load_read(read: Vec<ReadPage>) -> Loaded {
    let (ontology, problems) = check_read(read.iter().map(|r| (r.file.as_str(), r)));
    let mut skipped = Vec::new();
    let mut pages = Vec::with_capacity(read.len());
    for r in read {
        match r.outcome {
            Outcome::Skipped => skipped.push(r.file),
            Outcome::Broken(_) => {}
            Outcome::Parsed { page, entry } => pages.push(LoadedPage {
                iri: entry.ok().map(|e| e.iri),
                file: r.file,
                page,
            }),
        }
    }
    Loaded {
        ontology,
        pages,
        problems,
        skipped,
    }
}

/// The ontology of pages read with [`read_page`], each named by the file given
/// beside it (in place of the one it was read as), and every problem [`load_read`]
/// reports of them, the pages only borrowed: for a check that keeps them.
pub fn check_read<'a>(
    read: impl IntoIterator<Item = (&'a str, &'a ReadPage)>,
) -> (Ontology, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut entries = Vec::new();
    let mut decls = Vec::new();
    for (file, r) in read {
        decls.extend(
            r.decls
                .iter()
                .map(|(l, v)| (file.to_string(), *l, v.clone())),
        );
        match &r.outcome {
            Outcome::Skipped => {}
            Outcome::Broken(e) => problems.push(problem(file, e.clone())),
            Outcome::Parsed { entry: Ok(e), .. } => entries.push((file, e)),
            Outcome::Parsed { entry: Err(e), .. } => problems.push(problem(file, e.clone())),
        }
    }
    let (mut ontology, more) = Ontology::resolve(entries);
    problems.extend(more);
    let (map, more) = prefixes::collect(decls);
    ontology.prefixes = map;
    problems.extend(more);
    (ontology, problems)
}

/// Reads pages (`(file, text)`), resolves their names across the set and builds the
/// ontology. A page that does not parse is reported with its file and line, and the
/// rest are imported; a statement naming an unknown page is reported and skipped.
pub fn load_pages<'a>(sources: impl IntoIterator<Item = (&'a str, &'a str)>) -> Loaded {
    load_read(sources.into_iter().map(|(f, t)| read_page(f, t)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGES: [(&str, &str); 5] = [
        ("A.md", "- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - is-subclass-of:: [[B]], [[Nowhere]]\n"),
        ("B.md", "- B\n  - ### OntologyBlock\n    - owl:class:: ai:B\n"),
        ("Broken.md", "- X\n  - ### OntologyBlock\n    - owl:class:: not an iri\n"),
        ("Plain.md", "- hello\n"),
        ("Prefixes.md", "- Prefixes\n  - ### OntologyBlock\n    - prefix:: ai: <http://example.org/ai#>\n"),
    ];

    #[test]
    fn pages_read_apart_and_renamed_load_as_the_set_under_the_new_names() {
        let under = |dir: &str, f: &str| format!("{dir}/{f}");
        let texts: Vec<(String, &str)> = PAGES.iter().map(|(f, t)| (under("p", f), *t)).collect();
        let whole = load_pages(texts.iter().map(|(f, t)| (f.as_str(), *t)));
        let mut read: Vec<ReadPage> = PAGES.iter().map(|(f, t)| read_page(f, t)).collect();
        let (o, problems) = check_read(read.iter().map(|r| (r.file.as_str(), r)));
        assert_eq!(read[0].iri(), Some("ai:A"));
        assert_eq!(read[2].iri(), None);
        assert!(
            problems.iter().any(|p| p.file == "Broken.md"),
            "{problems:?}"
        );
        assert!(o.same_content(&whole.ontology));
        let names: Vec<String> = read.iter().map(|r| under("p", &r.file)).collect();
        let (o, problems) = check_read(names.iter().map(String::as_str).zip(&read));
        assert_eq!(o, whole.ontology);
        assert_eq!(problems, whole.problems);
        for r in &mut read {
            r.file = under("p", &r.file);
        }
        let apart = load_read(read);
        assert_eq!(apart.ontology, whole.ontology);
        assert_eq!(apart.problems, whole.problems);
        assert_eq!(apart.skipped, vec!["p/Plain.md", "p/Prefixes.md"]);
        assert_eq!(apart.skipped, whole.skipped);
        let files = |l: &Loaded| -> Vec<(String, Option<String>)> {
            l.pages
                .iter()
                .map(|p| (p.file.clone(), p.iri.clone()))
                .collect()
        };
        assert_eq!(files(&apart), files(&whole));
        assert_eq!(whole.ontology.prefixes.len(), 1);
    }
}
