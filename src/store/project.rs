//! Projects: the top container and the tenant every other row belongs to.

use sqlx::AssertSqlSafe;

use crate::domain::Project;
use crate::store::Result;
use crate::store::{lock, tag, Conn};

struct Row {
    id: String,
    name: String,
    summary: String,
    description: Option<String>,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(Row {
    id,
    name,
    summary,
    description,
    version,
    created_at,
    updated_at
});

impl Row {
    fn into_project(self, tags: Vec<String>) -> Project {
        Project {
            id: self.id,
            name: self.name,
            summary: self.summary,
            description: self.description,
            tags,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

const COLS: &str = "id, name, summary, description, version, created_at, updated_at";

pub async fn insert(conn: &mut Conn, p: &Project) -> Result<()> {
    sqlx::query("INSERT INTO projects (id, name, summary, description, version, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)")
        .bind(&p.id)
        .bind(&p.name)
        .bind(&p.summary)
        .bind(&p.description)
        .bind(&p.created_at)
        .bind(&p.updated_at)
        .execute(conn.db())
        .await?;
    tag::set(conn, "PROJECT", &p.id, &p.tags).await
}

pub async fn get(conn: &mut Conn, id: &str) -> Result<Option<Project>> {
    let row: Option<Row> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {COLS} FROM projects WHERE id = ?"
    )))
    .bind(id)
    .fetch_optional(conn.db())
    .await?;
    match row {
        Some(r) => {
            let tags = tag::of(conn, id).await?;
            Ok(Some(r.into_project(tags)))
        }
        None => Ok(None),
    }
}

pub async fn exists(conn: &mut Conn, id: &str) -> Result<bool> {
    Ok(
        sqlx::query_scalar::<_, i64>("SELECT 1 FROM projects WHERE id = ?")
            .bind(id)
            .fetch_optional(conn.db())
            .await?
            .is_some(),
    )
}

/// Writes the fields of `p` over the stored row after claiming `expected`.
pub async fn update(conn: &mut Conn, p: &Project, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, lock::PROJECTS, &p.id, expected, &p.updated_at).await?;
    sqlx::query("UPDATE projects SET name = ?, summary = ?, description = ? WHERE id = ?")
        .bind(&p.name)
        .bind(&p.summary)
        .bind(&p.description)
        .bind(&p.id)
        .execute(conn.db())
        .await?;
    tag::set(conn, "PROJECT", &p.id, &p.tags).await?;
    Ok(v)
}

pub struct Search<'a> {
    pub query: Option<&'a str>,
    pub tags: &'a [String],
    pub limit: i64,
    pub offset: i64,
}

pub async fn search(conn: &mut Conn, s: &Search<'_>) -> Result<(Vec<Project>, i64)> {
    let mut wheres: Vec<String> = Vec::new();
    let mut binds: Vec<String> = Vec::new();
    if let Some(q) = s.query {
        wheres.push("(name LIKE ? ESCAPE '\\' OR summary LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')".into());
        let pat = super::item::like_pattern(q);
        binds.extend([pat.clone(), pat.clone(), pat]);
    }
    if !s.tags.is_empty() {
        wheres.push(format!(
            "id IN (SELECT entity_id FROM tags WHERE tag IN ({}))",
            super::placeholders(s.tags.len())
        ));
        binds.extend(s.tags.iter().cloned());
    }
    let w = if wheres.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", wheres.join(" AND "))
    };
    let mut count =
        sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!("SELECT COUNT(*) FROM projects {w}")));
    for b in &binds {
        count = count.bind(b);
    }
    let total = count.fetch_one(conn.db()).await?;
    let mut q = sqlx::query_as::<_, Row>(AssertSqlSafe(format!(
        "SELECT {COLS} FROM projects {w} ORDER BY created_at, id LIMIT ? OFFSET ?"
    )));
    for b in &binds {
        q = q.bind(b);
    }
    let rows = q.bind(s.limit).bind(s.offset).fetch_all(conn.db()).await?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let mut tags = tag::load(conn, &ids).await?;
    let out = rows
        .into_iter()
        .map(|r| {
            let t = tags.remove(&r.id).unwrap_or_default();
            r.into_project(t)
        })
        .collect();
    Ok((out, total))
}

/// Every project's id and name, oldest first (what a name is resolved against).
pub async fn names(conn: &mut Conn) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as::<_, (String, String)>(
        "SELECT id, name FROM projects ORDER BY created_at, id",
    )
    .fetch_all(conn.db())
    .await?)
}

/// Every repository bound to a project (code or ontology): (project id, root path).
pub async fn repo_roots(conn: &mut Conn) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as::<_, (String, String)>(
        "SELECT project_id, repo_path FROM code_repos UNION SELECT project_id, repo_path FROM ontology_repos",
    )
    .fetch_all(conn.db())
    .await?)
}
