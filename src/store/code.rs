//! The code ontology's repositories: repository binding, categories, entities,
//! references, attachments and the entity edges (BELONGS_TO, RELATED_TO, links).
//! Version checks go through `lock`; nothing here knows about git, LSP or MCP.

use sqlx::AssertSqlSafe;

use crate::domain::code::{
    Category, Entity, EntityEdge, EntityFilter, RefKind, Reference, Repo, Scope,
};
use crate::store::{placeholders, Conn};
use crate::store::{Error, Result};

fn scope_of(s: &str) -> Result<Scope> {
    Scope::parse(s).ok_or_else(|| Error::Internal(format!("stored scope '{s}' is unknown")))
}

// ---- repositories ----

struct RepoRow {
    id: String,
    project_id: String,
    repo_path: String,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(RepoRow {
    id,
    project_id,
    repo_path,
    version,
    created_at,
    updated_at
});

pub async fn insert_repo(conn: &mut Conn, r: &Repo) -> Result<()> {
    sqlx::query("INSERT INTO code_repos (id, project_id, repo_path, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)")
        .bind(&r.id)
        .bind(&r.project_id)
        .bind(&r.repo_path)
        .bind(&r.created_at)
        .bind(&r.updated_at)
        .execute(conn.db())
        .await?;
    Ok(())
}

pub async fn repo_of(conn: &mut Conn, project_id: &str) -> Result<Option<Repo>> {
    let r: Option<RepoRow> = sqlx::query_as(
        "SELECT id, project_id, repo_path, version, created_at, updated_at FROM code_repos WHERE project_id = ?",
    )
    .bind(project_id)
    .fetch_optional(conn.db())
    .await?;
    Ok(r.map(|r| Repo {
        id: r.id,
        project_id: r.project_id,
        repo_path: r.repo_path,
        version: r.version,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }))
}

// ---- categories ----

struct CategoryRow {
    id: String,
    project_id: String,
    scope: String,
    name: String,
    description: Option<String>,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(CategoryRow {
    id,
    project_id,
    scope,
    name,
    description,
    version,
    created_at,
    updated_at
});

impl CategoryRow {
    fn into_category(self) -> Result<Category> {
        Ok(Category {
            scope: scope_of(&self.scope)?,
            id: self.id,
            project_id: self.project_id,
            name: self.name,
            description: self.description,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

const CATEGORY_COLS: &str =
    "c.id, c.project_id, c.scope, c.name, c.description, c.version, c.created_at, c.updated_at";

pub async fn insert_category(conn: &mut Conn, c: &Category) -> Result<()> {
    sqlx::query("INSERT INTO code_categories (id, project_id, scope, name, description, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)")
        .bind(&c.id)
        .bind(&c.project_id)
        .bind(c.scope.as_str())
        .bind(&c.name)
        .bind(&c.description)
        .bind(&c.created_at)
        .bind(&c.updated_at)
        .execute(conn.db())
        .await?;
    Ok(())
}

pub async fn category_named(
    conn: &mut Conn,
    project_id: &str,
    scope: Scope,
    name: &str,
) -> Result<Option<Category>> {
    let r: Option<CategoryRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {CATEGORY_COLS} FROM code_categories c WHERE c.project_id = ? AND c.scope = ? AND lower(c.name) = lower(?)"
    )))
    .bind(project_id)
    .bind(scope.as_str())
    .bind(name)
    .fetch_optional(conn.db())
    .await?;
    r.map(CategoryRow::into_category).transpose()
}

pub async fn categories(conn: &mut Conn, project_id: &str) -> Result<Vec<Category>> {
    let rows: Vec<CategoryRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {CATEGORY_COLS} FROM code_categories c WHERE c.project_id = ? ORDER BY c.rowid"
    )))
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    rows.into_iter().map(CategoryRow::into_category).collect()
}

pub async fn categories_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<Category>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let sql = format!(
        "SELECT {CATEGORY_COLS} FROM code_categories c WHERE c.id IN ({})",
        placeholders(ids.len())
    );
    let mut q = sqlx::query_as::<_, CategoryRow>(AssertSqlSafe(sql));
    for id in ids {
        q = q.bind(id);
    }
    q.fetch_all(conn.db())
        .await?
        .into_iter()
        .map(CategoryRow::into_category)
        .collect()
}

