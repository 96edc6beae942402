//! `create_entity` and `update_entity`: checks that need only the request and the
//! stored taxonomy run first (nothing written on failure); then the commands run in
//! order in one transaction, the first failure stops the run and what ran stays.
//! `create_entity` keeps nothing unless its first Add succeeded, and no run leaves an
//! entity without a reference.

use std::collections::HashMap;

use crate::domain::code::{Category, Entity, Reference, Scope};
use crate::domain::field::{Field, Tool};
use crate::domain::id::new_id;
use crate::domain::now;
use crate::error::{Details, Error, Result};
use crate::service::code::refs::{resolve_new, NewRef, Run};
use crate::service::code::{ctx, Ctx};
use crate::service::App;
use crate::store::{code as db, lock, Conn};

#[derive(Debug, Clone)]
pub enum Command {
    Attach {
        reference_id: String,
    },
    Unattach {
        reference_id: String,
    },
    Add(NewRef),
    Relate {
        entity_id: String,
        note: Option<String>,
    },
    Unrelate {
        entity_id: String,
    },
    Link {
        entity_id: String,
        link_type: &'static str,
    },
    Unlink {
        entity_id: String,
        link_type: &'static str,
    },
}

pub struct NewEntity {
    pub project_id: String,
    pub name: String,
    pub description: String,
    pub category_ids: Vec<String>,
    pub parent_ids: Vec<String>,
}

pub struct EntityChange {
    pub id: String,
    pub version: i64,
    pub name: Option<String>,
    pub description: Option<String>,
    pub category_ids: Option<Vec<String>>,
    pub parent_ids: Option<Vec<String>>,
}

/// The outcome: the entity as it stands after the run (`None` when a create kept
/// nothing) and the per-command report.
pub struct Outcome {
    pub entity: Option<Entity>,
    pub run: Run<Reference>,
}

fn rule(param: impl std::fmt::Display, msg: impl Into<String>) -> Error {
    Error::validation(param, msg)
}

/// The one scope of a set of categories of `project_id`.
pub(crate) async fn scope_of_categories(
    conn: &mut Conn,
    project_id: &str,
    ids: &[String],
) -> Result<(Scope, Vec<Category>)> {
    if ids.is_empty() {
        return Err(rule(
            Field::CategoryIds,
            "at least one category is required: entities cannot be unclassified",
        ));
    }
    let cats = resolve_categories(conn, project_id, ids).await?;
    let scope = cats[0].scope;
    if let Some(other) = cats.iter().find(|c| c.scope != scope) {
        return Err(rule(
            Field::CategoryIds,
            format!(
                "categories of one entity span one scope: '{}' is {}, '{}' is {}",
                cats[0].name,
                scope.as_str(),
                other.name,
                other.scope.as_str()
            ),
        ));
    }
    Ok((scope, cats))
}

