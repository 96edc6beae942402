//! Line-level staleness: each reference's baseline blob is diffed against the working
//! tree (zero-context hunks); a hunk overlapping the range makes it `lines_changed`,
//! hunks above only move it, and a moved reference follows its code: its lines are
//! mapped through the diff and served where they are now, not stale. With a language
//! server a symbol moved elsewhere in the file, its body unchanged, follows too. The
//! server adds `symbol_missing` and untracked symbols; a vanished heading is
//! `anchor_missing`; a vanished file `document_missing` (with `renamedTo` when git sees
//! a rename).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::domain::code::{find_heading, shift, Hunk, RefKind, Reference};
use crate::domain::field::{Field, Tool};
use crate::error::Result;
use crate::lsp::{find, matches, name_path, Symbol};
use crate::service::code::refs::pick;
use crate::service::code::{ctx, path_error, text_of, Ctx};
use crate::service::App;
use crate::store::code as db;
use crate::store::Conn;

/// Reasons in the order they are reported (the first applying one wins).
pub const REASONS: [&str; 4] = [
    "document_missing",
    "symbol_missing",
    "anchor_missing",
    "lines_changed",
];

#[derive(Debug, Clone)]
pub struct Staleness {
    pub reference: Reference,
    pub reason: Option<&'static str>,
    pub affected: Vec<Hunk>,
    /// Where the lines are now: the recorded ones followed through the diff when
    /// they moved and did not change; the recorded ones when stale.
    pub now: (i64, i64),
    /// For a stale reference, where its symbol (else its lines) seem to be now.
    pub suggested: Option<(i64, i64)>,
    /// For a symbol gone: the document's declaration whose body is closest to the
    /// recorded lines (a rename): name path, lines, similarity in 0..1.
    pub suggested_symbol: Option<(String, i64, i64, f32)>,
    pub renamed_to: Option<String>,
}

impl Staleness {
    /// Moved and not stale: the reference serves `now`, not its recorded lines.
    pub fn moved(&self) -> bool {
        self.reason.is_none() && self.now != (self.reference.start_line, self.reference.end_line)
    }
}

/// Where lines `start..=end` of the old file are in the new one when no hunk touched
/// them (moved by the hunks above); `None` when one did.
pub fn follow(start: i64, end: i64, hunks: &[Hunk]) -> Option<(i64, i64)> {
    if hunks.iter().any(|h| h.overlaps(start, end)) {
        return None;
    }
    let m = shift(start, hunks);
    Some((start + m, end + m))
}

