//! OWL functional syntax in and out, for the tools ontologists use (Protégé, ROBOT,
//! ELK).
//!
//! Export writes the synced ontology as one OFN document. Import reads a document
//! (what lies outside the EL subset is reported with its line, not dropped
//! silently), turns it into pages (a new page per new entity; what the document says
//! of an entity that has a page already is added to that page, whose other lines
//! stay), checks the
//! whole ontology with them, and commits them as a proposal (operation `import`) on
//! its own branch: like any change to the pages, an import is reviewed before it
//! reaches the base branch, and the next sync after the merge imports its rows.

use std::collections::HashMap;
use std::time::Instant;

use super::propose::{compare, problems_error, AgentContext, Change, Checked, Proposed};
use super::stage::commit;
use super::{served, Served};
use crate::domain::ontology::draft;
use crate::domain::ontology::entity::{key_rank, keys, read_entry};
use crate::domain::ontology::model::load_pages;
use crate::domain::ontology::ofn::{read_ofn, write_ofn};
use crate::domain::ontology::page::title_from_file;
use crate::domain::ontology::{classify, EntityKind, Page, Problem};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::ontology as db;

/// The export: the document and what it holds.
pub struct Exported {
    pub ofn: String,
    pub classes: usize,
    pub properties: usize,
    pub individuals: usize,
    pub axioms: usize,
}

pub async fn export(app: &App, project_id: &str) -> Result<Exported> {
    let (_, s) = served(app, project_id).await?;
    blocking("writing the OFN document", move || {
        let o = &s.index.ontology;
        Ok(Exported {
            ofn: write_ofn(o),
            classes: o.iris(EntityKind::Class).count(),
            properties: o.iris(EntityKind::ObjectProperty).count(),
            individuals: o.iris(EntityKind::Individual).count(),
            axioms: o.axioms.len(),
        })
    })
    .await
}

/// Runs `f` on the blocking pool: parsing, merging and classifying a document take
/// time in proportion to it, and must not hold up the other sessions' calls.
async fn blocking<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("{what}: {e}")))?
}

/// An import staged as a proposal.
pub struct Imported {
    pub proposed: Proposed,
    /// Constructs outside the EL subset and other skipped parts, with their line.
    pub skipped: Vec<Problem>,
    pub new_pages: usize,
    pub updated_pages: usize,
}

/// Keys whose values are comma-separated lists: statements, and alternative terms.
const LISTS: [&str; 16] = [
    keys::ALT_TERMS,
    keys::IS_SUBCLASS_OF,
    "has-part",
    "requires",
    "enables",
    "bridges-to",
    "relates-to",
    keys::SUB_CLASS_OF,
    keys::EQUIVALENT_CLASS,
    keys::DISJOINT_WITH,
    keys::SUB_PROPERTY_OF,
    keys::DOMAIN,
    keys::RANGE,
    keys::PROPERTY_CHAIN,
    keys::RDF_TYPE,
    keys::FACTS,
];

/// Adds to an existing page what a generated page of the same entity says: list
/// items it lacks, axioms (one per line) it lacks, flags, and the document's value of
/// every other field. Answers whether the page changed.
fn merge(page: &mut Page, from: &Page) -> bool {
    let before = page.write();
    for p in &from.props {
        let k = p.key.as_str();
        if [
            keys::ONTOLOGY,
            keys::OWL_CLASS,
            keys::OWL_OBJECT_PROPERTY,
            keys::OWL_INDIVIDUAL,
        ]
        .contains(&k)
        {
            continue;
        }
        if LISTS.contains(&k) {
            let mut have = page.get(k).map(draft::items).unwrap_or_default();
            for item in draft::items(&p.value) {
                if !have.iter().any(|h| h.eq_ignore_ascii_case(&item)) {
                    have.push(item);
                }
            }
            page.set(k, &have.join(", "), &key_rank);
        } else if k == keys::AXIOM {
            if !page.props.iter().any(|x| x.key == k && x.value == p.value) {
                page.push(k, &p.value);
            }
        } else if page.get(k) != Some(p.value.as_str()) {
            page.set(k, &p.value, &key_rank);
        }
    }
    page.write() != before
}