/// The project's categories named in `given` by id or by name (in any case); a name
/// shared by categories of several scopes must be given as an id.
async fn resolve_categories(
    conn: &mut Conn,
    project_id: &str,
    given: &[String],
) -> Result<Vec<Category>> {
    let all = db::categories(conn, project_id).await?;
    let mut out: Vec<Category> = Vec::with_capacity(given.len());
    for g in given {
        let found: Vec<&Category> = match crate::domain::id::parse(Field::CategoryIds, g) {
            Ok(id) => all.iter().filter(|c| c.id == id).collect(),
            Err(_) => all
                .iter()
                .filter(|c| c.name.eq_ignore_ascii_case(g.trim()))
                .collect(),
        };
        match found.as_slice() {
            [one] => {
                if !out.iter().any(|c| c.id == one.id) {
                    out.push((*one).clone());
                }
            }
            [] => {
                let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
                return Err(Error::NotFound {
                    entity: "category",
                    id: format!(
                        "{} (in this project; its categories: {})",
                        crate::domain::container::clip(g, 60),
                        names.join(", ")
                    ),
                });
            }
            many => {
                let which: Vec<String> = many
                    .iter()
                    .map(|c| format!("{} {}", c.scope.as_str(), c.id))
                    .collect();
                return Err(rule(
                    Field::CategoryIds,
                    format!(
                        "'{g}' names several categories ({}): give the id",
                        which.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Parents exist in the project and sit above `scope`; none only for Domain.
pub(crate) async fn check_parents(
    conn: &mut Conn,
    project_id: &str,
    scope: Scope,
    ids: &[String],
    me: Option<&str>,
) -> Result<()> {
    if ids.is_empty() && scope != Scope::Domain {
        return Err(rule(
            Field::ParentIds,
            format!(
                "a {} entity needs at least one parent; only Domain entities stand alone",
                scope.as_str()
            ),
        ));
    }
    if scope == Scope::Domain && !ids.is_empty() {
        return Err(rule(
            Field::ParentIds,
            "Domain entities are the top level and take no parents",
        ));
    }
    let parents = db::entities_by_ids(conn, ids).await?;
    for id in ids {
        let Some(p) = parents
            .iter()
            .find(|p| &p.id == id && p.project_id == project_id)
        else {
            return Err(Error::not_found("entity", id.clone()));
        };
        if p.scope.depth() >= scope.depth() {
            return Err(rule(
                Field::ParentIds,
                format!(
                    "a {} entity cannot belong to '{}' ({}): a parent's scope must be above its child's",
                    scope.as_str(),
                    p.name,
                    p.scope.as_str()
                ),
            ));
        }
        if let Some(me) = me {
            if id == me || db::ancestors(conn, id).await?.iter().any(|a| a == me) {
                return Err(Error::Invariant {
                    message: format!(
                        "making '{}' a parent would close a BELONGS_TO cycle",
                        p.name
                    ),
                    details: Some(Details::CycleThrough {
                        parent_id: id.clone(),
                    }),
                });
            }
        }
    }
    Ok(())
}

/// Checks on the commands that need nothing but the request and the scope.
fn check_commands(scope: Scope, cmds: &[Command]) -> Result<()> {
    let mut doc: Option<&str> = None;
    for (i, c) in cmds.iter().enumerate() {
        match c {
            Command::Add(n) => {
                if !scope.allows(n.kind) {
                    return Err(rule(
                        format!("{}[{i}].kind", Field::Commands),
                        format!(
                            "a {} entity takes {} references",
                            scope.as_str(),
                            match scope {
                                Scope::Domain | Scope::Feature => "text (document)",
                                Scope::Namespace => "code or text",
                                _ => "code",
                            }
                        ),
                    ));
                }
                match doc {
                    Some(d) if d != n.document_path => {
                        return Err(rule(
                            format!("{}[{i}].{}", Field::Commands, Field::DocumentPath),
                            format!(
                                "All references must be in same document. Got {d} and {}",
                                n.document_path
                            ),
                        ))
                    }
                    _ => doc = Some(&n.document_path),
                }
            }
            Command::Link { .. } | Command::Unlink { .. } if !scope.may_link() => {
                return Err(rule(
                    format!("{}[{i}].command", Field::Commands),
                    format!(
                        "link/unlink are for Component and Unit entities; this one is {}",
                        scope.as_str()
                    ),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Resolves every Add against the repository before any transaction opens; each
/// result is reported when the run reaches its command.
async fn prepare(
    app: &App,
    c: &Ctx,
    cmds: &[Command],
) -> Result<HashMap<usize, Result<Reference>>> {
    let mut out = HashMap::new();
    if !cmds.iter().any(|c| matches!(c, Command::Add(_))) {
        return Ok(out);
    }
    let head = c.git.head().await?;
    for (i, cmd) in cmds.iter().enumerate() {
        if let Command::Add(n) = cmd {
            out.insert(i, resolve_new(app, c, &head, n).await);
        }
    }
    Ok(out)
}

async fn other_entity(conn: &mut Conn, me: &Entity, id: &str) -> Result<Entity> {
    match db::entity(conn, id).await? {
        Some(e) if e.project_id == me.project_id => {
            if e.id == me.id {
                Err(Error::invalid("an entity cannot relate or link to itself"))
            } else {
                Ok(e)
            }
        }
        _ => Err(Error::not_found("entity", id)),
    }
}

async fn run_one(
    conn: &mut Conn,
    me: &Entity,
    cmd: &Command,
    prepared: Option<Result<Reference>>,
    ts: &str,
) -> Result<Option<Reference>> {
    match cmd {
        Command::Add(_) => {
            let r = match prepared {
                Some(r) => r?,
                None => return Err(Error::Internal("add not prepared".into())),
            };
            db::insert_reference(conn, &r).await?;
            db::attach(conn, &me.id, &r.id, ts).await?;
            Ok(Some(r))
        }
        Command::Attach { reference_id } => {
            let r = match db::reference(conn, reference_id).await? {
                Some(r) if r.project_id == me.project_id => r,
                _ => return Err(Error::not_found("reference", reference_id.clone())),
            };
            if !me.scope.allows(r.kind) {
                return Err(Error::invalid(format!(
                    "a {} entity cannot hold a {} reference",
                    me.scope.as_str(),
                    r.kind.as_str()
                )));
            }
            db::attach(conn, &me.id, &r.id, ts).await?;
            Ok(Some(r))
        }
        Command::Unattach { reference_id } => {
            if !db::references_of(conn, &me.id)
                .await?
                .iter()
                .any(|r| &r.id == reference_id)
            {
                return Err(Error::not_found(
                    "attachment of reference",
                    reference_id.clone(),
                ));
            }
            if db::attachment_count(conn, &me.id).await? <= 1 {
                return Err(Error::InvalidOperation {
                    message: format!(
                        "reference {reference_id} is the entity's last one: add or attach another earlier in the same call, then unattach"
                    ),
                    details: Some(Details::LastReference {
                        entity_id: me.id.clone(),
                        reference_id: reference_id.clone(),
                    }),
                });
            }
            db::unattach(conn, &me.id, reference_id).await?;
            Ok(None)
        }
        Command::Relate { entity_id, note } => {
            other_entity(conn, me, entity_id).await?;
            db::relate(conn, &me.id, entity_id, note.as_deref(), ts).await?;
            Ok(None)
        }
        Command::Unrelate { entity_id } => {
            if !db::unrelate(conn, &me.id, entity_id).await? {
                return Err(Error::not_found(
                    "RELATED_TO with entity",
                    entity_id.clone(),
                ));
            }
            Ok(None)
        }
        Command::Link {
            entity_id,
            link_type,
        } => {
            let other = other_entity(conn, me, entity_id).await?;
            if !other.scope.may_link() {
                return Err(Error::invalid(format!(
                    "'{}' is a {} entity: links join Component and Unit entities only",
                    other.name,
                    other.scope.as_str()
                )));
            }
            db::link(conn, &me.id, entity_id, link_type, ts).await?;
            Ok(None)
        }
        Command::Unlink {
            entity_id,
            link_type,
        } => {
            if !db::unlink(conn, &me.id, entity_id, link_type).await? {
                return Err(Error::not_found(
                    "link",
                    format!("{link_type} to {entity_id}"),
                ));
            }
            Ok(None)
        }
    }
}

pub async fn create(app: &App, n: NewEntity, cmds: Vec<Command>) -> Result<Outcome> {
    let first_add = cmds
        .iter()
        .position(|c| matches!(c, Command::Add(_)))
        .ok_or_else(|| {
            rule(
                Field::Commands,
                format!(
                    "{} needs at least one add command: every entity is anchored to a reference",
                    Tool::CreateEntity
                ),
            )
        })?;
    let c = ctx(app, &n.project_id).await?;
    let (scope, category_ids) = {
        let mut conn = app.store.read().await?;
        let (scope, cats) = scope_of_categories(&mut conn, &n.project_id, &n.category_ids).await?;
        check_parents(&mut conn, &n.project_id, scope, &n.parent_ids, None).await?;
        (scope, cats.into_iter().map(|c| c.id).collect::<Vec<_>>())
    };
    check_commands(scope, &cmds)?;
    let mut prepared = prepare(app, &c, &cmds).await?;
    let ts = now();
    let e = Entity {
        id: new_id(),
        project_id: n.project_id.clone(),
        name: n.name,
        description: n.description,
        scope,
        version: 1,
        created_at: ts.clone(),
        updated_at: ts.clone(),
    };
    let mut tx = app.store.write().await?;
    db::insert_entity(&mut tx, &e).await?;
    db::set_categories(&mut tx, &e.id, &category_ids).await?;
    db::set_parents(&mut tx, &e.id, &n.parent_ids, &ts).await?;
    let mut run = Run::default();
    for (i, cmd) in cmds.iter().enumerate() {
        match run_one(&mut tx, &e, cmd, prepared.remove(&i), &ts).await {
            Ok(r) => run.executed.push((i, r)),
            Err(err) => {
                run.fail(i, err, cmds.len());
                break;
            }
        }
    }
    if run.failed.as_ref().is_some_and(|(i, _)| *i <= first_add) {
        // The entity would stand without a reference: keep nothing.
        tx.rollback().await?;
        run.executed.clear();
        return Ok(Outcome { entity: None, run });
    }
    tx.commit().await?;
    Ok(Outcome {
        entity: Some(e),
        run,
    })
}

pub async fn update(app: &App, ch: EntityChange, cmds: Vec<Command>) -> Result<Outcome> {
    let (old, project_id) = {
        let mut conn = app.store.read().await?;
        let Some(old) = db::entity(&mut conn, &ch.id).await? else {
            return Err(Error::not_found("entity", ch.id.clone()));
        };
        let pid = old.project_id.clone();
        (old, pid)
    };
    let c = ctx(app, &project_id).await?;
    let (scope, category_ids) = {
        let mut conn = app.store.read().await?;
        lock::check(&mut conn, lock::CODE_ENTITIES, &ch.id, ch.version).await?;
        let (scope, category_ids) = match &ch.category_ids {
            Some(given) => {
                let (scope, cats) = scope_of_categories(&mut conn, &project_id, given).await?;
                (
                    scope,
                    Some(cats.into_iter().map(|c| c.id).collect::<Vec<_>>()),
                )
            }
            None => (old.scope, None),
        };
        let parents: Vec<String> = match &ch.parent_ids {
            Some(p) => p.clone(),
            None => db::parents_of(&mut conn, &ch.id)
                .await?
                .into_iter()
                .map(|p| p.id)
                .collect(),
        };
        if ch.parent_ids.is_some() || scope != old.scope {
            check_parents(&mut conn, &project_id, scope, &parents, Some(&ch.id)).await?;
        }
        if scope != old.scope {
            for child in db::children_of(&mut conn, &ch.id).await? {
                if child.scope.depth() <= scope.depth() {
                    return Err(rule(
                        Field::CategoryIds,
                        format!(
                            "child '{}' is {}: the entity cannot move to {}, at or below it",
                            child.name,
                            child.scope.as_str(),
                            scope.as_str()
                        ),
                    ));
                }
            }
            for r in db::references_of(&mut conn, &ch.id).await? {
                if !scope.allows(r.kind) {
                    return Err(rule(
                        Field::CategoryIds,
                        format!(
                            "the entity holds a {} reference ({}), which a {} entity cannot hold",
                            r.kind.as_str(),
                            r.document_path,
                            scope.as_str()
                        ),
                    ));
                }
            }
        }
        (scope, category_ids)
    };
    check_commands(scope, &cmds)?;
    let mut prepared = prepare(app, &c, &cmds).await?;
    let ts = now();
    let fields_change = ch.name.is_some()
        || ch.description.is_some()
        || ch.category_ids.is_some()
        || ch.parent_ids.is_some();
    let before = old.clone();
    let mut tx = app.store.write().await?;
    let version = lock::bump(&mut tx, lock::CODE_ENTITIES, &ch.id, ch.version, &ts).await?;
    let e = Entity {
        name: ch.name.clone().unwrap_or(old.name.clone()),
        description: ch.description.clone().unwrap_or(old.description.clone()),
        scope,
        version,
        updated_at: ts.clone(),
        ..old
    };
    db::update_entity(&mut tx, &e).await?;
    if let Some(ids) = &category_ids {
        db::set_categories(&mut tx, &e.id, ids).await?;
    }
    if let Some(ids) = &ch.parent_ids {
        db::set_parents(&mut tx, &e.id, ids, &ts).await?;
    }
    let mut run = Run::default();
    for (i, cmd) in cmds.iter().enumerate() {
        match run_one(&mut tx, &e, cmd, prepared.remove(&i), &ts).await {
            Ok(r) => run.executed.push((i, r)),
            Err(err) => {
                run.fail(i, err, cmds.len());
                break;
            }
        }
    }
    if !fields_change && run.executed.is_empty() {
        // Nothing took effect: dropping the transaction rolls the version bump back,
        // so the caller's version is still the one to retry with.
        drop(tx);
        return Ok(Outcome {
            entity: Some(before),
            run,
        });
    }
    tx.commit().await?;
    Ok(Outcome {
        entity: Some(e),
        run,
    })
}
