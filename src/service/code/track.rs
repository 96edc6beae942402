//! Bulk anchoring: one entity per untracked top-level declaration of a file, or of the
//! files git tracks under a folder, each created as `create_entity` creates one (its
//! name the declaration's, one code reference anchored by its name path), so every
//! rule of a single create holds. A declaration some reference of its document already
//! names is skipped; one that fails is reported and the rest go on. The language
//! server decides what a declaration is: without one a file is reported, not guessed.

use crate::domain::code::{Entity, RefKind, Reference};
use crate::domain::field::Field;
use crate::error::{Error, Result};
use crate::lsp::{matches, name_path, Symbol};
use crate::service::code::entity::{self, Command, NewEntity};
use crate::service::code::refs::{symbols_of, NewRef};
use crate::service::code::{ctx, path_error, text_of, Ctx};
use crate::service::App;
use crate::store::code as db;

/// Files one call reads at most; the rest are counted, for a call per subfolder.
pub const MAX_FILES: usize = 200;
/// Entities one call creates at most (and by default).
pub const MAX_CREATE: usize = 500;
pub const DEFAULT_CREATE: usize = 100;

/// What to track.
pub struct Track {
    pub project_id: String,
    /// A repository-relative file or folder.
    pub path: String,
    pub category_ids: Vec<String>,
    pub parent_ids: Vec<String>,
    /// Most entities to create; what is left is counted in [`Tracked::omitted`].
    pub limit: usize,
}

/// One declaration that could not be tracked.
pub struct Failure {
    pub document_path: String,
    pub symbol: String,
    pub error: Error,
}

/// What a call did.
#[derive(Default)]
pub struct Tracked {
    pub created: Vec<(Entity, Reference)>,
    /// Declarations skipped because a reference of their document names them.
    pub already_tracked: usize,
    pub failed: Vec<Failure>,
    /// Files read for declarations.
    pub files: usize,
    /// Files under the folder that no configured language server handles.
    pub no_server: Vec<String>,
    /// Untracked declarations left for another call once `limit` was reached.
    pub omitted: usize,
    /// Files past [`MAX_FILES`], not read.
    pub files_omitted: usize,
}

/// A top-level declaration an agent would track: a type, a function, a namespace or
/// module with a body; a top-level variable or constant only when it spans several
/// lines (an arrow function, a configuration object), not a one-line assignment.
pub fn worth_tracking(s: &Symbol) -> bool {
    if s.path.len() != 1 || !s.declaration() {
        return false;
    }
    match s.kind {
        // module, namespace, class, method, enum, interface, function, struct
        2 | 3 | 5 | 6 | 10 | 11 | 12 | 23 => true,
        // variable, constant
        13 | 14 => s.end_line > s.start_line,
        _ => false,
    }
}

/// The first non-blank line of a declaration, trimmed: its signature, as the entity's
/// description says what it is until an agent writes more.
fn signature(text: &str, s: &Symbol) -> String {
    let line = text
        .lines()
        .skip((s.start_line.max(1) - 1) as usize)
        .take((s.end_line - s.start_line + 1).max(1) as usize)
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    crate::domain::text::clip(line, 200)
}

/// The documents a path names: itself when it is a file; when a folder, the files git
/// tracks under it at HEAD that still exist, in path order.
async fn documents(c: &Ctx, path: &str) -> Result<Vec<String>> {
    let real =
        c.fs.resolve(path)
            .map_err(|e| path_error(Field::Path, e))?
            .ok_or_else(|| Error::not_found("file or folder", path))?;
    if real.is_file() {
        return Ok(vec![path.to_string()]);
    }
    let head = c.git.head().await?;
    let mut files: Vec<String> = c
        .git
        .tree_files(&head, path)
        .await?
        .into_iter()
        .map(|f| f.path)
        .filter(|p| c.fs.resolve(p).ok().flatten().is_some_and(|r| r.is_file()))
        .collect();
    files.sort();
    Ok(files)
}

pub async fn track(app: &App, t: Track) -> Result<Tracked> {
    let c = ctx(app, &t.project_id).await?;
    {
        // The classification is the same for every entity: checked once, before any
        // is made, so a wrong category refuses the call instead of every declaration.
        let mut conn = app.store.read().await?;
        let (scope, _) =
            entity::scope_of_categories(&mut conn, &t.project_id, &t.category_ids).await?;
        entity::check_parents(&mut conn, &t.project_id, scope, &t.parent_ids, None).await?;
    }
    let mut out = Tracked::default();
    let mut docs = documents(&c, &t.path).await?;
    let mut served = Vec::new();
    for d in docs.drain(..) {
        if app.lsp.command_for(&d).is_some() {
            served.push(d);
        } else {
            out.no_server.push(d);
        }
    }
    if served.len() > MAX_FILES {
        out.files_omitted = served.len() - MAX_FILES;
        served.truncate(MAX_FILES);
    }
    for doc in served {
        let Some(bytes) = c.fs.read(&doc).map_err(|e| path_error(Field::Path, e))? else {
            continue;
        };
        let Ok(text) = text_of(bytes, &doc) else {
            continue;
        };
        out.files += 1;
        let Some(symbols) = symbols_of(app, &c, &doc, &text).await? else {
            out.no_server.push(doc);
            continue;
        };
        let refs = {
            let mut conn = app.store.read().await?;
            db::references_in(&mut conn, &t.project_id, &doc).await?
        };
        let named: Vec<&str> = refs
            .iter()
            .filter_map(|r| r.lsp_symbol.as_deref())
            .collect();
        for s in symbols.iter().filter(|s| worth_tracking(s)) {
            if named.iter().any(|q| matches(s, q)) {
                out.already_tracked += 1;
                continue;
            }
            if out.created.len() >= t.limit {
                out.omitted += 1;
                continue;
            }
            let np = name_path(s);
            let add = Command::Add(NewRef {
                kind: RefKind::Code,
                document_path: doc.clone(),
                lsp_symbol: Some(np.clone()),
                // Picks this one among declarations that share the name.
                start_line: Some(s.start_line),
                end_line: None,
                anchor: None,
                description: String::new(),
            });
            let made = entity::create(
                app,
                NewEntity {
                    project_id: t.project_id.clone(),
                    name: s.name.clone(),
                    description: format!(
                        "{} {} in {doc}",
                        crate::lsp::kind_name(s.kind),
                        signature(&text, s)
                    ),
                    category_ids: t.category_ids.clone(),
                    parent_ids: t.parent_ids.clone(),
                },
                vec![add],
            )
            .await;
            match made {
                Ok(o) => match (o.entity, o.run.executed.into_iter().next(), o.run.failed) {
                    (Some(e), Some((_, Some(r))), _) => out.created.push((e, r)),
                    (_, _, Some((_, error))) => out.failed.push(Failure {
                        document_path: doc.clone(),
                        symbol: np,
                        error,
                    }),
                    _ => {}
                },
                // A store that cannot write fails the call; a declaration the rules
                // refuse is reported and the others go on.
                Err(
                    e @ (Error::Busy | Error::StorageFull | Error::ReadOnly | Error::Unexpected(_)),
                ) => return Err(e),
                Err(error) => out.failed.push(Failure {
                    document_path: doc.clone(),
                    symbol: np,
                    error,
                }),
            }
        }
    }
    Ok(out)
}