/// Lines `a..=b` of `text`, each without trailing blanks, trailing empty lines dropped.
fn body(text: &str, a: i64, b: i64) -> Vec<&str> {
    let mut v: Vec<&str> = text
        .lines()
        .skip((a.max(1) - 1) as usize)
        .take((b - a + 1).max(0) as usize)
        .map(str::trim_end)
        .collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// The state of one document against the references made in it.
pub struct DocState {
    pub exists: bool,
    pub text: Option<String>,
    /// Hunks per baseline blob.
    pub hunks: HashMap<String, Vec<Hunk>>,
}

/// Reads a document and diffs every distinct baseline of `refs` against it.
pub async fn doc_state(c: &Ctx, path: &str, refs: &[Reference]) -> Result<DocState> {
    doc_state_at(c, path, refs, None).await
}

/// As [`doc_state`], given the file's blob id when the caller already hashed it:
/// then a file whose diffs against its baselines are cached costs no git process
/// (`analyze_document` without a document, over a tree with many edited files, called again and again).
pub async fn doc_state_at(
    c: &Ctx,
    path: &str,
    refs: &[Reference],
    known: Option<&str>,
) -> Result<DocState> {
    let Some(bytes) =
        c.fs.read(path)
            .map_err(|e| path_error(Field::DocumentPath, e))?
    else {
        return Ok(DocState {
            exists: false,
            text: None,
            hunks: HashMap::new(),
        });
    };
    let text = text_of(bytes, path)?;
    let mut hunks = HashMap::new();
    let baselines: HashSet<&str> = refs.iter().map(|r| r.blob_sha.as_str()).collect();
    if let Some(now) = known {
        let cached: Option<HashMap<String, Vec<Hunk>>> = baselines
            .iter()
            .filter(|b| **b != now)
            .map(|b| c.git.cached_diff(b, now).map(|h| (b.to_string(), h)))
            .collect();
        if let Some(hunks) = cached {
            return Ok(DocState {
                exists: true,
                text: Some(text),
                hunks,
            });
        }
    }
    if !refs.is_empty() {
        // Stored, not just hashed: git diffs blobs in its object store (an object
        // already there is not written again).
        let now = c.git.store_blob(&text).await?;
        let baselines: HashSet<&str> = refs.iter().map(|r| r.blob_sha.as_str()).collect();
        for b in baselines.into_iter().filter(|b| *b != now) {
            hunks.insert(b.to_string(), c.git.diff_blobs(b, &now).await?);
        }
    }
    Ok(DocState {
        exists: true,
        text: Some(text),
        hunks,
    })
}

/// Judges every reference of one document.
pub async fn judge(
    c: &Ctx,
    refs: &[Reference],
    st: &DocState,
    symbols: Option<&[Symbol]>,
) -> Result<Vec<Staleness>> {
    let mut renames: HashMap<String, Option<String>> = HashMap::new();
    let mut baselines: HashMap<String, Option<String>> = HashMap::new();
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        let recorded = (r.start_line, r.end_line);
        let mut s = Staleness {
            reference: r.clone(),
            reason: None,
            affected: vec![],
            now: recorded,
            suggested: None,
            suggested_symbol: None,
            renamed_to: None,
        };
        if !st.exists {
            s.reason = Some("document_missing");
            let renamed = match renames.get(&r.commit_sha) {
                Some(v) => v.clone(),
                None => {
                    let v = c.git.renamed_to(&r.commit_sha, &r.document_path).await?;
                    renames.insert(r.commit_sha.clone(), v.clone());
                    v
                }
            };
            s.renamed_to = renamed;
            out.push(s);
            continue;
        }
        let hunks: &[Hunk] = st.hunks.get(&r.blob_sha).map(Vec::as_slice).unwrap_or(&[]);
        s.affected = hunks
            .iter()
            .filter(|h| h.overlaps(r.start_line, r.end_line))
            .cloned()
            .collect();
        let symbol_missing = r.kind == RefKind::Code
            && matches!((symbols, &r.lsp_symbol), (Some(syms), Some(sym)) if find(syms, sym).is_empty());
        let anchor_missing = match (&r.anchor, &st.text) {
            (Some(a), Some(t)) => find_heading(t, a).is_none(),
            _ => false,
        };
        let moved = shift(r.start_line, hunks);
        let by_server = match (symbols, &r.lsp_symbol, r.kind) {
            (Some(syms), Some(sym), RefKind::Code) => {
                pick(syms, sym, Some(r.start_line + moved)).map(|x| (x.start_line, x.end_line))
            }
            _ => None,
        };
        let by_shift = follow(r.start_line, r.end_line, hunks);
        s.reason = if symbol_missing {
            Some("symbol_missing")
        } else if anchor_missing {
            Some("anchor_missing")
        } else if !s.affected.is_empty() {
            Some("lines_changed")
        } else {
            None
        };
        let needs_baseline = matches!(
            (s.reason, by_server),
            (Some("lines_changed"), Some(_)) | (Some("symbol_missing"), _)
        );
        if needs_baseline && !baselines.contains_key(&r.blob_sha) {
            let old = c.git.read_blobs(&[r.blob_sha.as_str()]).await.ok();
            let old = old
                .and_then(|mut v| v.pop())
                .and_then(|b| String::from_utf8(b).ok());
            baselines.insert(r.blob_sha.clone(), old);
        }
        let baseline = baselines.get(&r.blob_sha).and_then(Option::as_deref);
        // A rename: the declaration whose body reads most like the recorded lines.
        if let (Some("symbol_missing"), Some(syms), Some(text), Some(old)) =
            (s.reason, symbols, &st.text, baseline)
        {
            let was = body(old, r.start_line, r.end_line);
            s.suggested_symbol = closest(syms, text, &was, r.start_line + moved);
        }
        // A symbol the diff shows deleted here and added elsewhere, its body
        // unchanged, moved: it follows rather than going stale.
        if let (Some("lines_changed"), Some((a, b)), Some(text), Some(old)) =
            (s.reason, by_server, &st.text, baseline)
        {
            let was = body(old, r.start_line, r.end_line);
            if !was.is_empty() && was == body(text, a, b) {
                s.reason = None;
                s.affected.clear();
                s.now = (a, b);
            }
        }
        if s.reason.is_none() {
            if let Some(now) = by_shift {
                s.now = now;
            }
        } else {
            let renamed = s.suggested_symbol.as_ref().map(|x| (x.1, x.2));
            s.suggested = by_server
                .or(by_shift)
                .or(renamed)
                .filter(|x| *x != recorded);
        }
        out.push(s);
    }
    Ok(out)
}

