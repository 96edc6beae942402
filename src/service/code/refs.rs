//! References: resolving a new or changed reference against the repository (the file
//! exists, the symbol exists per the language server, the anchor is a heading, the
//! range fits) and `alter_references`, run command by command.

use crate::domain::code::{content_type, find_heading, RefKind, Reference};
use crate::domain::container::clip;
use crate::domain::field::{Field, Tool};
use crate::domain::id::new_id;
use crate::domain::now;
use crate::error::{Details, Error, Result};
use crate::lsp::{find, kind_name, name_path, segments, Symbol};
use crate::service::code::{ctx, Ctx};
use crate::service::App;
use crate::store::{code as db, lock};

/// A reference to add, as the agent described it.
#[derive(Debug, Clone)]
pub struct NewRef {
    pub kind: RefKind,
    pub document_path: String,
    pub lsp_symbol: Option<String>,
    pub start_line: Option<i64>,
    pub end_line: Option<i64>,
    pub anchor: Option<String>,
    pub description: String,
}

fn symbol_missing(symbol: &str, path: &str, syms: &[Symbol]) -> Error {
    let mut names: Vec<String> = syms.iter().map(name_path).collect();
    names.dedup();
    names.truncate(50);
    Error::InvalidOperation {
        message: format!(
            "Symbol '{}' not found in {path}: use a name path from details.symbols ({} lists them)",
            clip(symbol, 80),
            Tool::AnalyzeDocument
        ),
        details: Some(Details::SymbolMissing {
            symbol: symbol.to_string(),
            document_path: path.to_string(),
            symbols: names,
        }),
    }
}

/// The one symbol `q` names for a new anchor. Among several, `near` (a line the
/// agent gave) picks the one whose range holds it; otherwise the agent is asked to
/// say which, never answered with a guess.
pub fn choose<'a>(
    syms: &'a [Symbol],
    q: &str,
    near: Option<i64>,
    path: &str,
) -> Result<&'a Symbol> {
    let found = find(syms, q);
    let held: Vec<&Symbol> = match near {
        Some(n) if found.len() > 1 => found
            .iter()
            .copied()
            .filter(|s| s.start_line <= n && n <= s.end_line)
            .collect(),
        _ => vec![],
    };
    match (found.as_slice(), held.as_slice()) {
        ([], _) => Err(symbol_missing(q, path, syms)),
        ([one], _) => Ok(one),
        (_, [one]) => Ok(one),
        (many, _) => {
            let list: Vec<String> = many
                .iter()
                .take(50)
                .map(|s| format!("{} (lines {}-{})", name_path(s), s.start_line, s.end_line))
                .collect();
            Err(Error::ValidationDetails {
                message: format!(
                    "'{}' names {} symbols in {path}: give a name path ({}), or a {} inside the one meant",
                    clip(q, 80),
                    many.len(),
                    list.join(", "),
                    Field::StartLine
                ),
                parameter: Field::LspSymbol.to_string(),
                details: Details::SymbolAmbiguous {
                    symbol: q.to_string(),
                    document_path: path.to_string(),
                    candidates: many
                        .iter()
                        .take(50)
                        .map(|s| (name_path(s), s.start_line, s.end_line, kind_name(s.kind)))
                        .collect(),
                },
            })
        }
    }
}

/// The symbol `q` names that is nearest line `near`: where a recorded anchor is now.
pub fn pick<'a>(syms: &'a [Symbol], q: &str, near: Option<i64>) -> Option<&'a Symbol> {
    let mut c = find(syms, q);
    if let Some(n) = near {
        c.sort_by_key(|s| (s.start_line - n).abs());
    }
    c.into_iter().next()
}

fn check_range(start: i64, end: i64, lines: i64, path: &str) -> Result<()> {
    if start < 1 || end < start {
        return Err(Error::validation(
            Field::StartLine,
            format!("range {start}..{end} is empty or inverted: lines are 1-based and inclusive"),
        ));
    }
    if end > lines {
        return Err(Error::validation(
            Field::EndLine,
            format!(
                "{path} has {lines} line(s); {} {end} is past its end",
                Field::EndLine
            ),
        ));
    }
    Ok(())
}

/// A label given without a language server must name something in its lines: its
/// last name (`send` of `HTTPAdapter/send`) occurs in them.
fn check_label(label: &str, text: &str, start: i64, end: i64, path: &str) -> Result<()> {
    let name = segments(label).last().copied().unwrap_or("");
    let found = text
        .lines()
        .skip((start - 1) as usize)
        .take((end - start + 1) as usize)
        .any(|l| !name.is_empty() && l.contains(name));
    if found {
        return Ok(());
    }
    Err(Error::validation(
        Field::LspSymbol,
        format!(
            "'{}' does not occur in lines {start}-{end} of {path}: without a language server {} labels the lines given, so give the lines that hold it",
            clip(label, 80),
            Field::LspSymbol
        ),
    ))
}

fn line_count(text: &str) -> i64 {
    text.lines().count().max(1) as i64
}

