//! The ontology toolset's repositories: a project's ontology repository, the pages,
//! entities and axioms its last sync imported, the problems that sync met, proposals
//! with their files, the per-domain term-id counters and the ontology's generation.
//! Version checks go through `lock`; nothing here knows about git, pages' syntax or
//! MCP.

use sqlx::any::AnyRow;
use sqlx::Row;

pub use crate::domain::ontology::records::{
    AxiomRecord, EntityRecord, PageRecord, PageState, ProblemRecord, ProposalFile, ProposalRecord,
    ProposalState, Repo,
};
use crate::store::{lock, Conn, Error, Result};

/// Rows one multi-row `INSERT` carries at most: SQLite binds at most 32,766
/// parameters in one statement (PostgreSQL 65,535), and a few hundred rows already
/// make the round trip to the database's worker a small part of each row's cost (a
/// sync of 100,000 pages once spent most of its time in one statement per row).
fn rows_per_insert(columns: usize) -> usize {
    (32_766 / columns).clamp(1, 500)
}

/// `(?, ?, …), (?, ?, …)…`: `rows` groups of `row`, the parameters of one row.
fn values(row: &str, rows: usize) -> String {
    let mut s = String::with_capacity(rows * (row.len() + 2));
    for i in 0..rows {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(row);
    }
    s
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// Inserts `items`, a few hundred to a statement: `head` is the statement up to
/// `VALUES`, `row` one row's values (its `?`s are the binds `bind` adds for an item,
/// given the item's index in `items`).
async fn insert_many<'a, T>(
    conn: &mut Conn,
    head: &str,
    row: &str,
    items: &'a [T],
    bind: impl Fn(AnyQuery<'a>, usize, &'a T) -> AnyQuery<'a>,
) -> Result<()> {
    let per = rows_per_insert(row.matches('?').count());
    for (n, chunk) in items.chunks(per).enumerate() {
        let sql = format!("{head} VALUES {}", values(row, chunk.len()));
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (i, item) in chunk.iter().enumerate() {
            q = bind(q, n * per + i, item);
        }
        q.execute(conn.db()).await?;
    }
    Ok(())
}

// ---- repositories ----

const REPO_COLS: &str =
    "id, project_id, repo_path, pages_dir, base_branch, github_owner, github_name, \
                         synced_commit, synced_at, version, created_at, updated_at";