/// [`current_lines`] for references of `project_id`: all `None` when its repository
/// cannot be read (the recorded lines are then the best there is).
pub async fn current_of(
    app: &App,
    project_id: &str,
    refs: &[Reference],
) -> Vec<Option<(i64, i64)>> {
    let items: Vec<Recorded> = refs
        .iter()
        .map(|r| Recorded {
            path: &r.document_path,
            blob: &r.blob_sha,
            start: r.start_line,
            end: r.end_line,
        })
        .collect();
    let found = match ctx(app, project_id).await {
        Ok(c) => current_lines(&c, &items).await,
        Err(e) => Err(e),
    };
    found.unwrap_or_else(|e| {
        tracing::debug!(error = %e, "recorded lines served: the repository could not be read");
        vec![None; refs.len()]
    })
}

/// The least similarity of a suggested symbol's body to the recorded lines.
const RENAME_SIMILARITY: f32 = 0.6;

/// The declaration of `syms` whose lines in `text` read most like `was`: Dice over
/// the multisets of adjacent word pairs (pairs keep order, so two functions made of
/// the same words differ), when at least [`RENAME_SIMILARITY`]; the nearer to
/// `near` on a tie.
fn closest(
    syms: &[Symbol],
    text: &str,
    was: &[&str],
    near: i64,
) -> Option<(String, i64, i64, f32)> {
    fn words<'a>(lines: &[&'a str]) -> HashMap<(&'a str, &'a str), usize> {
        let w: Vec<&str> = lines
            .iter()
            .flat_map(|l| l.split(|c: char| !c.is_alphanumeric() && c != '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let mut m = HashMap::new();
        if w.len() == 1 {
            m.insert((w[0], ""), 1);
        }
        for p in w.windows(2) {
            *m.entry((p[0], p[1])).or_insert(0) += 1;
        }
        m
    }
    let old = words(was);
    let n_old: usize = old.values().sum();
    if n_old == 0 {
        return None;
    }
    let mut best: Option<(String, i64, i64, f32)> = None;
    for s in syms.iter().filter(|s| s.declaration()) {
        let now = words(&body(text, s.start_line, s.end_line));
        let n_now: usize = now.values().sum();
        let shared: usize = old
            .iter()
            .map(|(w, n)| (*n).min(*now.get(w).unwrap_or(&0)))
            .sum();
        let score = 2.0 * shared as f32 / (n_old + n_now) as f32;
        let better = best.as_ref().is_none_or(|b| {
            score > b.3 || (score == b.3 && (s.start_line - near).abs() < (b.1 - near).abs())
        });
        if score >= RENAME_SIMILARITY && better {
            best = Some((name_path(s), s.start_line, s.end_line, score));
        }
    }
    best
}

/// A recorded range to follow: its document, baseline blob and lines.
pub struct Recorded<'a> {
    pub path: &'a str,
    pub blob: &'a str,
    pub start: i64,
    pub end: i64,
}