/// Rows of the report's table at most; the rest is counted.
const AFFECTED_ROWS: usize = 50;

/// What a document read from OFN becomes before the repository's pages are looked
/// at: the pages it generates (read back as the document) and what it skipped.
struct Read {
    generated: Vec<(String, Page)>,
    titles: Vec<(String, String)>,
    skipped: Vec<Problem>,
}

/// Reads the document and checks that its pages read back as it (the round trip
/// every page Cairn writes keeps).
fn read_document(text: &str, file: &str, parameter: &'static str) -> Result<Read> {
    let r = read_ofn(text, file);
    if r.ontology.entities.is_empty() {
        // What stopped the reading first, when something did.
        let mut ps = r.problems.clone();
        ps.push(Problem {
            file: file.into(),
            line: 0,
            column: 0,
            message: "the document declares no class, property or individual Cairn can import"
                .into(),
        });
        return Err(problems_error(parameter, ps));
    }
    let generated = r.ontology.to_pages();
    let texts: Vec<(String, String)> = generated
        .iter()
        .map(|(f, p)| (f.clone(), p.write()))
        .collect();
    let back = load_pages(texts.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    if !back.problems.is_empty() {
        // What the document says that a page cannot hold is the document's to fix.
        let mut ps = back.problems;
        ps.insert(
            0,
            Problem {
                file: file.into(),
                line: 0,
                column: 0,
                message: format!("the pages made from {file} do not read back as the document; a literal or an IRI holding a line break cannot become a page property"),
            },
        );
        return Err(problems_error(parameter, ps));
    }
    if !back.ontology.same_content(&r.ontology) {
        return Err(Error::validation(
            parameter,
            format!("the pages made from {file} do not read back as the document: they state other axioms"),
        ));
    }
    Ok(Read {
        generated,
        titles: r.ontology.page_titles().into_iter().collect(),
        skipped: r.problems,
    })
}

/// The import's pages merged into the repository's, checked against the whole
/// ontology classified afresh.
struct Merged {
    files: Vec<(String, Page)>,
    before: HashMap<String, Option<String>>,
    affected: Vec<(String, String)>,
    new_pages: usize,
    updated_pages: usize,
    checked: Checked,
}

/// Merges the generated pages into the stored ones (`pages_dir` for new ones) and
/// classifies the result.
fn merge_and_check(
    s: &Served,
    pages_dir: &str,
    read: Read,
    stored: HashMap<String, String>,
    file: &str,
    parameter: &'static str,
) -> Result<Merged> {
    let ix = &s.index;
    let lower: HashMap<String, &String> = stored.keys().map(|k| (k.to_lowercase(), k)).collect();
    // Links name pages: an entity the repository has already is linked by its page's
    // title there, not by the title the document alone would give it.
    let renames: Vec<(String, String)> = read
        .titles
        .iter()
        .filter_map(|(iri, t)| {
            let at = title_from_file(ix.page_of(iri)?);
            (at != *t).then(|| (format!("[[{t}]]"), format!("[[{at}]]")))
        })
        .collect();
    let mut files: Vec<(String, Page)> = Vec::new();
    let mut before: HashMap<String, Option<String>> = HashMap::new();
    let mut affected: Vec<(String, String)> = Vec::new();
    let mut clashes: Vec<Problem> = Vec::new();
    let (mut new_pages, mut updated_pages) = (0, 0);
    for (fname, mut page) in read.generated {
        for p in &mut page.props {
            for (from, to) in &renames {
                if p.value.contains(from.as_str()) {
                    p.value = p.value.replace(from.as_str(), to);
                }
            }
        }
        let iri = read_entry(&page).map(|e| e.iri).unwrap_or_default();
        match ix
            .page_of(&iri)
            .and_then(|p| stored.get(p).map(|t| (p.to_string(), t)))
        {
            Some((path, old)) => {
                // What the document says of an entity the pages have is added to
                // its page; what the page says besides stays, prose included.
                let Ok(mut merged) = Page::parse(old) else {
                    clashes.push(Problem { file: path.clone(), line: 0, column: 0, message: format!("{iri}'s page does not parse: fix it before importing statements about it") });
                    continue;
                };
                if merge(&mut merged, &page) {
                    files.push((path.clone(), merged));
                    before.insert(path, Some(old.clone()));
                    affected.push((iri, "updated".into()));
                    updated_pages += 1;
                }
            }
            None => {
                let path = if pages_dir.is_empty() {
                    fname.clone()
                } else {
                    format!("{pages_dir}/{fname}")
                };
                let path = crate::repo_fs::relative(&path)
                    .map_err(|e| Error::validation(parameter, format!("{fname}: {e}")))?;
                let title = title_from_file(&fname);
                let taken = lower
                    .get(&path.to_lowercase())
                    .map(|p| p.to_string())
                    .or_else(|| {
                        ix.resolve(&title)
                            .filter(|other| *other != iri)
                            .map(|other| format!("{other}'s page or term"))
                    });
                if let Some(by) = taken {
                    clashes.push(Problem {
                        file: file.into(),
                        line: 0,
                        column: 0,
                        message: format!("{iri} would get the page '{title}', which {by} already holds; give it another label in the document"),
                    });
                    continue;
                }
                files.push((path.clone(), page));
                before.insert(path, None);
                affected.push((iri, "new".into()));
                new_pages += 1;
            }
        }
    }
    if files.is_empty() && clashes.is_empty() {
        return Err(Error::invalid(format!(
            "{file} adds nothing the pages do not say already"
        )));
    }
    if !clashes.is_empty() {
        return Err(problems_error(parameter, clashes));
    }
    // The whole ontology with the imported pages, classified afresh.
    let t = Instant::now();
    let mut all = stored;
    for (p, page) in &files {
        all.insert(p.clone(), page.write());
    }
    let l = load_pages(all.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    let after = classify(&l.ontology);
    let problems: Vec<Problem> = l
        .problems
        .into_iter()
        .filter(|p| files.iter().any(|(f, _)| *f == p.file))
        .collect();
    if !problems.is_empty() {
        return Err(problems_error(parameter, problems));
    }
    Ok(Merged {
        checked: compare(&s.index.classification, after, t),
        files,
        before,
        affected,
        new_pages,
        updated_pages,
    })
}

/// Imports an OFN document as a proposal. `file` names the document in problems,
/// `parameter` the argument that carried it in refusals. Reading, merging and
/// classifying run on the blocking pool, before any write.
pub async fn import(
    app: &App,
    project_id: &str,
    text: String,
    (file, parameter): (&str, &'static str),
    agent: AgentContext,
) -> Result<Imported> {
    let (repo, s) = served(app, project_id).await?;
    let name = file.to_string();
    let read = blocking("reading an OFN document", move || {
        read_document(&text, &name, parameter)
    })
    .await?;
    let skipped = read.skipped.clone();
    let stored: HashMap<String, String> = {
        let mut c = app.store.read().await?;
        db::page_texts(&mut c, project_id)
            .await?
            .into_iter()
            .collect()
    };
    let (s2, dir, name) = (s.clone(), repo.pages_dir.clone(), file.to_string());
    let Merged {
        files,
        before,
        mut affected,
        new_pages,
        updated_pages,
        checked,
    } = blocking("checking an import", move || {
        merge_and_check(&s2, &dir, read, stored, &name, parameter)
    })
    .await?;
    if let Some(c) = &checked.clash {
        if app.config.ontology.reject_inconsistent {
            let because: Vec<String> = c
                .justification
                .iter()
                .map(|(a, f, l)| format!("{a} ({f}:{l})"))
                .collect();
            return Err(Error::Invariant {
                message: format!(
                    "importing {file} breaks the ontology, because of: {}",
                    because.join("; ")
                ),
                details: Some(crate::error::Details::Inconsistent(Box::new(c.clone()))),
            });
        }
    }
    let more = affected.len().saturating_sub(AFFECTED_ROWS);
    affected.truncate(AFFECTED_ROWS);
    if more > 0 {
        affected.push((format!("… and {more} more"), String::new()));
    }
    let change = Change {
        operation: "import",
        target_iri: None,
        affected,
        checked,
        quality: None,
        before,
    };
    let proposed = commit(app, &repo, &agent, change, None, move |_| Ok(files)).await?;
    Ok(Imported {
        proposed,
        skipped,
        new_pages,
        updated_pages,
    })
}
