//! Use cases of the `code` toolset: binding a repository to a project, the taxonomy,
//! entities run through the command model, references, staleness analysis and graph
//! validation. Reads the repository only through `git` and `lsp`; nothing here knows
//! about MCP or JSON.
//!
//! Slow outside work (git, language servers) happens before a write transaction
//! opens, so `BEGIN IMMEDIATE` is never held while a language server thinks.

pub mod analysis;
pub mod entity;
pub mod overview;
pub mod refs;
pub mod track;
pub mod validate;

use std::path::PathBuf;

use crate::domain::code::{Category, Entity, Reference, Repo, Scope};
use crate::domain::field::{Field, Tool};
use crate::domain::id::new_id;
use crate::domain::{now, Project};
use crate::error::{Details, Error, Result};
use crate::git::GitCli;
use crate::repo_fs::{PathError, RepoFs};
use crate::service::App;
use crate::store::{self, code as db, lock};

/// A project's repository, ready to read.
pub struct Ctx {
    pub project_id: String,
    pub root: PathBuf,
    pub git: GitCli,
    /// Every file the toolset reads or writes in the repository goes through it.
    pub fs: RepoFs,
}

/// A refused or unusable repository path as this layer's error, naming `parameter`.
pub fn path_error(parameter: Field, e: PathError) -> Error {
    match e {
        PathError::Invalid(m) | PathError::Escapes(m) | PathError::Refused(m) => {
            Error::validation(parameter, m)
        }
        PathError::Io(m) => Error::invalid(m),
    }
}

impl Ctx {
    /// The real path of a repository-relative document, `None` when it does not
    /// exist; refused when it leaves the repository through a symbolic link or is not
    /// a regular file.
    pub fn file(&self, rel: &str) -> Result<Option<PathBuf>> {
        let Some(real) = self
            .fs
            .resolve(rel)
            .map_err(|e| path_error(Field::DocumentPath, e))?
        else {
            return Ok(None);
        };
        if !real.is_file() {
            return Err(Error::validation(
                Field::DocumentPath,
                format!("{rel} is not a file"),
            ));
        }
        Ok(Some(real))
    }

    /// The text of a document that must exist.
    pub fn read(&self, rel: &str) -> Result<String> {
        match self
            .fs
            .read(rel)
            .map_err(|e| path_error(Field::DocumentPath, e))?
        {
            Some(bytes) => text_of(bytes, rel),
            None => Err(Error::NotFound {
                entity: "document",
                id: rel.to_string(),
            }),
        }
    }
}

/// The bytes of a document as text, refusing what is not UTF-8.
pub fn text_of(bytes: Vec<u8>, rel: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        Error::invalid(format!(
            "{rel} is not UTF-8 text; reference text files only"
        ))
    })
}

/// The repository bound to a project, or a NOT_FOUND telling the agent to bind one.
pub async fn ctx(app: &App, project_id: &str) -> Result<Ctx> {
    let mut conn = app.store.read().await?;
    let Some(repo) = db::repo_of(&mut conn, project_id).await? else {
        if !store::project::exists(&mut conn, project_id).await? {
            return Err(Error::not_found("project", project_id));
        }
        return Err(Error::InvalidOperation {
            message: format!(
                "project {project_id} has no repository: call {} with {} and {} first",
                Tool::InitProject,
                Field::ProjectId,
                Field::RepoPath
            ),
            details: None,
        });
    };
    let root = PathBuf::from(&repo.repo_path);
    if !root.is_dir() {
        return Err(Error::invalid(format!(
            "the repository of project {project_id} is gone from {}",
            repo.repo_path
        )));
    }
    let fs = RepoFs::new(&root).map_err(|e| path_error(Field::RepoPath, e))?;
    Ok(Ctx {
        project_id: project_id.to_string(),
        git: GitCli::at(&root),
        root,
        fs,
    })
}

pub struct InitProject {
    pub name: String,
    pub repo_path: String,
    pub description: Option<String>,
    pub project_id: Option<String>,
}

pub struct Initialized {
    pub project: Project,
    pub created_project: bool,
    pub repo: Repo,
    pub categories: Vec<Category>,
    pub head: Option<String>,
}

pub async fn init_project(app: &App, p: InitProject) -> Result<Initialized> {
    let path = PathBuf::from(&p.repo_path);
    if !path.is_absolute() {
        return Err(Error::validation(
            Field::RepoPath,
            "must be an absolute path to a git work tree",
        ));
    }
    let git = GitCli::open(&path).await?;
    let root = git.root().to_path_buf();
    let head = git.head().await.ok();
    let ts = now();
    let mut tx = app.store.write().await?;
    let (project, created_project) = match &p.project_id {
        Some(id) => {
            let Some(mut pr) = store::project::get(&mut tx, id).await? else {
                return Err(Error::not_found("project", id.clone()));
            };
            if db::repo_of(&mut tx, id).await?.is_some() {
                return Err(Error::invalid(format!(
                    "project {id} already has a repository; one project holds one repository"
                )));
            }
            if pr.description.is_none() {
                pr.description = p.description.clone();
            }
            (pr, false)
        }
        None => {
            let pr = Project {
                id: new_id(),
                name: p.name.clone(),
                summary: String::new(),
                description: p.description.clone(),
                tags: vec![],
                version: 1,
                created_at: ts.clone(),
                updated_at: ts.clone(),
            };
            store::project::insert(&mut tx, &pr).await?;
            (pr, true)
        }
    };
    let repo = Repo {
        id: new_id(),
        project_id: project.id.clone(),
        repo_path: root.to_string_lossy().into_owned(),
        version: 1,
        created_at: ts.clone(),
        updated_at: ts.clone(),
    };
    db::insert_repo(&mut tx, &repo).await?;
    crate::service::memory::project_subject::for_new_project(&mut tx, &project.id, &project.name)
        .await?;
    let mut categories = Vec::new();
    for scope in Scope::ALL {
        for name in scope.default_categories() {
            let c = Category {
                id: new_id(),
                project_id: project.id.clone(),
                scope,
                name: (*name).to_string(),
                description: None,
                version: 1,
                created_at: ts.clone(),
                updated_at: ts.clone(),
            };
            db::insert_category(&mut tx, &c).await?;
            categories.push(c);
        }
    }
    tx.commit().await?;
    Ok(Initialized {
        project,
        created_project,
        repo,
        categories,
        head,
    })
}

