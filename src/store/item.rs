//! Features and tasks: the two containers that move through a workflow. One
//! repository serves both; `ItemKind` picks the table and the few columns that differ.

use sqlx::AssertSqlSafe;

use crate::domain::{Item, ItemKind, Priority, Status};
use crate::store::{lock, placeholders, tag, Conn};
use crate::store::{Error, Result};

struct Row {
    id: String,
    project_id: Option<String>,
    feature_id: Option<String>,
    name: String,
    summary: String,
    description: Option<String>,
    status: String,
    priority: i64,
    complexity: Option<i64>,
    status_reason: Option<String>,
    version: i64,
    created_at: String,
    updated_at: String,
    /// The item's tags as a JSON array, read in the same statement as the row.
    tags: String,
    /// Its open blockers (ids, or `NO_OP`) as a JSON array.
    blocked_by: String,
}

crate::store::from_row!(Row {
    id,
    project_id,
    feature_id,
    name,
    summary,
    description,
    status,
    priority,
    complexity,
    status_reason,
    version,
    created_at,
    updated_at,
    tags,
    blocked_by
});

impl Row {
    fn into_item(self, kind: ItemKind) -> Result<Item> {
        let tags: Vec<String> = serde_json::from_str(&self.tags).map_err(|e| {
            Error::Internal(format!(
                "{} {} has unreadable tags: {e}",
                kind.as_str(),
                self.id
            ))
        })?;
        let blocked_by: Vec<String> = serde_json::from_str(&self.blocked_by).map_err(|e| {
            Error::Internal(format!(
                "{} {} has unreadable blockers: {e}",
                kind.as_str(),
                self.id
            ))
        })?;
        let status = Status::parse(&self.status).ok_or_else(|| {
            Error::Internal(format!(
                "{} {} has unknown status '{}'",
                kind.as_str(),
                self.id,
                self.status
            ))
        })?;
        Ok(Item {
            kind,
            id: self.id,
            project_id: self.project_id,
            feature_id: self.feature_id,
            name: self.name,
            summary: self.summary,
            description: self.description,
            status,
            priority: Priority::from_rank(self.priority),
            complexity: self.complexity,
            status_reason: self.status_reason,
            tags,
            blocked_by,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

pub fn table(kind: ItemKind) -> lock::Table {
    match kind {
        ItemKind::Feature => lock::FEATURES,
        ItemKind::Task => lock::TASKS,
    }
}

/// The row, its tags and its open blockers in one statement: each statement is a
/// round trip to sqlx's connection thread, and those trips, not SQLite, are most of a
/// small read's cost. An open blocker is a NO_OP edge or an item not yet CLOSED.
fn select(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Task => {
            "SELECT x.id, x.project_id, x.feature_id, x.title AS name, x.summary, x.description, x.status, x.priority, \
             x.complexity, x.status_reason, x.version, x.created_at, x.updated_at, \
             (SELECT json_group_array(t.tag) FROM (SELECT tag FROM tags WHERE entity_id = x.id ORDER BY tag) t) AS tags, \
             (SELECT json_group_array(COALESCE(d.from_id, 'NO_OP')) FROM dependencies d LEFT JOIN tasks b ON b.id = d.from_id \
              WHERE d.to_id = x.id AND d.type = 'BLOCKS' AND (d.from_id IS NULL OR b.status <> 'CLOSED')) AS blocked_by \
             FROM tasks x"
        }
        ItemKind::Feature => {
            "SELECT x.id, x.project_id, NULL AS feature_id, x.name, x.summary, x.description, x.status, x.priority, \
             NULL AS complexity, x.status_reason, x.version, x.created_at, x.updated_at, \
             (SELECT json_group_array(t.tag) FROM (SELECT tag FROM tags WHERE entity_id = x.id ORDER BY tag) t) AS tags, \
             (SELECT json_group_array(COALESCE(d.from_id, 'NO_OP')) FROM dependencies d LEFT JOIN features b ON b.id = d.from_id \
              WHERE d.to_id = x.id AND d.type = 'BLOCKS' AND (d.from_id IS NULL OR b.status <> 'CLOSED')) AS blocked_by \
             FROM features x"
        }
    }
}

/// SQL predicate: item `x` has a blocker that is not an item (NO_OP) or is not CLOSED.
pub fn blocked_sql(kind: ItemKind) -> String {
    format!(
        "EXISTS (SELECT 1 FROM dependencies d LEFT JOIN {t} b ON b.id = d.from_id \
         WHERE d.to_id = x.id AND d.type = 'BLOCKS' AND (d.from_id IS NULL OR b.status <> 'CLOSED'))",
        t = table(kind).name
    )
}

/// A LIKE pattern matching `q` anywhere, with LIKE's own wildcards escaped.
pub fn like_pattern(q: &str) -> String {
    let mut s = String::with_capacity(q.len() + 2);
    s.push('%');
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('%');
    s
}

/// Inserts `it` and its tags. The project and feature are the caller's to check,
/// in the same transaction.
pub async fn insert(conn: &mut Conn, it: &Item) -> Result<()> {
    match it.kind {
        ItemKind::Task => {
            sqlx::query(
                "INSERT INTO tasks (id, project_id, feature_id, title, summary, description, status, \
                 priority, complexity, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            )
            .bind(&it.id)
            .bind(&it.project_id)
            .bind(&it.feature_id)
            .bind(&it.name)
            .bind(&it.summary)
            .bind(&it.description)
            .bind(it.status.as_str())
            .bind(it.priority.rank())
            .bind(it.complexity.unwrap_or(5))
            .bind(&it.created_at)
            .bind(&it.updated_at)
            .execute(conn.db())
            .await?;
        }
        ItemKind::Feature => {
            sqlx::query(
                "INSERT INTO features (id, project_id, name, summary, description, status, priority, \
                 version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            )
            .bind(&it.id)
            .bind(&it.project_id)
            .bind(&it.name)
            .bind(&it.summary)
            .bind(&it.description)
            .bind(it.status.as_str())
            .bind(it.priority.rank())
            .bind(&it.created_at)
            .bind(&it.updated_at)
            .execute(conn.db())
            .await?;
        }
    }
    if !it.tags.is_empty() {
        tag::set(conn, it.kind.container().upper(), &it.id, &it.tags).await?;
    }
    Ok(())
}

pub async fn get(conn: &mut Conn, kind: ItemKind, id: &str) -> Result<Option<Item>> {
    let row: Option<Row> =
        sqlx::query_as(AssertSqlSafe(format!("{} WHERE x.id = ?", select(kind))))
            .bind(id)
            .fetch_optional(conn.db())
            .await?;
    row.map(|r| r.into_item(kind)).transpose()
}

/// Like `get`, but a missing row is `NOT_FOUND`.
/// Whether the item exists, without loading it.
pub async fn exists(conn: &mut Conn, kind: ItemKind, id: &str) -> Result<bool> {
    let sql = format!("SELECT 1 FROM {} WHERE id = ?", table(kind).name);
    Ok(sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn.db())
        .await?
        .is_some())
}

pub async fn require(conn: &mut Conn, kind: ItemKind, id: &str) -> Result<Item> {
    get(conn, kind, id).await?.ok_or_else(|| Error::NotFound {
        entity: kind.as_str(),
        id: id.to_string(),
    })
}

/// Writes the editable fields of `it` after claiming `expected`; returns the new version.
pub async fn update(conn: &mut Conn, it: &Item, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, table(it.kind), &it.id, expected, &it.updated_at).await?;
    match it.kind {
        ItemKind::Task => {
            sqlx::query(
                "UPDATE tasks SET project_id = ?, feature_id = ?, title = ?, summary = ?, description = ?, priority = ?, \
                 complexity = ? WHERE id = ?",
            )
            .bind(&it.project_id)
            .bind(&it.feature_id)
            .bind(&it.name)
            .bind(&it.summary)
            .bind(&it.description)
            .bind(it.priority.rank())
            .bind(it.complexity.unwrap_or(5))
            .bind(&it.id)
            .execute(conn.db())
            .await?;
        }
        ItemKind::Feature => {
            sqlx::query("UPDATE features SET project_id = ?, name = ?, summary = ?, description = ?, priority = ? WHERE id = ?")
                .bind(&it.project_id)
                .bind(&it.name)
                .bind(&it.summary)
                .bind(&it.description)
                .bind(it.priority.rank())
                .bind(&it.id)
                .execute(conn.db())
                .await?;
        }
    }
    tag::set(conn, it.kind.container().upper(), &it.id, &it.tags).await?;
    Ok(v)
}

/// Sets the status (and its reason, for WILL_NOT_IMPLEMENT) of a row already claimed
/// or touched in this transaction.
pub async fn set_status(
    conn: &mut Conn,
    kind: ItemKind,
    id: &str,
    status: Status,
    reason: Option<&str>,
) -> Result<()> {
    let sql = format!(
        "UPDATE {} SET status = ?, status_reason = ? WHERE id = ?",
        table(kind).name
    );
    sqlx::query(AssertSqlSafe(sql))
        .bind(status.as_str())
        .bind(reason)
        .bind(id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// Moves every item of `kind` in `from` to `to` (pipeline sync); returns how many moved.
pub async fn move_status(
    conn: &mut Conn,
    kind: ItemKind,
    from: Status,
    to: Status,
    now: &str,
) -> Result<u64> {
    let sql = format!(
        "UPDATE {} SET status = ?, version = version + 1, updated_at = ? WHERE status = ?",
        table(kind).name
    );
    Ok(sqlx::query(AssertSqlSafe(sql))
        .bind(to.as_str())
        .bind(now)
        .bind(from.as_str())
        .execute(conn.db())
        .await?
        .rows_affected())
}

/// How many items of `kind` are in each status.
pub async fn status_counts(conn: &mut Conn, kind: ItemKind) -> Result<Vec<(String, i64)>> {
    let sql = format!(
        "SELECT status, COUNT(*) FROM {} GROUP BY status",
        table(kind).name
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .fetch_all(conn.db())
        .await?)
}

#[derive(Default)]
pub struct Filter<'a> {
    pub project_id: Option<&'a str>,
    pub feature_id: Option<&'a str>,
    pub statuses: &'a [Status],
    pub priority: Option<Priority>,
    pub tags: &'a [String],
    pub query: Option<&'a str>,
    pub blocked: Option<bool>,
    /// Only items without a project (a standalone task, a task of a feature without one).
    pub without_project: bool,
}

fn where_clause(kind: ItemKind, f: &Filter<'_>, binds: &mut Vec<String>) -> String {
    let mut w: Vec<String> = Vec::new();
    if let Some(p) = f.project_id {
        w.push("x.project_id = ?".into());
        binds.push(p.into());
    }
    if f.without_project {
        w.push("x.project_id IS NULL".into());
    }
    if let Some(p) = f.feature_id {
        w.push("x.feature_id = ?".into());
        binds.push(p.into());
    }
    if !f.statuses.is_empty() {
        w.push(format!("x.status IN ({})", placeholders(f.statuses.len())));
        binds.extend(f.statuses.iter().map(|s| s.as_str().to_string()));
    }
    if let Some(p) = f.priority {
        w.push(format!("x.priority = {}", p.rank()));
    }
    if !f.tags.is_empty() {
        w.push(format!(
            "x.id IN (SELECT entity_id FROM tags WHERE tag IN ({}))",
            placeholders(f.tags.len())
        ));
        binds.extend(f.tags.iter().cloned());
    }
    if let Some(q) = f.query {
        let name = if kind == ItemKind::Task {
            "x.title"
        } else {
            "x.name"
        };
        w.push(format!("({name} LIKE ? ESCAPE '\\' OR x.summary LIKE ? ESCAPE '\\' OR x.description LIKE ? ESCAPE '\\')"));
        let p = like_pattern(q);
        binds.extend([p.clone(), p.clone(), p]);
    }
    match f.blocked {
        Some(true) => w.push(blocked_sql(kind)),
        Some(false) => w.push(format!("NOT {}", blocked_sql(kind))),
        None => {}
    }
    if w.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", w.join(" AND "))
    }
}

async fn fetch(
    conn: &mut Conn,
    kind: ItemKind,
    sql: String,
    binds: &[String],
    tail: &[i64],
) -> Result<Vec<Item>> {
    let mut q = sqlx::query_as::<_, Row>(AssertSqlSafe(sql));
    for b in binds {
        q = q.bind(b);
    }
    for t in tail {
        q = q.bind(*t);
    }
    let rows = q.fetch_all(conn.db()).await?;
    rows.into_iter().map(|r| r.into_item(kind)).collect()
}

/// Filtered page of items, oldest first, and the total count of matches.
pub async fn search(
    conn: &mut Conn,
    kind: ItemKind,
    f: &Filter<'_>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Item>, i64)> {
    let mut binds = Vec::new();
    let w = where_clause(kind, f, &mut binds);
    let mut count = sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM {} x{w}",
        table(kind).name
    )));
    for b in &binds {
        count = count.bind(b);
    }
    let total = count.fetch_one(conn.db()).await?;
    let sql = format!(
        "{}{w} ORDER BY x.created_at, x.rowid LIMIT ? OFFSET ?",
        select(kind)
    );
    let items = fetch(conn, kind, sql, &binds, &[limit, offset]).await?;
    Ok((items, total))
}