fn repo_row(r: AnyRow) -> Result<Repo> {
    Ok(Repo {
        id: r.try_get("id")?,
        project_id: r.try_get("project_id")?,
        repo_path: r.try_get("repo_path")?,
        pages_dir: r.try_get("pages_dir")?,
        base_branch: r.try_get("base_branch")?,
        github_owner: r.try_get("github_owner")?,
        github_name: r.try_get("github_name")?,
        synced_commit: r.try_get("synced_commit")?,
        synced_at: r.try_get("synced_at")?,
        version: r.try_get("version")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

pub async fn repo_of(conn: &mut Conn, project_id: &str) -> Result<Option<Repo>> {
    let sql = format!("SELECT {REPO_COLS} FROM ontology_repos WHERE project_id = ?");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .fetch_optional(conn.db())
        .await?;
    r.map(repo_row).transpose()
}

pub async fn insert_repo(conn: &mut Conn, r: &Repo) -> Result<()> {
    sqlx::query(
        "INSERT INTO ontology_repos (id, project_id, repo_path, pages_dir, base_branch, github_owner, github_name, \
         version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
    )
    .bind(&r.id)
    .bind(&r.project_id)
    .bind(&r.repo_path)
    .bind(&r.pages_dir)
    .bind(&r.base_branch)
    .bind(&r.github_owner)
    .bind(&r.github_name)
    .bind(&r.created_at)
    .bind(&r.updated_at)
    .execute(conn.db())
    .await?;
    Ok(())
}

/// Writes the binding's settings over the stored row after claiming `expected`; a
/// changed repository or folder forgets the synced commit (the next sync reads all).
pub async fn update_repo(conn: &mut Conn, r: &Repo, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, lock::ONTOLOGY_REPOS, &r.id, expected, &r.updated_at).await?;
    sqlx::query(
        "UPDATE ontology_repos SET synced_commit = CASE WHEN repo_path = ?1 AND pages_dir = ?2 THEN synced_commit END, \
         repo_path = ?1, pages_dir = ?2, base_branch = ?3, github_owner = ?4, github_name = ?5 WHERE id = ?6",
    )
    .bind(&r.repo_path)
    .bind(&r.pages_dir)
    .bind(&r.base_branch)
    .bind(&r.github_owner)
    .bind(&r.github_name)
    .bind(&r.id)
    .execute(conn.db())
    .await?;
    Ok(v)
}

/// Records the commit a sync imported (a consequence of the sync: no version is
/// checked, the row's version moves).
pub async fn record_sync(conn: &mut Conn, repo_id: &str, commit: &str, now: &str) -> Result<i64> {
    let v = lock::touch(conn, lock::ONTOLOGY_REPOS, repo_id, now).await?;
    sqlx::query("UPDATE ontology_repos SET synced_commit = ?, synced_at = ? WHERE id = ?")
        .bind(commit)
        .bind(now)
        .bind(repo_id)
        .execute(conn.db())
        .await?;
    Ok(v)
}

// ---- pages ----

/// A page to write.
#[derive(Debug, Clone)]
pub struct NewPage<'a> {
    pub id: &'a str,
    pub project_id: &'a str,
    pub path: &'a str,
    pub blob_sha: &'a str,
    pub content: &'a str,
    pub iri: Option<&'a str>,
    pub state: PageState,
    pub now: &'a str,
}

fn page_row(r: &AnyRow) -> Result<PageRecord> {
    let state: String = r.try_get("state")?;
    Ok(PageRecord {
        id: r.try_get("id")?,
        path: r.try_get("path")?,
        blob_sha: r.try_get("blob_sha")?,
        iri: r.try_get("iri")?,
        state: PageState::parse(&state)
            .ok_or_else(|| Error::Corrupt(format!("page state '{state}' is unknown")))?,
        version: r.try_get("version")?,
    })
}

pub async fn pages(conn: &mut Conn, project_id: &str) -> Result<Vec<PageRecord>> {
    let rows = sqlx::query(
        "SELECT id, path, blob_sha, iri, state, version FROM ontology_pages WHERE project_id = ? ORDER BY path",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    rows.iter().map(page_row).collect()
}

/// Every page's path and text, by path.
pub async fn page_texts(conn: &mut Conn, project_id: &str) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT path, content FROM ontology_pages WHERE project_id = ? ORDER BY path",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

/// One page's row and text, by path.
pub async fn page_at(
    conn: &mut Conn,
    project_id: &str,
    path: &str,
) -> Result<Option<(PageRecord, String)>> {
    let r = sqlx::query(
        "SELECT id, path, blob_sha, iri, state, version, content FROM ontology_pages WHERE project_id = ? AND path = ?",
    )
    .bind(project_id)
    .bind(path)
    .fetch_optional(conn.db())
    .await?;
    match r {
        Some(r) => Ok(Some((page_row(&r)?, r.try_get("content")?))),
        None => Ok(None),
    }
}

/// Whether a page exists at `path`, compared ignoring ASCII case (as Logseq names pages and
/// as case-insensitive file systems find files).
pub async fn page_path_taken(conn: &mut Conn, project_id: &str, path: &str) -> Result<bool> {
    Ok(sqlx::query_scalar::<_, i64>(
        "SELECT 1 FROM ontology_pages WHERE project_id = ? AND lower(path) = lower(?) LIMIT 1",
    )
    .bind(project_id)
    .bind(path)
    .fetch_optional(conn.db())
    .await?
    .is_some())
}

/// Inserts pages, a few hundred to a statement.
pub async fn insert_pages(conn: &mut Conn, pages: &[NewPage<'_>]) -> Result<()> {
    insert_many(
        conn,
        "INSERT INTO ontology_pages (id, project_id, path, blob_sha, content, iri, state, version, created_at, updated_at)",
        "(?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
        pages,
        |q, _, p| {
            q.bind(p.id)
                .bind(p.project_id)
                .bind(p.path)
                .bind(p.blob_sha)
                .bind(p.content)
                .bind(p.iri)
                .bind(p.state.as_str())
                .bind(p.now)
                .bind(p.now)
        },
    )
    .await
}

/// Rewrites a page read at `expected` in this transaction.
pub async fn update_page(conn: &mut Conn, p: &NewPage<'_>, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, lock::ONTOLOGY_PAGES, p.id, expected, p.now).await?;
    sqlx::query(
        "UPDATE ontology_pages SET blob_sha = ?, content = ?, iri = ?, state = ? WHERE id = ?",
    )
    .bind(p.blob_sha)
    .bind(p.content)
    .bind(p.iri)
    .bind(p.state.as_str())
    .bind(p.id)
    .execute(conn.db())
    .await?;
    Ok(v)
}

pub async fn delete_page(conn: &mut Conn, id: &str, expected: i64) -> Result<()> {
    lock::delete(conn, lock::ONTOLOGY_PAGES, id, Some(expected)).await
}

// ---- entities ----

const ENTITY_COLS: &str = "id, page_id, iri, kind, term_id, preferred_term, domain, status, definition, alt_terms, \
                           physicality, role, maturity, quality_score, authority_score, last_updated, line, version";

fn entity_row(r: &AnyRow) -> Result<EntityRecord> {
    Ok(EntityRecord {
        id: r.try_get("id")?,
        page_id: r.try_get("page_id")?,
        iri: r.try_get("iri")?,
        kind: r.try_get("kind")?,
        term_id: r.try_get("term_id")?,
        preferred_term: r.try_get("preferred_term")?,
        domain: r.try_get("domain")?,
        status: r.try_get("status")?,
        definition: r.try_get("definition")?,
        alt_terms: r.try_get("alt_terms")?,
        physicality: r.try_get("physicality")?,
        role: r.try_get("role")?,
        maturity: r.try_get("maturity")?,
        quality_score: r.try_get("quality_score")?,
        authority_score: r.try_get("authority_score")?,
        last_updated: r.try_get("last_updated")?,
        line: r.try_get("line")?,
        version: r.try_get("version")?,
    })
}

pub async fn entities(conn: &mut Conn, project_id: &str) -> Result<Vec<EntityRecord>> {
    let sql =
        format!("SELECT {ENTITY_COLS} FROM ontology_entities WHERE project_id = ? ORDER BY iri");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .fetch_all(conn.db())
        .await?;
    rows.iter().map(entity_row).collect()
}

fn bind_entity<'q>(q: AnyQuery<'q>, e: &'q EntityRecord) -> AnyQuery<'q> {
    q.bind(&e.page_id)
        .bind(&e.iri)
        .bind(&e.kind)
        .bind(&e.term_id)
        .bind(&e.preferred_term)
        .bind(&e.domain)
        .bind(&e.status)
        .bind(&e.definition)
        .bind(&e.alt_terms)
        .bind(&e.physicality)
        .bind(&e.role)
        .bind(&e.maturity)
        .bind(e.quality_score)
        .bind(e.authority_score)
        .bind(&e.last_updated)
        .bind(e.line)
        // The scores may be NULL: see `dialect::Db` on optional floats.
        .persistent(false)
}

/// Inserts entities (each with its `id` set), a few hundred to a statement.
pub async fn insert_entities(
    conn: &mut Conn,
    project_id: &str,
    rows: &[EntityRecord],
    now: &str,
) -> Result<()> {
    insert_many(
        conn,
        "INSERT INTO ontology_entities (page_id, iri, kind, term_id, preferred_term, domain, status, definition, alt_terms, \
         physicality, role, maturity, quality_score, authority_score, last_updated, line, id, project_id, version, \
         created_at, updated_at)",
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
        rows,
        |q, _, e| {
            bind_entity(q, e)
                .bind(&e.id)
                .bind(project_id)
                .bind(now)
                .bind(now)
        },
    )
    .await
}

/// Rewrites an entity read at `e.version` in this transaction.
pub async fn update_entity(conn: &mut Conn, e: &EntityRecord, now: &str) -> Result<i64> {
    let v = lock::bump(conn, lock::ONTOLOGY_ENTITIES, &e.id, e.version, now).await?;
    let q = sqlx::query(
        "UPDATE ontology_entities SET page_id = ?, iri = ?, kind = ?, term_id = ?, preferred_term = ?, domain = ?, \
         status = ?, definition = ?, alt_terms = ?, physicality = ?, role = ?, maturity = ?, quality_score = ?, \
         authority_score = ?, last_updated = ?, line = ? WHERE id = ?",
    );
    bind_entity(q, e).bind(&e.id).execute(conn.db()).await?;
    Ok(v)
}

pub async fn delete_entity(conn: &mut Conn, id: &str, expected: i64) -> Result<()> {
    lock::delete(conn, lock::ONTOLOGY_ENTITIES, id, Some(expected)).await
}

/// `(row id, IRI)` of the entities with these row ids.
pub async fn iris_of(conn: &mut Conn, ids: &[String]) -> Result<Vec<(String, String)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id, iri FROM ontology_entities WHERE id IN ({})",
        crate::store::placeholders(ids.len())
    );
    let mut q = sqlx::query_as::<_, (String, String)>(sqlx::AssertSqlSafe(sql));
    for id in ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn.db()).await?)
}