/// Symbols of a document from its language server; `None` when it has none.
pub async fn symbols_of(app: &App, c: &Ctx, path: &str, text: &str) -> Result<Option<Vec<Symbol>>> {
    app.lsp.symbols(&c.root, path, text).await
}

/// Builds the row for a new reference, reading the repository and asking the
/// language server; nothing is written to the store.
pub async fn resolve_new(app: &App, c: &Ctx, head: &str, n: &NewRef) -> Result<Reference> {
    let path = &n.document_path;
    // The path is handed to git whenever the reference is checked for staleness.
    crate::git::check_path(path).map_err(|e| Error::validation(Field::DocumentPath, e))?;
    let text = c.read(path)?;
    let lines = line_count(&text);
    let (mut start, mut end, mut kind_no) = (n.start_line, n.end_line, None);
    let mut lsp_symbol = n.lsp_symbol.clone();
    match n.kind {
        RefKind::Code => match (
            &n.lsp_symbol,
            match &n.lsp_symbol {
                Some(_) => symbols_of(app, c, path, &text).await?,
                None => None,
            },
        ) {
            // With a server the symbol gives the range (a startLine picks among
            // several carrying the name).
            (Some(symbol), Some(syms)) => {
                let s = choose(&syms, symbol, n.start_line, path)?;
                start = Some(s.start_line);
                // A server may end the last symbol past the last line.
                end = Some(s.end_line.min(lines));
                kind_no = Some(s.kind);
                // Recorded as its full name path, so following it later is exact.
                lsp_symbol = Some(name_path(s));
            }
            // Otherwise the lines are the anchor, and a symbol only labels them.
            (symbol, _) => {
                let (Some(s), Some(e)) = (start, end) else {
                    return Err(Error::validation(
                        if start.is_none() {
                            Field::StartLine
                        } else {
                            Field::EndLine
                        },
                        if symbol.is_some() {
                            format!("no language server handles {path}: give {} and {} ({} then labels them), or configure one in [lsp]", Field::StartLine, Field::EndLine, Field::LspSymbol)
                        } else {
                            format!(
                                "give {}, or {} and {}",
                                Field::LspSymbol,
                                Field::StartLine,
                                Field::EndLine
                            )
                        },
                    ));
                };
                if let Some(label) = symbol {
                    check_range(s, e, lines, path)?;
                    check_label(label, &text, s, e, path)?;
                }
            }
        },
        RefKind::Text => {
            if let Some(a) = &n.anchor {
                if find_heading(&text, a).is_none() {
                    return Err(Error::InvalidOperation {
                        message: format!("anchor '{}' is not a heading in {path}", clip(a, 80)),
                        details: Some(Details::AnchorMissing {
                            anchor: a.clone(),
                            document_path: path.clone(),
                        }),
                    });
                }
            }
        }
    }
    let (s, e) = (start.unwrap_or(1), end.unwrap_or(1));
    check_range(s, e, lines, path)?;
    let blob = c.git.store_blob(&text).await?;
    let ts = now();
    Ok(Reference {
        id: new_id(),
        project_id: c.project_id.clone(),
        kind: n.kind,
        document_path: path.clone(),
        start_line: s,
        end_line: e,
        lsp_symbol,
        lsp_kind: kind_no,
        anchor: n.anchor.clone(),
        description: n.description.clone(),
        content_type: content_type(n.kind, path),
        commit_sha: head.to_string(),
        blob_sha: blob,
        version: 1,
        created_at: ts.clone(),
        updated_at: ts,
    })
}

/// An `alter_references` Update: the fields given replace the stored ones.
#[derive(Debug, Clone)]
pub struct RefUpdate {
    pub id: String,
    pub version: i64,
    pub start_line: Option<i64>,
    pub end_line: Option<i64>,
    /// `Some("")` clears the anchor.
    pub anchor: Option<String>,
    pub lsp_symbol: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Clone)]
pub enum RefCommand {
    Update(RefUpdate),
    Delete { id: String, version: i64 },
}

