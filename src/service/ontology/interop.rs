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

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use super::propose::{compare, problems_error, AgentContext, Change, Checked, Proposed};
use super::stage::commit;
use super::{served, Served};
use crate::domain::ontology::draft;
use crate::domain::ontology::entity::{key_rank, keys};
use crate::domain::ontology::load::{check_read, read_page, ReadPage};
use crate::domain::ontology::model::STANDARD_PREFIXES;
use crate::domain::ontology::ofn::{read_ofn_in, write_ofn};
use crate::domain::ontology::page::{file_name, title_from_file};
use crate::domain::ontology::prefixes;
use crate::domain::ontology::{classify, EntityKind, Page, Problem};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::ontology as db;

/// The export: the document, where it was written and what it holds.
pub struct Exported {
    pub ofn: String,
    /// The file written: absolute in the data directory, else repository-relative.
    pub path: String,
    pub bytes: usize,
    pub classes: usize,
    pub properties: usize,
    pub individuals: usize,
    pub axioms: usize,
}

/// The first line of every file an export writes: an export replaces a file of the
/// repository only when it holds this line (`repo_fs::Replace::IfMarked`).
pub const EXPORT_MARKER: &str =
    "# Cairn's export of the ontology; exporting again replaces this file.";

/// Extensions an export may write in the repository: OFN documents only, so an
/// export never replaces a page or any other kind of file.
const EXPORT_EXTENSIONS: [&str; 2] = [".ofn", ".owl"];