/// Where each recorded range is now, when its file changed and it only moved (what
/// `query` and the page show); `None` for one unchanged, stale, or in a file gone.
/// Lines only: no language server is asked.
pub async fn current_lines(c: &Ctx, items: &[Recorded<'_>]) -> Result<Vec<Option<(i64, i64)>>> {
    let mut paths: Vec<&str> = items.iter().map(|i| i.path).collect();
    paths.sort_unstable();
    paths.dedup();
    let ids = c.git.blob_ids(&paths).await?;
    let now: HashMap<&str, String> = paths
        .iter()
        .zip(ids)
        .filter_map(|(p, id)| id.map(|id| (*p, id)))
        .collect();
    let mut stored: HashSet<&str> = HashSet::new();
    let mut diffs: HashMap<(String, String), Vec<Hunk>> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let Some(cur) = now.get(it.path) else {
            out.push(None);
            continue;
        };
        if cur == it.blob {
            out.push(None);
            continue;
        }
        let key = (it.blob.to_string(), cur.clone());
        if !diffs.contains_key(&key) {
            let hunks = match c.git.cached_diff(it.blob, cur) {
                Some(h) => h,
                None => {
                    // git diffs blobs in its object store: the file's goes there once.
                    if stored.insert(it.path) {
                        if let Some(bytes) =
                            c.fs.read(it.path)
                                .map_err(|e| path_error(Field::DocumentPath, e))?
                        {
                            c.git.store_blob(&text_of(bytes, it.path)?).await?;
                        }
                    }
                    c.git.diff_blobs(it.blob, cur).await?
                }
            };
            diffs.insert(key.clone(), hunks);
        }
        out.push(follow(it.start, it.end, &diffs[&key]).filter(|x| *x != (it.start, it.end)));
    }
    Ok(out)
}

pub struct Analysis {
    pub document_path: String,
    pub document_type: &'static str,
    pub current_commit: String,
    pub exists: bool,
    pub tracked: Vec<Staleness>,
    /// Per reference id: (entity id, name, scope) of the entities holding it.
    pub holders: HashMap<String, Vec<(String, String, String)>>,
    /// Declarations no reference tracks (locals, parameters and imports left out).
    pub untracked: Vec<Symbol>,
    pub hunks: Vec<Hunk>,
    pub lsp: Option<String>,
    pub lsp_error: Option<String>,
}

fn document_type(path: &str) -> &'static str {
    match crate::domain::code::extension(path).as_str() {
        "md" | "markdown" | "txt" | "rst" | "adoc" | "" => "text",
        _ => "code",
    }
}

pub async fn analyze(
    app: &App,
    project_id: &str,
    path: &str,
    with_untracked: bool,
) -> Result<Analysis> {
    let mut conn = app.store.read().await?;
    let rows = rows_of(&mut conn, project_id, path).await?;
    // The connection goes back to the pool before git and the language server work.
    drop(conn);
    analyze_rows(app, project_id, path, with_untracked, rows).await
}

/// [`analyze`] reading the document's references and their holders in the caller's
/// read `conn` (a snapshot the rest of a composed read shares).
pub async fn analyze_in(
    app: &App,
    conn: &mut Conn,
    project_id: &str,
    path: &str,
    with_untracked: bool,
) -> Result<Analysis> {
    let rows = rows_of(conn, project_id, path).await?;
    analyze_rows(app, project_id, path, with_untracked, rows).await
}

/// A document's references and, by reference, the entities holding them.
type Rows = (Vec<Reference>, Vec<(String, String, String, String)>);

async fn rows_of(conn: &mut Conn, project_id: &str, path: &str) -> Result<Rows> {
    Ok((
        db::references_in(conn, project_id, path).await?,
        db::document_attachments(conn, project_id, path).await?,
    ))
}