/// The highest number among the term ids `PREFIX-NNNN` of a project's entities.
pub async fn max_term_number(
    conn: &mut Conn,
    project_id: &str,
    prefix: &str,
) -> Result<Option<i64>> {
    // The numbers are read here rather than cast in SQL: SQLite's CAST takes the
    // leading digits of `PREFIX-12x`, PostgreSQL's refuses it.
    let head = format!("{prefix}-");
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT term_id FROM ontology_entities WHERE project_id = ? AND substr(term_id, 1, ?) = ?",
    )
    .bind(project_id)
    .bind(head.chars().count() as i32)
    .bind(&head)
    .fetch_all(conn.db())
    .await?;
    Ok(ids
        .iter()
        .filter_map(|id| {
            let digits: String = id[head.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<i64>().ok()
        })
        .max())
}

// ---- axioms ----

/// Every page's axioms, by page id, in page order.
pub async fn axioms(conn: &mut Conn, project_id: &str) -> Result<Vec<(String, AxiomRecord)>> {
    let rows: Vec<(String, i64, String, String)> = sqlx::query_as(
        "SELECT page_id, line, kind, ofn FROM ontology_axioms WHERE project_id = ? ORDER BY page_id, seq",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(p, line, kind, ofn)| (p, AxiomRecord { line, kind, ofn }))
        .collect())
}