pub async fn create_category(
    app: &App,
    project_id: &str,
    scope: Scope,
    name: &str,
    description: Option<String>,
) -> Result<Category> {
    ctx(app, project_id).await?;
    let mut tx = app.store.write().await?;
    if let Some(c) = db::category_named(&mut tx, project_id, scope, name).await? {
        return Err(Error::InvalidOperation {
            message: format!(
                "category '{}' already exists at scope {} (id {})",
                c.name,
                scope.as_str(),
                c.id
            ),
            details: Some(Details::CategoryExists {
                category_id: c.id.clone(),
            }),
        });
    }
    let ts = now();
    let c = Category {
        id: new_id(),
        project_id: project_id.to_string(),
        scope,
        name: name.to_string(),
        description,
        version: 1,
        created_at: ts.clone(),
        updated_at: ts,
    };
    db::insert_category(&mut tx, &c).await?;
    tx.commit().await?;
    Ok(c)
}

/// An entity with everything around it.
pub struct EntityView {
    pub entity: Entity,
    pub categories: Vec<Category>,
    pub references: Vec<Reference>,
    pub parents: Vec<Entity>,
    pub children: Vec<Entity>,
    pub edges: Vec<crate::domain::code::EntityEdge>,
}

pub async fn get_entity(app: &App, id: &str) -> Result<EntityView> {
    let mut conn = app.store.read().await?;
    view(&mut conn, id).await
}

pub async fn view(conn: &mut store::Conn, id: &str) -> Result<EntityView> {
    let Some(entity) = db::entity(conn, id).await? else {
        return Err(Error::not_found("entity", id));
    };
    Ok(EntityView {
        categories: db::categories_of(conn, id).await?,
        references: db::references_of(conn, id).await?,
        parents: db::parents_of(conn, id).await?,
        children: db::children_of(conn, id).await?,
        edges: db::edges_of(conn, id).await?,
        entity,
    })
}

pub async fn find_entities(
    app: &App,
    f: &crate::domain::code::EntityFilter<'_>,
) -> Result<(Vec<(Entity, Vec<Category>)>, i64)> {
    ctx(app, f.project_id).await?;
    let mut conn = app.store.read().await?;
    let (ents, total) = db::find_entities(&mut conn, f).await?;
    let mut out = Vec::with_capacity(ents.len());
    for e in ents {
        let cats = db::categories_of(&mut conn, &e.id).await?;
        out.push((e, cats));
    }
    Ok((out, total))
}

/// Entities with references in one document, each with those references.
pub async fn document_entities(
    app: &App,
    project_id: &str,
    path: &str,
) -> Result<Vec<(Entity, Vec<Reference>)>> {
    ctx(app, project_id).await?;
    let mut conn = app.store.read().await?;
    let refs = db::references_in(&mut conn, project_id, path).await?;
    let att = db::document_attachments(&mut conn, project_id, path).await?;
    let mut ids: Vec<String> = att.iter().map(|a| a.1.clone()).collect();
    ids.dedup();
    let mut ents = db::entities_by_ids(&mut conn, &ids).await?;
    ents.sort_by(|a, b| a.scope.cmp(&b.scope).then(a.name.cmp(&b.name)));
    Ok(ents
        .into_iter()
        .map(|e| {
            let mine: Vec<Reference> = refs
                .iter()
                .filter(|r| att.iter().any(|a| a.0 == r.id && a.1 == e.id))
                .cloned()
                .collect();
            (e, mine)
        })
        .collect())
}

pub struct Deleted {
    pub references: Vec<String>,
}

pub async fn delete_entity(app: &App, id: &str, version: i64) -> Result<Deleted> {
    let mut tx = app.store.write().await?;
    lock::check(&mut tx, lock::CODE_ENTITIES, id, version).await?;
    let children = db::children_of(&mut tx, id).await?;
    if !children.is_empty() {
        let list: Vec<(String, String, &'static str)> = children
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), c.scope.as_str()))
            .collect();
        return Err(Error::InvalidOperation {
            message: format!(
                "entity {id} has {} child entit(ies): delete them or give them other parents first",
                children.len()
            ),
            details: Some(Details::Children(list)),
        });
    }
    let refs = db::delete_entity_edges_and_orphans(&mut tx, id).await?;
    lock::delete(&mut tx, lock::CODE_ENTITIES, id, Some(version)).await?;
    tx.commit().await?;
    Ok(Deleted { references: refs })
}