pub async fn categories_of(conn: &mut Conn, entity_id: &str) -> Result<Vec<Category>> {
    let rows: Vec<CategoryRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {CATEGORY_COLS} FROM code_categories c JOIN code_entity_categories ec ON ec.category_id = c.id \
         WHERE ec.entity_id = ? ORDER BY c.name"
    )))
    .bind(entity_id)
    .fetch_all(conn.db())
    .await?;
    rows.into_iter().map(CategoryRow::into_category).collect()
}

/// (entity id, category name) for every category of `entity_ids`, by entity, then
/// name as [`categories_of`] orders them: one statement for a page of search hits.
pub async fn category_names_of(
    conn: &mut Conn,
    entity_ids: &[String],
) -> Result<Vec<(String, String)>> {
    if entity_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT ec.entity_id, c.name FROM code_entity_categories ec JOIN code_categories c ON c.id = ec.category_id \
         WHERE ec.entity_id IN ({}) ORDER BY ec.entity_id, c.name",
        placeholders(entity_ids.len())
    );
    let mut q = sqlx::query_as(AssertSqlSafe(sql));
    for id in entity_ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn.db()).await?)
}

pub async fn set_categories(conn: &mut Conn, entity_id: &str, ids: &[String]) -> Result<()> {
    sqlx::query("DELETE FROM code_entity_categories WHERE entity_id = ?")
        .bind(entity_id)
        .execute(conn.db())
        .await?;
    for c in ids {
        sqlx::query(
            "INSERT INTO code_entity_categories (entity_id, category_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(entity_id)
        .bind(c)
        .execute(conn.db())
        .await?;
    }
    Ok(())
}

// ---- entities ----

struct EntityRow {
    id: String,
    project_id: String,
    name: String,
    description: String,
    scope: String,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(EntityRow {
    id,
    project_id,
    name,
    description,
    scope,
    version,
    created_at,
    updated_at
});

impl EntityRow {
    fn into_entity(self) -> Result<Entity> {
        Ok(Entity {
            scope: scope_of(&self.scope)?,
            id: self.id,
            project_id: self.project_id,
            name: self.name,
            description: self.description,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

const ENTITY_COLS: &str =
    "e.id, e.project_id, e.name, e.description, e.scope, e.version, e.created_at, e.updated_at";

async fn entities_where(conn: &mut Conn, sql_tail: &str, binds: &[&str]) -> Result<Vec<Entity>> {
    let sql = format!("SELECT {ENTITY_COLS} FROM code_entities e {sql_tail}");
    let mut q = sqlx::query_as::<_, EntityRow>(AssertSqlSafe(sql));
    for b in binds {
        q = q.bind(*b);
    }
    q.fetch_all(conn.db())
        .await?
        .into_iter()
        .map(EntityRow::into_entity)
        .collect()
}

pub async fn insert_entity(conn: &mut Conn, e: &Entity) -> Result<()> {
    sqlx::query("INSERT INTO code_entities (id, project_id, name, description, scope, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)")
        .bind(&e.id)
        .bind(&e.project_id)
        .bind(&e.name)
        .bind(&e.description)
        .bind(e.scope.as_str())
        .bind(&e.created_at)
        .bind(&e.updated_at)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// Writes name, description and scope (the version was claimed by `lock::bump`).
pub async fn update_entity(conn: &mut Conn, e: &Entity) -> Result<()> {
    sqlx::query("UPDATE code_entities SET name = ?, description = ?, scope = ? WHERE id = ?")
        .bind(&e.name)
        .bind(&e.description)
        .bind(e.scope.as_str())
        .bind(&e.id)
        .execute(conn.db())
        .await?;
    Ok(())
}

pub async fn entity(conn: &mut Conn, id: &str) -> Result<Option<Entity>> {
    Ok(entities_where(conn, "WHERE e.id = ?", &[id]).await?.pop())
}

pub async fn entities_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<Entity>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let tail = format!("WHERE e.id IN ({})", placeholders(ids.len()));
    let binds: Vec<&str> = ids.iter().map(String::as_str).collect();
    entities_where(conn, &tail, &binds).await
}

pub async fn parents_of(conn: &mut Conn, id: &str) -> Result<Vec<Entity>> {
    entities_where(
        conn,
        "JOIN code_belongs b ON b.parent_id = e.id WHERE b.child_id = ? ORDER BY e.name",
        &[id],
    )
    .await
}

pub async fn children_of(conn: &mut Conn, id: &str) -> Result<Vec<Entity>> {
    entities_where(
        conn,
        "JOIN code_belongs b ON b.child_id = e.id WHERE b.parent_id = ? ORDER BY e.name",
        &[id],
    )
    .await
}

pub async fn set_parents(
    conn: &mut Conn,
    child: &str,
    parents: &[String],
    now: &str,
) -> Result<()> {
    sqlx::query("DELETE FROM code_belongs WHERE child_id = ?")
        .bind(child)
        .execute(conn.db())
        .await?;
    for p in parents {
        sqlx::query(
            "INSERT INTO code_belongs (child_id, parent_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(child)
        .bind(p)
        .bind(now)
        .execute(conn.db())
        .await?;
    }
    Ok(())
}

/// Every entity above `id` in the BELONGS_TO hierarchy (for cycle checks).
pub async fn ancestors(conn: &mut Conn, id: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "WITH RECURSIVE up(id) AS (SELECT parent_id FROM code_belongs WHERE child_id = ? \
         UNION SELECT b.parent_id FROM code_belongs b JOIN up ON b.child_id = up.id) SELECT id FROM up",
    )
    .bind(id)
    .fetch_all(conn.db())
    .await?)
}

pub async fn delete_entity_edges_and_orphans(conn: &mut Conn, id: &str) -> Result<Vec<String>> {
    // References attached only to this entity would become orphans: they go with it.
    let orphans: Vec<String> = sqlx::query_scalar(
        "SELECT a.reference_id FROM code_attachments a WHERE a.entity_id = ? AND NOT EXISTS \
         (SELECT 1 FROM code_attachments o WHERE o.reference_id = a.reference_id AND o.entity_id <> a.entity_id)",
    )
    .bind(id)
    .fetch_all(conn.db())
    .await?;
    sqlx::query("DELETE FROM code_attachments WHERE entity_id = ?")
        .bind(id)
        .execute(conn.db())
        .await?;
    for r in &orphans {
        sqlx::query("DELETE FROM code_references WHERE id = ?")
            .bind(r)
            .execute(conn.db())
            .await?;
    }
    Ok(orphans)
}

pub async fn find_entities(conn: &mut Conn, f: &EntityFilter<'_>) -> Result<(Vec<Entity>, i64)> {
    let mut wh = vec!["e.project_id = ?".to_string()];
    let mut binds: Vec<String> = vec![f.project_id.to_string()];
    if let Some(s) = f.scope {
        wh.push("e.scope = ?".into());
        binds.push(s.as_str().into());
    }
    if let Some(c) = f.category_id {
        wh.push("EXISTS (SELECT 1 FROM code_entity_categories ec WHERE ec.entity_id = e.id AND ec.category_id = ?)".into());
        binds.push(c.into());
    }
    if let Some(p) = f.parent_id {
        wh.push(
            "EXISTS (SELECT 1 FROM code_belongs b WHERE b.child_id = e.id AND b.parent_id = ?)"
                .into(),
        );
        binds.push(p.into());
    }
    if let Some(d) = f.document_path {
        wh.push("EXISTS (SELECT 1 FROM code_attachments a JOIN code_references r ON r.id = a.reference_id \
                 WHERE a.entity_id = e.id AND r.document_path = ?)".into());
        binds.push(d.into());
    }
    if let Some(n) = f.name {
        wh.push("instr(lower(e.name), lower(?)) > 0".into());
        binds.push(n.into());
    }
    let cond = wh.join(" AND ");
    let mut q = sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM code_entities e WHERE {cond}"
    )));
    for b in &binds {
        q = q.bind(b);
    }
    let total = q.fetch_one(conn.db()).await?;
    let sql = format!(
        "SELECT {ENTITY_COLS} FROM code_entities e WHERE {cond} \
         ORDER BY CASE e.scope WHEN 'Domain' THEN 1 WHEN 'Feature' THEN 2 WHEN 'Namespace' THEN 3 WHEN 'Component' THEN 4 ELSE 5 END, e.name, e.id \
         LIMIT ? OFFSET ?"
    );
    let mut q = sqlx::query_as::<_, EntityRow>(AssertSqlSafe(sql));
    for b in &binds {
        q = q.bind(b);
    }
    let rows = q.bind(f.limit).bind(f.offset).fetch_all(conn.db()).await?;
    Ok((
        rows.into_iter()
            .map(EntityRow::into_entity)
            .collect::<Result<_>>()?,
        total,
    ))
}

pub async fn entities_of_project(conn: &mut Conn, project_id: &str) -> Result<Vec<Entity>> {
    entities_where(
        conn,
        "WHERE e.project_id = ? ORDER BY e.name, e.id",
        &[project_id],
    )
    .await
}

pub async fn entities_of_reference(conn: &mut Conn, reference_id: &str) -> Result<Vec<Entity>> {
    entities_where(
        conn,
        "JOIN code_attachments a ON a.entity_id = e.id WHERE a.reference_id = ? ORDER BY e.name",
        &[reference_id],
    )
    .await
}

// ---- edges ----

pub async fn attach(conn: &mut Conn, entity: &str, reference: &str, now: &str) -> Result<bool> {
    let done = sqlx::query("INSERT INTO code_attachments (entity_id, reference_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(entity)
        .bind(reference)
        .bind(now)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn unattach(conn: &mut Conn, entity: &str, reference: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM code_attachments WHERE entity_id = ? AND reference_id = ?")
        .bind(entity)
        .bind(reference)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn attachment_count(conn: &mut Conn, entity: &str) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM code_attachments WHERE entity_id = ?")
            .bind(entity)
            .fetch_one(conn.db())
            .await?,
    )
}

pub async fn relate(
    conn: &mut Conn,
    from: &str,
    to: &str,
    note: Option<&str>,
    now: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO code_relations (from_id, to_id, note, created_at) VALUES (?, ?, ?, ?) \
                 ON CONFLICT (from_id, to_id) DO UPDATE SET note = excluded.note",
    )
    .bind(from)
    .bind(to)
    .bind(note)
    .bind(now)
    .execute(conn.db())
    .await?;
    Ok(())
}

pub async fn unrelate(conn: &mut Conn, from: &str, to: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM code_relations WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)")
        .bind(from)
        .bind(to)
        .bind(to)
        .bind(from)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn link(conn: &mut Conn, from: &str, to: &str, ty: &str, now: &str) -> Result<bool> {
    let done = sqlx::query("INSERT INTO code_links (from_id, to_id, link_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(from)
        .bind(to)
        .bind(ty)
        .bind(now)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn unlink(conn: &mut Conn, from: &str, to: &str, ty: &str) -> Result<bool> {
    let done =
        sqlx::query("DELETE FROM code_links WHERE from_id = ? AND to_id = ? AND link_type = ?")
            .bind(from)
            .bind(to)
            .bind(ty)
            .execute(conn.db())
            .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn edges_of(conn: &mut Conn, id: &str) -> Result<Vec<EntityEdge>> {
    struct EdgeRow {
        other: String,
        kind: String,
        outgoing: bool,
        note: Option<String>,
    }

    crate::store::from_row!(EdgeRow {
        other,
        kind,
        outgoing: flag,
        note
    });
    let rows: Vec<EdgeRow> = sqlx::query_as(
        "SELECT to_id AS other, 'RELATED_TO' AS kind, 1 AS outgoing, note FROM code_relations WHERE from_id = ?1 \
         UNION ALL SELECT from_id, 'RELATED_TO', 0, note FROM code_relations WHERE to_id = ?1 \
         UNION ALL SELECT to_id, link_type, 1, NULL FROM code_links WHERE from_id = ?1 \
         UNION ALL SELECT from_id, link_type, 0, NULL FROM code_links WHERE to_id = ?1",
    )
    .bind(id)
    .fetch_all(conn.db())
    .await?;
    let ids: Vec<String> = rows.iter().map(|r| r.other.clone()).collect();
    let ents = entities_by_ids(conn, &ids).await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let other = ents.iter().find(|e| e.id == r.other)?.clone();
            Some(EntityEdge {
                other,
                kind: r.kind,
                outgoing: r.outgoing,
                note: r.note,
            })
        })
        .collect())
}

// ---- references ----

struct RefRow {
    id: String,
    project_id: String,
    kind: String,
    document_path: String,
    start_line: i64,
    end_line: i64,
    lsp_symbol: Option<String>,
    lsp_kind: Option<i64>,
    anchor: Option<String>,
    description: String,
    content_type: String,
    commit_sha: String,
    blob_sha: String,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(RefRow {
    id,
    project_id,
    kind,
    document_path,
    start_line,
    end_line,
    lsp_symbol,
    lsp_kind,
    anchor,
    description,
    content_type,
    commit_sha,
    blob_sha,
    version,
    created_at,
    updated_at
});

impl RefRow {
    fn into_ref(self) -> Result<Reference> {
        Ok(Reference {
            kind: RefKind::parse(&self.kind)
                .ok_or_else(|| Error::Internal(format!("stored kind '{}'", self.kind)))?,
            id: self.id,
            project_id: self.project_id,
            document_path: self.document_path,
            start_line: self.start_line,
            end_line: self.end_line,
            lsp_symbol: self.lsp_symbol,
            lsp_kind: self.lsp_kind,
            anchor: self.anchor,
            description: self.description,
            content_type: self.content_type,
            commit_sha: self.commit_sha,
            blob_sha: self.blob_sha,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

const REF_COLS: &str = "r.id, r.project_id, r.kind, r.document_path, r.start_line, r.end_line, r.lsp_symbol, r.lsp_kind, \
                        r.anchor, r.description, r.content_type, r.commit_sha, r.blob_sha, r.version, r.created_at, r.updated_at";

async fn refs_where(conn: &mut Conn, tail: &str, binds: &[&str]) -> Result<Vec<Reference>> {
    let mut q = sqlx::query_as::<_, RefRow>(AssertSqlSafe(format!(
        "SELECT {REF_COLS} FROM code_references r {tail}"
    )));
    for b in binds {
        q = q.bind(*b);
    }
    q.fetch_all(conn.db())
        .await?
        .into_iter()
        .map(RefRow::into_ref)
        .collect()
}

pub async fn insert_reference(conn: &mut Conn, r: &Reference) -> Result<()> {
    sqlx::query("INSERT INTO code_references (id, project_id, kind, document_path, start_line, end_line, lsp_symbol, lsp_kind, \
                 anchor, description, content_type, commit_sha, blob_sha, version, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)")
        .bind(&r.id)
        .bind(&r.project_id)
        .bind(r.kind.as_str())
        .bind(&r.document_path)
        .bind(r.start_line)
        .bind(r.end_line)
        .bind(&r.lsp_symbol)
        .bind(r.lsp_kind)
        .bind(&r.anchor)
        .bind(&r.description)
        .bind(&r.content_type)
        .bind(&r.commit_sha)
        .bind(&r.blob_sha)
        .bind(&r.created_at)
        .bind(&r.updated_at)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// Writes the mutable fields (the version was claimed by `lock::bump`).
pub async fn update_reference(conn: &mut Conn, r: &Reference) -> Result<()> {
    sqlx::query("UPDATE code_references SET start_line = ?, end_line = ?, lsp_symbol = ?, lsp_kind = ?, anchor = ?, \
                 description = ?, commit_sha = ?, blob_sha = ? WHERE id = ?")
        .bind(r.start_line)
        .bind(r.end_line)
        .bind(&r.lsp_symbol)
        .bind(r.lsp_kind)
        .bind(&r.anchor)
        .bind(&r.description)
        .bind(&r.commit_sha)
        .bind(&r.blob_sha)
        .bind(&r.id)
        .execute(conn.db())
        .await?;
    Ok(())
}

pub async fn reference(conn: &mut Conn, id: &str) -> Result<Option<Reference>> {
    Ok(refs_where(conn, "WHERE r.id = ?", &[id]).await?.pop())
}

pub async fn references_of(conn: &mut Conn, entity_id: &str) -> Result<Vec<Reference>> {
    refs_where(
        conn,
        "JOIN code_attachments a ON a.reference_id = r.id WHERE a.entity_id = ? ORDER BY r.document_path, r.start_line",
        &[entity_id],
    )
    .await
}

pub async fn references_in(
    conn: &mut Conn,
    project_id: &str,
    path: &str,
) -> Result<Vec<Reference>> {
    refs_where(
        conn,
        "WHERE r.project_id = ? AND r.document_path = ? ORDER BY r.start_line, r.id",
        &[project_id, path],
    )
    .await
}

/// References by id (any order); unknown ids are skipped.
pub async fn references_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<Reference>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let tail = format!("WHERE r.id IN ({})", crate::store::placeholders(ids.len()));
    let binds: Vec<&str> = ids.iter().map(String::as_str).collect();
    refs_where(conn, &tail, &binds).await
}

pub async fn references_of_project(conn: &mut Conn, project_id: &str) -> Result<Vec<Reference>> {
    refs_where(
        conn,
        "WHERE r.project_id = ? ORDER BY r.document_path, r.start_line, r.id",
        &[project_id],
    )
    .await
}

/// (reference id, entity id) pairs of every attachment in a project.
pub async fn attachments_of_project(
    conn: &mut Conn,
    project_id: &str,
) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT a.reference_id, a.entity_id FROM code_attachments a JOIN code_entities e ON e.id = a.entity_id WHERE e.project_id = ?",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

/// (child, parent) pairs and (entity, category) pairs of a project, for validation.
pub async fn belongs_of_project(
    conn: &mut Conn,
    project_id: &str,
) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT b.child_id, b.parent_id FROM code_belongs b JOIN code_entities e ON e.id = b.child_id WHERE e.project_id = ?",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

pub async fn classifications_of_project(
    conn: &mut Conn,
    project_id: &str,
) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT ec.entity_id, c.scope FROM code_entity_categories ec JOIN code_categories c ON c.id = ec.category_id \
         WHERE c.project_id = ?",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

pub async fn delete_reference(conn: &mut Conn, id: &str) -> Result<()> {
    sqlx::query("DELETE FROM code_references WHERE id = ?")
        .bind(id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// Reference counts per document, most referenced first.
pub async fn document_counts(conn: &mut Conn, project_id: &str) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT document_path, COUNT(*) AS n FROM code_references WHERE project_id = ? \
         GROUP BY document_path ORDER BY n DESC, document_path",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

pub async fn count_references(conn: &mut Conn, project_id: &str) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM code_references WHERE project_id = ?")
            .bind(project_id)
            .fetch_one(conn.db())
            .await?,
    )
}

pub async fn scope_counts(conn: &mut Conn, project_id: &str) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT scope, COUNT(*) FROM code_entities WHERE project_id = ? GROUP BY scope",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

/// (reference id, entity id, entity name, entity scope) for every attachment of a
/// reference in one document, in one query (analysis of a large file stays cheap).
pub async fn document_attachments(
    conn: &mut Conn,
    project_id: &str,
    path: &str,
) -> Result<Vec<(String, String, String, String)>> {
    Ok(sqlx::query_as(
        "SELECT a.reference_id, e.id, e.name, e.scope FROM code_attachments a \
         JOIN code_references r ON r.id = a.reference_id JOIN code_entities e ON e.id = a.entity_id \
         WHERE r.project_id = ? AND r.document_path = ? ORDER BY e.name, e.id",
    )
    .bind(project_id)
    .bind(path)
    .fetch_all(conn.db())
    .await?)
}