/// Replaces the axioms of many pages: one `DELETE` and one multi-row `INSERT` per
/// few hundred pages or rows.
pub async fn replace_axioms_of(
    conn: &mut Conn,
    project_id: &str,
    pages: &[(&str, &[AxiomRecord])],
) -> Result<()> {
    for chunk in pages.chunks(500) {
        let sql = format!(
            "DELETE FROM ontology_axioms WHERE page_id IN ({})",
            crate::store::placeholders(chunk.len())
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (page_id, _) in chunk {
            q = q.bind(*page_id);
        }
        q.execute(conn.db()).await?;
    }
    let rows: Vec<(&str, i64, &AxiomRecord)> = pages
        .iter()
        .flat_map(|(page_id, rows)| {
            rows.iter()
                .enumerate()
                .map(move |(seq, a)| (*page_id, seq as i64, a))
        })
        .collect();
    insert_many(
        conn,
        "INSERT INTO ontology_axioms (page_id, project_id, seq, line, kind, ofn)",
        "(?, ?, ?, ?, ?, ?)",
        &rows,
        |q, _, (page_id, seq, a)| {
            q.bind(*page_id)
                .bind(project_id)
                .bind(*seq)
                .bind(a.line)
                .bind(&a.kind)
                .bind(&a.ofn)
        },
    )
    .await
}

// ---- sync problems ----

pub async fn replace_problems(
    conn: &mut Conn,
    project_id: &str,
    rows: &[ProblemRecord],
) -> Result<()> {
    sqlx::query("DELETE FROM ontology_problems WHERE project_id = ?")
        .bind(project_id)
        .execute(conn.db())
        .await?;
    insert_many(
        conn,
        "INSERT INTO ontology_problems (project_id, seq, file, line, col, message)",
        "(?, ?, ?, ?, ?, ?)",
        rows,
        |q, seq, p| {
            q.bind(project_id)
                .bind(seq as i64)
                .bind(&p.file)
                .bind(p.line)
                .bind(p.column)
                .bind(&p.message)
        },
    )
    .await
}

pub async fn problems(conn: &mut Conn, project_id: &str) -> Result<Vec<ProblemRecord>> {
    let rows: Vec<(String, i64, i64, String)> = sqlx::query_as(
        "SELECT file, line, col, message FROM ontology_problems WHERE project_id = ? ORDER BY seq",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(file, line, column, message)| ProblemRecord {
            file,
            line,
            column,
            message,
        })
        .collect())
}

// ---- counts ----

/// `(kind, count)` of the project's entities, and its axiom count.
pub async fn counts(conn: &mut Conn, project_id: &str) -> Result<(Vec<(String, i64)>, i64)> {
    let kinds = sqlx::query_as("SELECT kind, COUNT(*) FROM ontology_entities WHERE project_id = ? GROUP BY kind ORDER BY kind")
        .bind(project_id)
        .fetch_all(conn.db())
        .await?;
    let axioms = sqlx::query_scalar("SELECT COUNT(*) FROM ontology_axioms WHERE project_id = ?")
        .bind(project_id)
        .fetch_one(conn.db())
        .await?;
    Ok((kinds, axioms))
}