/// How many tasks there are.
pub async fn count_tasks(conn: &mut Conn) -> Result<i64> {
    Ok(sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM tasks")
        .fetch_one(conn.db())
        .await?)
}

/// Tasks most recently changed first (a write moves `updated_at`), a page of them:
/// what `resources/list` offers beside the projects.
pub async fn recent_tasks(conn: &mut Conn, limit: i64, offset: i64) -> Result<Vec<Item>> {
    let sql = format!(
        "{} ORDER BY x.updated_at DESC, x.rowid DESC LIMIT ? OFFSET ?",
        select(ItemKind::Task)
    );
    fetch(conn, ItemKind::Task, sql, &[], &[limit, offset]).await
}

/// Items in work order: priority (HIGH first), then complexity (tasks), then age.
pub async fn ordered(
    conn: &mut Conn,
    kind: ItemKind,
    f: &Filter<'_>,
    limit: i64,
) -> Result<Vec<Item>> {
    let mut binds = Vec::new();
    let w = where_clause(kind, f, &mut binds);
    let order = match kind {
        ItemKind::Task => "x.priority, x.complexity, x.created_at, x.rowid",
        ItemKind::Feature => "x.priority, x.created_at, x.rowid",
    };
    let sql = format!("{}{w} ORDER BY {order} LIMIT ?", select(kind));
    fetch(conn, kind, sql, &binds, &[limit]).await
}