async fn analyze_rows(
    app: &App,
    project_id: &str,
    path: &str,
    with_untracked: bool,
    (refs, att): Rows,
) -> Result<Analysis> {
    let t0 = std::time::Instant::now();
    let c = ctx(app, project_id).await?;
    let t_db = t0.elapsed();
    let head = c.git.head().await?;
    let st = doc_state(&c, path, &refs).await?;
    let t_git = t0.elapsed();
    if !st.exists && refs.is_empty() {
        return Err(crate::error::Error::NotFound {
            entity: "document",
            id: path.to_string(),
        });
    }
    let dtype = document_type(path);
    let mut lsp_error = None;
    let lsp = app.lsp.command_for(path).map(|c| c.join(" "));
    let symbols = match (&st.text, dtype) {
        (Some(text), "code") => match app.lsp.symbols(&c.root, path, text).await {
            Ok(s) => s,
            Err(e) => {
                // The analysis still answers from git alone; the agent learns why
                // symbols are missing.
                lsp_error = Some(e.to_string());
                None
            }
        },
        _ => None,
    };
    let t_lsp = t0.elapsed();
    let tracked = judge(&c, &refs, &st, symbols.as_deref()).await?;
    tracing::debug!(?t_db, ?t_git, ?t_lsp, total = ?t0.elapsed(), "{} timings", Tool::AnalyzeDocument);
    let tracked_names: Vec<&str> = refs
        .iter()
        .filter_map(|r| r.lsp_symbol.as_deref())
        .collect();
    let untracked = if with_untracked {
        symbols
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .filter(|s| s.declaration() && !tracked_names.iter().any(|q| matches(s, q)))
            .cloned()
            .collect()
    } else {
        vec![]
    };
    let mut hunks: Vec<Hunk> = Vec::new();
    for hs in st.hunks.values() {
        for h in hs {
            if !hunks.contains(h) {
                hunks.push(h.clone());
            }
        }
    }
    hunks.sort_by_key(|h| (h.old_start, h.new_start));
    let mut holders: HashMap<String, Vec<(String, String, String)>> = HashMap::new();
    for (rid, eid, name, scope) in att {
        holders.entry(rid).or_default().push((eid, name, scope));
    }
    Ok(Analysis {
        document_path: path.to_string(),
        document_type: dtype,
        current_commit: head,
        exists: st.exists,
        tracked,
        holders,
        untracked,
        hunks,
        lsp,
        lsp_error,
    })
}

pub struct ChangedFile {
    pub document_path: String,
    pub references: usize,
    pub stale: usize,
    pub moved: usize,
    pub missing: bool,
    pub renamed_to: Option<String>,
}

/// Documents holding references whose file differs from a reference's baseline
/// (uncommitted changes included), with their stale-reference counts. Symbols are
/// not asked for here (that needs a language server per file): `analyze_document`
/// adds `symbol_missing`.
pub async fn changed_files(app: &App, project_id: &str) -> Result<(Vec<ChangedFile>, usize)> {
    let c = ctx(app, project_id).await?;
    let refs = {
        let mut conn = app.store.read().await?;
        db::references_of_project(&mut conn, project_id).await?
    };
    let mut by_doc: BTreeMap<&str, Vec<Reference>> = BTreeMap::new();
    for r in &refs {
        by_doc
            .entry(r.document_path.as_str())
            .or_default()
            .push(r.clone());
    }
    let paths: Vec<&str> = by_doc.keys().copied().collect();
    let current = c.git.blob_ids(&paths).await?;
    let mut out = Vec::new();
    for (path, cur) in paths.iter().zip(current) {
        let doc_refs = &by_doc[path];
        if doc_refs.iter().all(|r| Some(&r.blob_sha) == cur.as_ref()) {
            continue;
        }
        let st = doc_state_at(&c, path, doc_refs, cur.as_deref()).await?;
        let judged = judge(&c, doc_refs, &st, None).await?;
        out.push(ChangedFile {
            document_path: path.to_string(),
            references: doc_refs.len(),
            stale: judged.iter().filter(|j| j.reason.is_some()).count(),
            moved: judged.iter().filter(|j| j.moved()).count(),
            missing: !st.exists,
            renamed_to: judged.iter().find_map(|j| j.renamed_to.clone()),
        });
    }
    Ok((out, by_doc.len()))
}