// ---- generation ----

/// The project's ontology generation (0 before its first page).
pub async fn generation(conn: &mut Conn, project_id: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE((SELECT generation FROM ontology_generations WHERE project_id = ?), 0)",
    )
    .bind(project_id)
    .fetch_one(conn.db())
    .await?)
}

// ---- term ids ----

/// Reserves the next number of a domain's term ids: at least `floor` (one past the
/// highest synced term id) and past every number reserved before. Call inside the
/// proposal's write transaction, so two proposals never get the same number.
pub async fn reserve_term(
    conn: &mut Conn,
    project_id: &str,
    domain: &str,
    floor: i64,
) -> Result<i64> {
    let stored: Option<i64> = sqlx::query_scalar(
        "SELECT next FROM ontology_term_counters WHERE project_id = ? AND domain = ?",
    )
    .bind(project_id)
    .bind(domain)
    .fetch_optional(conn.db())
    .await?;
    let n = stored.unwrap_or(1).max(floor).max(1);
    sqlx::query(
        "INSERT INTO ontology_term_counters (project_id, domain, next) VALUES (?1, ?2, ?3) \
         ON CONFLICT (project_id, domain) DO UPDATE SET next = ?3",
    )
    .bind(project_id)
    .bind(domain)
    .bind(n + 1)
    .execute(conn.db())
    .await?;
    Ok(n)
}

// ---- proposals ----

const PROPOSAL_COLS: &str = "id, project_id, operation, state, target_iri, term_id, agent_id, agent_type, session_id, \
     task_description, confidence, branch, commit_sha, base_commit, new_subsumptions, quality_score, tier_coverage, \
     report, diff, pr_number, pr_url, push_error, decided_at, version, created_at, updated_at";

pub async fn insert_proposal(
    conn: &mut Conn,
    p: &ProposalRecord,
    files: &[ProposalFile],
) -> Result<()> {
    sqlx::query(
        "INSERT INTO ontology_proposals (id, project_id, operation, state, target_iri, term_id, agent_id, agent_type, \
         session_id, task_description, confidence, branch, commit_sha, base_commit, new_subsumptions, quality_score, \
         tier_coverage, report, diff, pr_number, pr_url, push_error, decided_at, version, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
    )
    .bind(&p.id)
    .bind(&p.project_id)
    .bind(&p.operation)
    .bind(p.state.as_str())
    .bind(&p.target_iri)
    .bind(&p.term_id)
    .bind(&p.agent_id)
    .bind(&p.agent_type)
    .bind(&p.session_id)
    .bind(&p.task_description)
    .bind(p.confidence)
    .bind(&p.branch)
    .bind(&p.commit_sha)
    .bind(&p.base_commit)
    .bind(p.new_subsumptions)
    .bind(p.quality_score)
    .bind(&p.tier_coverage)
    .bind(&p.report)
    .bind(&p.diff)
    .bind(p.pr_number)
    .bind(&p.pr_url)
    .bind(&p.push_error)
    .bind(&p.decided_at)
    .bind(&p.created_at)
    .bind(&p.updated_at)
    // The score may be NULL: see `dialect::Db` on optional floats.
    .persistent(false)
    .execute(conn.db())
    .await?;
    insert_many(
        conn,
        "INSERT INTO ontology_proposal_files (proposal_id, path, blob_sha, content)",
        "(?, ?, ?, ?)",
        files,
        |q, _, f| {
            q.bind(&p.id)
                .bind(&f.path)
                .bind(&f.blob_sha)
                .bind(&f.content)
        },
    )
    .await
}