/// Writes the synced ontology as OFN to `to` (a repository-relative path, `parameter`
/// naming it in refusals), else to `exports/<project>.ofn` in the data directory,
/// which Cairn owns. Either way the path is resolved through `repo_fs`, so it cannot
/// leave its directory or write through a link.
pub async fn export(
    app: &App,
    project_id: &str,
    to: Option<(String, &'static str)>,
) -> Result<Exported> {
    let (repo, s) = served(app, project_id).await?;
    let pid = project_id.to_string();
    blocking("writing the OFN document", move || {
        let o = &s.index.ontology;
        let ofn = format!("{EXPORT_MARKER}\n{}", write_ofn(o));
        let (root, rel, replace, parameter) = match &to {
            Some((rel, parameter)) => {
                let rel = crate::repo_fs::relative(rel)
                    .map_err(|e| Error::validation(parameter, e.to_string()))?;
                if !EXPORT_EXTENSIONS
                    .iter()
                    .any(|x| rel.to_ascii_lowercase().ends_with(x))
                {
                    return Err(Error::validation(
                        parameter,
                        format!("{rel}: an export is written to a .ofn or .owl file"),
                    ));
                }
                let replace = crate::repo_fs::Replace::IfMarked(EXPORT_MARKER);
                (PathBuf::from(&repo.repo_path), rel, replace, *parameter)
            }
            None => {
                let dir = crate::config::default_data_dir().join("exports");
                std::fs::create_dir_all(&dir)
                    .map_err(|e| Error::Internal(format!("creating {}: {e}", dir.display())))?;
                let name: String = pid
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                (dir, format!("{name}.ofn"), crate::repo_fs::Replace::Any, "")
            }
        };
        let fs = crate::repo_fs::RepoFs::new(&root).map_err(|e| Error::invalid(e.to_string()))?;
        fs.write(&rel, ofn.as_bytes(), replace)
            .map_err(|e| match parameter {
                "" => Error::Internal(format!("writing the export: {e}")),
                p => Error::validation(p, e.to_string()),
            })?;
        let path = if to.is_some() {
            rel
        } else {
            fs.root().join(&rel).to_string_lossy().into_owned()
        };
        Ok(Exported {
            bytes: ofn.len(),
            path,
            ofn,
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
    /// Prefixes the document declares that the repository's map lacks, and its
    /// entities use: added to the map with the pages.
    new_prefixes: Vec<(String, String)>,
    titles: Vec<(String, String)>,
    skipped: Vec<Problem>,
}

/// The generated pages read back from their texts, and the document's ontology
/// they must give again (see [`round_trip`]).
struct Back {
    /// In the order of [`Read::generated`]: what the whole ontology's check reads of
    /// a new page the merge leaves as generated.
    read: Vec<ReadPage>,
    source: crate::domain::ontology::Ontology,
}

/// Reads the document against the repository's prefix map `known`, makes its
/// pages and reads them back.
fn read_document(
    text: &str,
    (file, parameter): (&str, &'static str),
    known: &[(String, String)],
) -> Result<(Read, Back)> {
    let r = read_ofn_in(text, file, known);
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
    // Each page written and read on its own, on every core; the names across them
    // are resolved on one.
    let pages: Vec<ReadPage> = {
        use rayon::prelude::*;
        generated
            .par_iter()
            .map(|(f, p)| read_page(f, &p.write()))
            .collect()
    };
    let used = |p: &str| {
        r.ontology
            .entities
            .keys()
            .any(|i| !i.starts_with('<') && i.split_once(':').is_some_and(|(q, _)| q == p))
    };
    let new_prefixes = r
        .ontology
        .prefixes
        .iter()
        .filter(|(p, _)| !known.iter().any(|(k, _)| k == p) && used(p))
        .filter(|(p, _)| !STANDARD_PREFIXES.iter().any(|(s, _)| s == p))
        .cloned()
        .collect();
    let read = Read {
        generated,
        new_prefixes,
        titles: r.ontology.page_titles().into_iter().collect(),
        skipped: r.problems,
    };
    let back = Back {
        read: pages,
        source: r.ontology,
    };
    Ok((read, back))
}

/// Checks that the generated pages read back as the document (the round trip every
/// page Cairn writes keeps).
fn round_trip(b: &Back, file: &str, parameter: &'static str) -> Result<()> {
    let (back, problems) = check_read(b.read.iter().map(|r| (r.file.as_str(), r)));
    if !problems.is_empty() {
        // What the document says that a page cannot hold is the document's to fix.
        let mut ps = problems;
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
    if !back.same_content(&b.source) {
        return Err(Error::validation(
            parameter,
            format!("the pages made from {file} do not read back as the document: they state other axioms"),
        ));
    }
    Ok(())
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

/// Adds prefix lines for `new` to the page of the repository's prefix map: the
/// first page declaring prefixes, else `Prefixes` in the pages folder (a page the
/// import writes already takes them). Answers the page's path and stored text.
fn add_prefixes(
    stored: &HashMap<String, String>,
    files: &mut Vec<(String, Page)>,
    pages_dir: &str,
    new: &[(String, String)],
) -> std::result::Result<(String, Option<String>), Problem> {
    let mut holders: Vec<&String> = stored
        .iter()
        .filter(|(_, t)| t.contains("prefix::"))
        .filter(|(_, t)| Page::parse(t).is_ok_and(|p| prefixes::declared(&p).next().is_some()))
        .map(|(f, _)| f)
        .collect();
    holders.sort();
    let path = match holders.first() {
        Some(f) => f.to_string(),
        None => {
            let name = file_name(prefixes::PAGE_TITLE);
            if pages_dir.is_empty() {
                name
            } else {
                format!("{pages_dir}/{name}")
            }
        }
    };
    let old = stored.get(&path).cloned();
    if !files.iter().any(|(f, _)| *f == path) {
        let page = match &old {
            None => Page::new(prefixes::PAGE_TITLE),
            Some(t) => Page::parse(t).map_err(|e| Problem {
                file: path.clone(),
                line: e.line,
                column: 0,
                message: format!(
                    "the prefix map's page does not read ({}): fix it before importing",
                    e.message
                ),
            })?,
        };
        files.push((path.clone(), page));
    }
    if let Some((_, page)) = files.iter_mut().find(|(f, _)| *f == path) {
        for (p, ns) in new {
            page.push(prefixes::KEY, &prefixes::line(p, ns));
        }
    }
    Ok((path, old))
}

/// Merges the generated pages into the stored ones (`pages_dir` for new ones) and
/// classifies the result.
fn merge_and_check(
    s: &Served,
    pages_dir: &str,
    (read, back): (Read, &[ReadPage]),
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
    // New pages the merge leaves as generated, by path: already read (`back`).
    let mut unchanged: HashMap<String, usize> = HashMap::new();
    for (i, (fname, mut page)) in read.generated.into_iter().enumerate() {
        let mut renamed = false;
        for p in &mut page.props {
            for (from, to) in &renames {
                if p.value.contains(from.as_str()) {
                    p.value = p.value.replace(from.as_str(), to);
                    renamed = true;
                }
            }
        }
        // A rename changes links only, never the IRI the page declares.
        let iri = back
            .get(i)
            .and_then(|r| r.iri())
            .unwrap_or_default()
            .to_string();
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
                if !renamed {
                    unchanged.insert(path.clone(), i);
                }
                files.push((path.clone(), page));
                before.insert(path, None);
                affected.push((iri, "new".into()));
                new_pages += 1;
            }
        }
    }
    if !read.new_prefixes.is_empty() {
        match add_prefixes(&stored, &mut files, pages_dir, &read.new_prefixes) {
            Ok((path, old)) => {
                // Its page has the prefix lines now: it is read again.
                unchanged.remove(&path);
                before.entry(path).or_insert(old);
                for (p, _) in &read.new_prefixes {
                    affected.push((format!("{p}:"), "prefix".into()));
                }
            }
            Err(p) => clashes.push(p),
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
    // Stored pages the import does not write, and the import's pages not read yet,
    // are read on every core; the set is loaded in path order.
    let fresh: Vec<ReadPage> = {
        use rayon::prelude::*;
        let written: HashSet<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        let kept = stored
            .par_iter()
            .filter(|(p, _)| !written.contains(p.as_str()))
            .map(|(p, t)| read_page(p, t));
        let changed = files
            .par_iter()
            .filter(|(p, _)| !unchanged.contains_key(p))
            .map(|(p, page)| read_page(p, &page.write()));
        kept.chain(changed).collect()
    };
    let (ontology, problems) = {
        let mut all: Vec<(&str, &ReadPage)> = fresh
            .iter()
            .map(|r| (r.file.as_str(), r))
            .chain(
                unchanged
                    .iter()
                    .filter_map(|(p, &i)| Some((p.as_str(), back.get(i)?))),
            )
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        check_read(all)
    };
    let after = classify(&ontology);
    // Freeing the whole ontology's pages and axioms is left to another thread.
    rayon::spawn(move || drop((ontology, fresh)));
    let problems: Vec<Problem> = problems
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
    let known = s.index.ontology.prefix_map();
    let stored: HashMap<String, String> = {
        let mut c = app.store.read().await?;
        db::page_texts(&mut c, project_id)
            .await?
            .into_iter()
            .collect()
    };
    let (s2, dir, name) = (s.clone(), repo.pages_dir.clone(), file.to_string());
    let (skipped, merged) = blocking("reading and checking an OFN document", move || {
        let (read, back) = read_document(&text, (&name, parameter), &known)?;
        let skipped = read.skipped.clone();
        // The round trip and the merged ontology's check read the same pages and
        // need nothing of each other: one core each. The round trip's refusal comes
        // first.
        let (trip, merged) = rayon::join(
            || round_trip(&back, &name, parameter),
            || merge_and_check(&s2, &dir, (read, &back.read), stored, &name, parameter),
        );
        rayon::spawn(move || drop(back));
        trip?;
        Ok((skipped, merged?))
    })
    .await?;
    let Merged {
        files,
        before,
        mut affected,
        new_pages,
        updated_pages,
        checked,
    } = merged;
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