/// The reference as it will be after `u`, re-read from the working tree and
/// re-anchored at HEAD (code references with a language server take its range).
pub async fn resolve_update(
    app: &App,
    c: &Ctx,
    head: &str,
    old: &Reference,
    u: &RefUpdate,
) -> Result<Reference> {
    let mut r = old.clone();
    let path = &old.document_path;
    let text = c.read(path).map_err(|e| match e {
        Error::NotFound { .. } => Error::InvalidOperation {
            message: format!(
                "{path} is gone from the working tree: add a reference to where the code went and delete this one"
            ),
            details: Some(Details::DocumentMissing {
                document_path: path.clone(),
            }),
        },
        other => other,
    })?;
    if let Some(s) = &u.lsp_symbol {
        r.lsp_symbol = Some(s.clone());
    }
    if let Some(d) = &u.description {
        r.description = d.clone();
    }
    if let Some(a) = &u.anchor {
        r.anchor = (!a.trim().is_empty()).then(|| a.trim().to_string());
    }
    let lines = line_count(&text);
    let mut from_server = false;
    if r.kind == RefKind::Code {
        if let (Some(symbol), Some(syms)) =
            (r.lsp_symbol.clone(), symbols_of(app, c, path, &text).await?)
        {
            // A symbol the agent names now must be unambiguous; the recorded one
            // is followed to its nearest carrier.
            let s = match &u.lsp_symbol {
                Some(given) => choose(&syms, given, u.start_line, path)?,
                None => pick(&syms, &symbol, u.start_line.or(Some(old.start_line)))
                    .ok_or_else(|| symbol_missing(&symbol, path, &syms))?,
            };
            r.lsp_symbol = Some(name_path(s));
            r.start_line = s.start_line;
            r.end_line = s.end_line.min(lines);
            r.lsp_kind = Some(s.kind);
            from_server = true;
        }
    }
    if !from_server {
        if let Some(s) = u.start_line {
            r.start_line = s;
        }
        if let Some(e) = u.end_line {
            r.end_line = e;
        }
        let relabelled = u.lsp_symbol.is_some() || u.start_line.is_some() || u.end_line.is_some();
        if let (Some(label), RefKind::Code, true) = (&r.lsp_symbol, r.kind, relabelled) {
            check_range(r.start_line, r.end_line, lines, path)?;
            check_label(label, &text, r.start_line, r.end_line, path)?;
        }
    }
    if let Some(a) = &r.anchor {
        if find_heading(&text, a).is_none() {
            return Err(Error::InvalidOperation {
                message: format!("anchor '{}' is not a heading in {path}", clip(a, 80)),
                details: Some(Details::AnchorMissing {
                    anchor: a.clone(),
                    document_path: path.clone(),
                }),
            });
        }
    }
    check_range(r.start_line, r.end_line, lines, path)?;
    r.blob_sha = c.git.store_blob(&text).await?;
    r.commit_sha = head.to_string();
    r.updated_at = now();
    Ok(r)
}

/// What a command run did: per executed command its index and the reference it
/// produced (if any), the failing command, and the indices not attempted.
#[derive(Debug)]
pub struct Run<T> {
    pub executed: Vec<(usize, Option<T>)>,
    pub failed: Option<(usize, Error)>,
    pub skipped: Vec<usize>,
}

impl<T> Default for Run<T> {
    fn default() -> Self {
        Run {
            executed: vec![],
            failed: None,
            skipped: vec![],
        }
    }
}

impl<T> Run<T> {
    pub fn fail(&mut self, i: usize, e: Error, total: usize) {
        self.failed = Some((i, e));
        self.skipped = (i + 1..total).collect();
    }
}

pub async fn alter_references(
    app: &App,
    project_id: &str,
    cmds: &[RefCommand],
) -> Result<(Run<Reference>, String)> {
    let c = ctx(app, project_id).await?;
    let head = c.git.head().await?;
    // Outside work first: each update resolved against the repository (or its error,
    // reported when the run reaches it).
    let mut prepared: Vec<Option<Result<Reference>>> = Vec::with_capacity(cmds.len());
    for cmd in cmds {
        prepared.push(match cmd {
            RefCommand::Update(u) => {
                let old = {
                    let mut conn = app.store.read().await?;
                    db::reference(&mut conn, &u.id).await?
                };
                Some(match old {
                    Some(old) if old.project_id == project_id => {
                        resolve_update(app, &c, &head, &old, u).await
                    }
                    _ => Err(Error::not_found("reference", u.id.clone())),
                })
            }
            RefCommand::Delete { .. } => None,
        });
    }
    let mut run = Run::default();
    let mut tx = app.store.write().await?;
    for (i, cmd) in cmds.iter().enumerate() {
        let res: Result<Option<Reference>> = async {
            match cmd {
                RefCommand::Update(u) => {
                    let r = match prepared[i].take() {
                        Some(r) => r?,
                        None => return Err(Error::Internal("update not prepared".into())),
                    };
                    let v = lock::bump(&mut tx, lock::CODE_REFERENCES, &u.id, u.version, &r.updated_at).await?;
                    db::update_reference(&mut tx, &r).await?;
                    Ok(Some(Reference { version: v, ..r }))
                }
                RefCommand::Delete { id, version } => {
                    let owner = db::reference(&mut tx, id).await?;
                    if owner.as_ref().is_some_and(|r| r.project_id != project_id) {
                        return Err(Error::not_found("reference", id.clone()));
                    }
                    let attached = db::entities_of_reference(&mut tx, id).await?;
                    if !attached.is_empty() {
                        let list: Vec<(String, String)> = attached
                            .iter()
                            .map(|e| (e.id.clone(), e.name.clone()))
                            .collect();
                        return Err(Error::InvalidOperation {
                            message: format!(
                                "Reference attached to entities: unattach it from {} entit(ies) ({}) first",
                                attached.len(),
                                Tool::UpdateEntity
                            ),
                            details: Some(Details::AttachedEntities(list)),
                        });
                    }
                    lock::delete(&mut tx, lock::CODE_REFERENCES, id, Some(*version)).await?;
                    Ok(None)
                }
            }
        }
        .await;
        match res {
            Ok(r) => run.executed.push((i, r)),
            Err(e) => {
                run.fail(i, e, cmds.len());
                break;
            }
        }
    }
    tx.commit().await?;
    Ok((run, head))
}