fn proposal_row(r: &AnyRow) -> Result<ProposalRecord> {
    let state: String = r.try_get("state")?;
    Ok(ProposalRecord {
        id: r.try_get("id")?,
        project_id: r.try_get("project_id")?,
        operation: r.try_get("operation")?,
        state: ProposalState::parse(&state)
            .ok_or_else(|| Error::Corrupt(format!("proposal state '{state}' is unknown")))?,
        target_iri: r.try_get("target_iri")?,
        term_id: r.try_get("term_id")?,
        agent_id: r.try_get("agent_id")?,
        agent_type: r.try_get("agent_type")?,
        session_id: r.try_get("session_id")?,
        task_description: r.try_get("task_description")?,
        confidence: r.try_get("confidence")?,
        branch: r.try_get("branch")?,
        commit_sha: r.try_get("commit_sha")?,
        base_commit: r.try_get("base_commit")?,
        new_subsumptions: r.try_get("new_subsumptions")?,
        quality_score: r.try_get("quality_score")?,
        tier_coverage: r.try_get("tier_coverage")?,
        report: r.try_get("report")?,
        diff: r.try_get("diff")?,
        pr_number: r.try_get("pr_number")?,
        pr_url: r.try_get("pr_url")?,
        push_error: r.try_get("push_error")?,
        decided_at: r.try_get("decided_at")?,
        version: r.try_get("version")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

pub async fn proposal(conn: &mut Conn, id: &str) -> Result<Option<ProposalRecord>> {
    let sql = format!("SELECT {PROPOSAL_COLS} FROM ontology_proposals WHERE id = ?");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn.db())
        .await?;
    r.as_ref().map(proposal_row).transpose()
}

/// A project's proposals, newest first, optionally in some states only.
pub async fn proposals(
    conn: &mut Conn,
    project_id: &str,
    states: &[ProposalState],
    limit: i64,
    offset: i64,
) -> Result<(Vec<ProposalRecord>, i64)> {
    let filter = if states.is_empty() {
        String::new()
    } else {
        format!(
            " AND state IN ({})",
            crate::store::placeholders(states.len())
        )
    };
    let sql = format!(
        "SELECT {PROPOSAL_COLS} FROM ontology_proposals WHERE project_id = ?{filter} \
         ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(project_id);
    for s in states {
        q = q.bind(s.as_str());
    }
    let rows = q.bind(limit).bind(offset).fetch_all(conn.db()).await?;
    let rows = rows.iter().map(proposal_row).collect::<Result<Vec<_>>>()?;
    let sql = format!("SELECT COUNT(*) FROM ontology_proposals WHERE project_id = ?{filter}");
    let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)).bind(project_id);
    for s in states {
        q = q.bind(s.as_str());
    }
    let total = q.fetch_one(conn.db()).await?;
    Ok((rows, total))
}

/// `(state, count)` of a project's proposals.
pub async fn proposal_counts(conn: &mut Conn, project_id: &str) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT state, COUNT(*) FROM ontology_proposals WHERE project_id = ? GROUP BY state ORDER BY state",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

pub async fn proposal_files(conn: &mut Conn, proposal_id: &str) -> Result<Vec<ProposalFile>> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT path, blob_sha, content FROM ontology_proposal_files WHERE proposal_id = ? ORDER BY path",
    )
    .bind(proposal_id)
    .fetch_all(conn.db())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(path, blob_sha, content)| ProposalFile {
            path,
            blob_sha,
            content,
        })
        .collect())
}

/// The `(path, blob id)` of a proposal's files, without their texts (what a sync
/// compares with the base branch).
pub async fn proposal_blobs(conn: &mut Conn, proposal_id: &str) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT path, blob_sha FROM ontology_proposal_files WHERE proposal_id = ? ORDER BY path",
    )
    .bind(proposal_id)
    .fetch_all(conn.db())
    .await?)
}

/// Moves a proposal read at `expected` to a decided state (`merged`, `rejected`).
pub async fn decide(
    conn: &mut Conn,
    id: &str,
    expected: i64,
    state: ProposalState,
    now: &str,
) -> Result<i64> {
    let v = lock::bump(conn, lock::ONTOLOGY_PROPOSALS, id, expected, now).await?;
    sqlx::query("UPDATE ontology_proposals SET state = ?, decided_at = ? WHERE id = ?")
        .bind(state.as_str())
        .bind(now)
        .bind(id)
        .execute(conn.db())
        .await?;
    Ok(v)
}

/// Records a push to GitHub (a pull request) or why it failed.
pub async fn record_push(
    conn: &mut Conn,
    id: &str,
    expected: i64,
    pr: Option<(i64, Option<&str>)>,
    error: Option<&str>,
    now: &str,
) -> Result<i64> {
    let v = lock::bump(conn, lock::ONTOLOGY_PROPOSALS, id, expected, now).await?;
    sqlx::query(
        "UPDATE ontology_proposals SET state = CASE WHEN ?1 IS NOT NULL THEN 'pushed' ELSE state END, \
         pr_number = COALESCE(?1, pr_number), pr_url = COALESCE(?2, pr_url), push_error = ?3 WHERE id = ?4",
    )
    .bind(pr.map(|p| p.0))
    .bind(pr.and_then(|p| p.1))
    .bind(error)
    .bind(id)
    .execute(conn.db())
    .await?;
    Ok(v)
}