/// The names of the tasks and features among `ids` (a task's title), in one query
/// per 500 ids: what a page shows for items it does not list.
pub async fn names_of(conn: &mut Conn, ids: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let list = placeholders(chunk.len());
        let sql = format!(
            "SELECT id, title FROM tasks WHERE id IN ({list}) \
             UNION ALL SELECT id, name FROM features WHERE id IN ({list})"
        );
        let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
        for _ in 0..2 {
            for id in chunk {
                q = q.bind(id);
            }
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}

/// Status of every task of a feature.
pub async fn task_statuses(conn: &mut Conn, feature_id: &str) -> Result<Vec<Status>> {
    let rows: Vec<String> = sqlx::query_scalar("SELECT status FROM tasks WHERE feature_id = ?")
        .bind(feature_id)
        .fetch_all(conn.db())
        .await?;
    Ok(rows.iter().filter_map(|s| Status::parse(s)).collect())
}

/// Count of tasks per status under a feature or a project.
pub async fn task_counts(
    conn: &mut Conn,
    column: &'static str,
    id: &str,
) -> Result<Vec<(String, i64)>> {
    let sql = format!(
        "SELECT status, COUNT(*) FROM tasks WHERE {column} = ? GROUP BY status ORDER BY status"
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_all(conn.db())
        .await?)
}

/// [`task_counts`] for many containers in one query: by container id, counts per
/// status in status order (a container without tasks is absent).
pub async fn task_counts_of(
    conn: &mut Conn,
    column: &'static str,
    ids: &[String],
) -> Result<std::collections::HashMap<String, Vec<(String, i64)>>> {
    let mut by: std::collections::HashMap<String, Vec<(String, i64)>> = Default::default();
    // SQLite binds at most 32,766 parameters per statement; a page asks for far fewer.
    for chunk in ids.chunks(10_000) {
        let sql = format!(
            "SELECT {column}, status, COUNT(*) FROM tasks WHERE {column} IN ({}) \
             GROUP BY {column}, status ORDER BY {column}, status",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String, i64)>(AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(id);
        }
        for (id, status, n) in q.fetch_all(conn.db()).await? {
            by.entry(id).or_default().push((status, n));
        }
    }
    Ok(by)
}

pub async fn count_children(
    conn: &mut Conn,
    table: &'static str,
    column: &'static str,
    id: &str,
) -> Result<i64> {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE {column} = ?");
    Ok(sqlx::query_scalar(AssertSqlSafe(sql))
        .bind(id)
        .fetch_one(conn.db())
        .await?)
}

/// Re-homes the tasks of a feature when the feature moves to another project. Each
/// moved task is bumped like any consequence write, so an agent holding its old
/// version gets a conflict instead of writing over the move; answers (id, new version)
/// of each.
pub async fn move_feature_tasks(
    conn: &mut Conn,
    feature_id: &str,
    project_id: Option<&str>,
    now: &str,
) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "UPDATE tasks SET project_id = ?, version = version + 1, updated_at = ? \
         WHERE feature_id = ? AND project_id IS DISTINCT FROM ? RETURNING id, version",
    )
    .bind(project_id)
    .bind(now)
    .bind(feature_id)
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}
