//! `cairn import --from task-orchestrator FILE`: the TypeScript task-orchestrator
//! port's database carried into Cairn's tables. Both keep the same containers with
//! the same columns (README, "Importing from other stores"), so every row keeps its
//! id (dashed), status, priority, version, timestamps and order; what the port keeps
//! as JSON on a row (`blocked_by`, `related_to`) becomes Cairn's dependency edges,
//! and its comma-separated tags Cairn's tag rows. The file is read before the write
//! transaction opens; inside it, under the write lock, every row is checked against
//! the pipelines in force and the ids already taken before the first is written, and
//! the whole import commits or nothing does.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::domain::container::normalize_tags;
use crate::domain::glob::Glob;
use crate::domain::graph::{Atom, ChangelogEntry, Molecule, NodeKind, Related};
use crate::domain::{
    id, ContentFormat, Item, ItemKind, Pipelines, Priority, Project, Section, Status, Template,
    TemplateSection,
};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::dependency::{self, NewEdge};
use crate::store::foreign::port::{self as src, PortRow, PortRows, PortValue};
use crate::store::foreign::{set_version, taken, template_names};
use crate::store::{graph, item, lock, pipeline, project, section, template};

use super::{Counts, LIMIT_BYTES, LIMIT_ROWS};

/// The one schema this importer reads (the port's `_meta.schema_id`).
const SCHEMA: &str = "task-orchestrator-v3";

/// A dependency edge to write: its kind, its blocker (None for NO_OP), the item it
/// points at, BLOCKS or RELATES_TO, its reason and when it was made.
type Edge = (
    ItemKind,
    Option<String>,
    String,
    &'static str,
    Option<String>,
    String,
);

/// An item's links as the port keeps them on its row: its kind and id, its
/// blockers, their reason, its related items and when the row last changed.
type Links = (
    ItemKind,
    String,
    Vec<String>,
    Option<String>,
    Vec<String>,
    String,
);

/// Everything the file holds, checked and in Cairn's types, in the port's order.
#[derive(Default)]
struct Plan {
    projects: Vec<Project>,
    items: Vec<Item>,
    edges: Vec<Edge>,
    sections: Vec<Section>,
    templates: Vec<(Template, Vec<TemplateSection>)>,
    molecules: Vec<Molecule>,
    atoms: Vec<Atom>,
    changelog: Vec<ChangelogEntry>,
    /// What the port keeps that Cairn has no place for, said in the report.
    dropped: Vec<String>,
}

/// Reads, checks and imports the port's database at `path`.
pub async fn import(app: &App, path: &Path) -> Result<Counts> {
    let rows = src::read_port(path, LIMIT_BYTES, LIMIT_ROWS)
        .await
        .map_err(|u| Error::invalid(u.0))?;
    let shown = path.display().to_string();
    match rows.schema_id.as_deref() {
        Some(SCHEMA) => {}
        other => {
            return Err(Error::invalid(format!(
                "{shown} is a task-orchestrator database of schema {}, and Cairn reads {SCHEMA}: \
                 open it once with the port's current release (which migrates it), then import again",
                other.unwrap_or("(none recorded)")
            )))
        }
    }
    let mut tx = app.store.write().await?;
    let pipelines = pipeline::load(&mut tx).await?;
    let plan = plan(&shown, &rows, &pipelines)?;
    refuse_taken(&mut tx, &shown, &plan).await?;
    let mut counts = Counts::default();
    for p in &plan.projects {
        project::insert(&mut tx, p).await?;
        set_version(&mut tx, lock::PROJECTS, &p.id, p.version).await?;
        crate::service::memory::project_subject::for_new_project(&mut tx, &p.id, &p.name).await?;
    }
    counts.add("projects", plan.projects.len());
    for it in &plan.items {
        item::insert(&mut tx, it).await?;
        set_version(&mut tx, item::table(it.kind), &it.id, it.version).await?;
    }
    let tasks = plan
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Task)
        .count();
    counts.add("features", plan.items.len() - tasks);
    counts.add("tasks", tasks);
    for (kind, from, to, ty, reason, at) in &plan.edges {
        dependency::insert(
            &mut tx,
            &NewEdge {
                id: &id::new_id(),
                kind: *kind,
                from_id: from.as_deref(),
                to_id: to,
                edge_type: ty,
                reason: reason.as_deref(),
                now: at,
            },
        )
        .await?;
    }
    counts.add("dependencies", plan.edges.len());
    for s in &plan.sections {
        section::insert(&mut tx, s).await?;
        set_version(&mut tx, lock::SECTIONS, &s.id, s.version).await?;
    }
    counts.add("sections", plan.sections.len());
    for (t, secs) in &plan.templates {
        template::insert(&mut tx, t).await?;
        for s in secs {
            template::add_section(&mut tx, s).await?;
        }
    }
    counts.add("templates", plan.templates.len());
    for m in &plan.molecules {
        graph::insert_molecule(&mut tx, m).await?;
        set_version(&mut tx, lock::MOLECULES, &m.id, m.version).await?;
    }
    counts.add("molecules", plan.molecules.len());
    for a in &plan.atoms {
        graph::insert_atom(&mut tx, a).await?;
        set_version(&mut tx, lock::ATOMS, &a.id, a.version).await?;
    }
    counts.add("atoms", plan.atoms.len());
    for e in &plan.changelog {
        graph::insert_changelog(&mut tx, e).await?;
    }
    counts.add("changelog entries", plan.changelog.len());
    tx.commit().await?;
    counts.notes = plan.dropped;
    Ok(counts)
}

/// A second import of the same file, or a file sharing ids with this database, is
/// refused before anything is written, naming what is taken.
async fn refuse_taken(c: &mut crate::store::Conn, shown: &str, p: &Plan) -> Result<()> {
    let sets: [(&str, &str, Vec<String>); 8] = [
        (
            "projects",
            "project",
            p.projects.iter().map(|x| x.id.clone()).collect(),
        ),
        ("features", "feature", ids_of(&p.items, ItemKind::Feature)),
        ("tasks", "task", ids_of(&p.items, ItemKind::Task)),
        (
            "sections",
            "section",
            p.sections.iter().map(|x| x.id.clone()).collect(),
        ),
        (
            "templates",
            "template",
            p.templates.iter().map(|x| x.0.id.clone()).collect(),
        ),
        (
            "graph_molecules",
            "molecule",
            p.molecules.iter().map(|x| x.id.clone()).collect(),
        ),
        (
            "graph_atoms",
            "atom",
            p.atoms.iter().map(|x| x.id.clone()).collect(),
        ),
        (
            "graph_changelog",
            "changelog entry",
            p.changelog.iter().map(|x| x.id.clone()).collect(),
        ),
    ];
    for (table, what, ids) in sets {
        let hit = taken(c, table, &ids).await?;
        if let Some(first) = hit.first() {
            return Err(Error::invalid(format!(
                "this database already holds {} {what} id(s) of {shown}, {first} first: the file \
                 was imported already (or shares ids with this database); nothing was written. \
                 Import into a database without them",
                hit.len()
            )));
        }
    }
    let names: Vec<String> = p.templates.iter().map(|t| t.0.name.clone()).collect();
    if let Some((name, id)) = template_names(c, &names).await?.first() {
        return Err(Error::invalid(format!(
            "{shown}: template '{name}' has the name of this database's template {id}, and names \
             are unique; rename one of them (in the port or in Cairn), then import again; \
             nothing was written"
        )));
    }
    Ok(())
}

fn ids_of(items: &[Item], kind: ItemKind) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.kind == kind)
        .map(|i| i.id.clone())
        .collect()
}

/// One row's columns, read with messages that name the file, table, row and column.
struct Cols<'a> {
    shown: &'a str,
    row: &'a PortRow,
}

impl Cols<'_> {
    fn bad(&self, col: &str, why: impl std::fmt::Display) -> Error {
        let id = match self.row.get("id") {
            Some(PortValue::Text(t)) => format!(" (id {})", crate::domain::text::clip(t, 40)),
            _ => String::new(),
        };
        Error::invalid(format!(
            "{}: table {}, row {}{id}, column {col}: {why}; nothing was written",
            self.shown, self.row.table, self.row.rowid
        ))
    }
    fn opt(&self, col: &str) -> Result<Option<String>> {
        match self.row.get(col) {
            None | Some(PortValue::Null) => Ok(None),
            Some(PortValue::Text(t)) => Ok(Some(t.clone())),
            Some(PortValue::Int(n)) => Ok(Some(n.to_string())),
            Some(PortValue::Real(_)) => Err(self.bad(col, "a number where text belongs")),
        }
    }
    fn text(&self, col: &str) -> Result<String> {
        self.opt(col)?.ok_or_else(|| self.bad(col, "missing"))
    }
    fn int(&self, col: &str) -> Result<i64> {
        match self.row.get(col) {
            Some(PortValue::Int(n)) => Ok(*n),
            Some(PortValue::Text(t)) => t
                .trim()
                .parse()
                .map_err(|_| self.bad(col, "not an integer")),
            _ => Err(self.bad(col, "missing")),
        }
    }
    fn flag(&self, col: &str) -> Result<bool> {
        Ok(self.int(col)? != 0)
    }
    fn id(&self, col: &str) -> Result<String> {
        let raw = self.text(col)?;
        id::parse(col, &raw).map_err(|e| self.bad(col, e.problem))
    }
    fn opt_id(&self, col: &str) -> Result<Option<String>> {
        match self.opt(col)? {
            None => Ok(None),
            Some(raw) => id::parse(col, &raw)
                .map(Some)
                .map_err(|e| self.bad(col, e.problem)),
        }
    }
    /// Text of at most `max` characters (Cairn's bound for the field).
    fn bounded(&self, col: &str, max: usize) -> Result<String> {
        let t = self.text(col)?;
        check_len(self, col, &t, max)?;
        Ok(t)
    }
    fn tags(&self, col: &str) -> Result<Vec<String>> {
        let raw = self.opt(col)?.unwrap_or_default();
        let list: Vec<String> = raw.split(',').map(str::to_string).collect();
        normalize_tags(col, &list).map_err(|e| self.bad(col, e.problem))
    }
    fn id_list(&self, col: &str) -> Result<Vec<String>> {
        let raw = self.opt(col)?.unwrap_or_else(|| "[]".into());
        let list = src::strings(&raw).map_err(|e| self.bad(col, e))?;
        list.iter()
            .map(|x| {
                if x == "NO_OP" {
                    Ok(x.clone())
                } else {
                    id::parse(col, x).map_err(|e| self.bad(col, e.problem))
                }
            })
            .collect()
    }
    fn related(&self, col: &str, key: src::Related) -> Result<Vec<Related>> {
        let raw = self.opt(col)?.unwrap_or_else(|| "[]".into());
        let list = src::related(&raw, key).map_err(|e| self.bad(col, e))?;
        list.into_iter()
            .map(|(x, reason)| {
                Ok(Related {
                    id: id::parse(col, &x).map_err(|e| self.bad(col, e.problem))?,
                    reason,
                })
            })
            .collect()
    }
}

fn check_len(c: &Cols<'_>, col: &str, t: &str, max: usize) -> Result<()> {
    let n = t.chars().count();
    if n > max {
        return Err(c.bad(col, format!("{n} characters, past Cairn's bound of {max}")));
    }
    Ok(())
}

/// Tags by the (dashed) id of what they tag, from `entity_tags`.
fn tags_by_entity(shown: &str, rows: &PortRows) -> Result<HashMap<String, Vec<String>>> {
    let mut raw: HashMap<String, Vec<String>> = HashMap::new();
    for r in &rows.tags {
        let c = Cols { shown, row: r };
        raw.entry(c.id("entity_id")?)
            .or_default()
            .push(c.text("tag")?);
    }
    let mut out = HashMap::new();
    for (id, list) in raw {
        let t = normalize_tags("tags", &list).map_err(|e| {
            Error::invalid(format!(
                "{shown}: table entity_tags, the tags of {id}: {}",
                e.problem
            ))
        })?;
        out.insert(id, t);
    }
    Ok(out)
}

fn plan(shown: &str, rows: &PortRows, pipelines: &Pipelines) -> Result<Plan> {
    let mut p = Plan::default();
    let mut tags = tags_by_entity(shown, rows)?;
    for r in &rows.projects {
        let c = Cols { shown, row: r };
        let id = c.id("id")?;
        p.projects.push(Project {
            tags: tags.remove(&id).unwrap_or_default(),
            id,
            name: c.bounded("name", 255)?,
            summary: c.bounded("summary", 4096)?,
            description: c.opt("description")?,
            version: c.int("version")?,
            created_at: c.text("created_at")?,
            updated_at: c.text("modified_at")?,
        });
    }
    let projects: HashSet<String> = p.projects.iter().map(|x| x.id.clone()).collect();
    // (id → kind) of every item, for the edges and sections below.
    let mut kinds: HashMap<String, ItemKind> = HashMap::new();
    // Per item: its blockers, its reason and its related items, as the port keeps them.
    let mut links: Vec<Links> = Vec::new();
    for (kind, table_rows) in [
        (ItemKind::Feature, &rows.features),
        (ItemKind::Task, &rows.tasks),
    ] {
        let pl = match kind {
            ItemKind::Feature => &pipelines.feature,
            ItemKind::Task => &pipelines.task,
        };
        for r in table_rows {
            let c = Cols { shown, row: r };
            let id = c.id("id")?;
            let raw_status = c.text("status")?;
            let status = Status::parse(&raw_status).ok_or_else(|| {
                c.bad("status", format!("'{raw_status}' is no status Cairn knows"))
            })?;
            if status != Status::WillNotImplement && !pl.contains(status) {
                return Err(c.bad(
                    "status",
                    format!(
                        "{raw_status} is not in Cairn's {} pipeline ({}); add it to the pipeline \
                         first (the sync tool, or the config file's pipelines), then import again",
                        kind.as_str(),
                        pl.names().join(", ")
                    ),
                ));
            }
            let raw_priority = c.text("priority")?;
            let priority = Priority::parse(&raw_priority).ok_or_else(|| {
                c.bad(
                    "priority",
                    format!("'{raw_priority}' is not HIGH, MEDIUM or LOW"),
                )
            })?;
            let project_id = c.opt_id("project_id")?;
            if let Some(pid) = &project_id {
                if !projects.contains(pid) {
                    return Err(c.bad("project_id", format!("project {pid} is not in the file")));
                }
            }
            let (name, feature_id, complexity) = match kind {
                ItemKind::Feature => (c.bounded("name", 255)?, None, None),
                ItemKind::Task => {
                    let f = c.opt_id("feature_id")?;
                    if let Some(fid) = &f {
                        if kinds.get(fid) != Some(&ItemKind::Feature) {
                            return Err(
                                c.bad("feature_id", format!("feature {fid} is not in the file"))
                            );
                        }
                    }
                    let cx = c.int("complexity")?;
                    if !(1..=10).contains(&cx) {
                        return Err(c.bad("complexity", format!("{cx} is outside 1..=10")));
                    }
                    (c.bounded("title", 255)?, f, Some(cx))
                }
            };
            let updated_at = c.text("modified_at")?;
            links.push((
                kind,
                id.clone(),
                c.id_list("blocked_by")?,
                c.opt("blocked_reason")?,
                c.id_list("related_to")?,
                updated_at.clone(),
            ));
            kinds.insert(id.clone(), kind);
            p.items.push(Item {
                kind,
                tags: tags.remove(&id).unwrap_or_default(),
                id,
                project_id,
                feature_id,
                name,
                summary: c.bounded("summary", 4096)?,
                description: c.opt("description")?,
                status,
                priority,
                complexity,
                status_reason: None,
                blocked_by: Vec::new(),
                version: c.int("version")?,
                created_at: c.text("created_at")?,
                updated_at,
            });
        }
    }
    let mut related_pairs: HashSet<(String, String)> = HashSet::new();
    for (kind, id, blockers, reason, related, at) in links {
        let what = kind.as_str();
        for b in blockers {
            if b == "NO_OP" {
                let why = reason
                    .clone()
                    .unwrap_or_else(|| "blocked in the port, no reason kept".into());
                p.edges
                    .push((kind, None, id.clone(), "BLOCKS", Some(why), at.clone()));
                continue;
            }
            if kinds.get(&b) != Some(&kind) {
                return Err(Error::invalid(format!(
                    "{shown}: {what} {id} is blocked by {b}, which is no {what} of the file \
                     (Cairn's dependencies join items of one kind); nothing was written"
                )));
            }
            p.edges.push((
                kind,
                Some(b),
                id.clone(),
                "BLOCKS",
                reason.clone(),
                at.clone(),
            ));
        }
        for o in related {
            if kinds.get(&o) != Some(&kind) {
                return Err(Error::invalid(format!(
                    "{shown}: {what} {id} is related to {o}, which is no {what} of the file \
                     (Cairn's dependencies join items of one kind); nothing was written"
                )));
            }
            // The port keeps a relation on both of its ends; Cairn keeps one edge.
            let key = if id < o {
                (id.clone(), o.clone())
            } else {
                (o.clone(), id.clone())
            };
            if related_pairs.insert(key) {
                p.edges
                    .push((kind, Some(id.clone()), o, "RELATES_TO", None, at.clone()));
            }
        }
    }
    for r in &rows.sections {
        let c = Cols { shown, row: r };
        let id = c.id("id")?;
        let entity_type = c.text("entity_type")?.to_ascii_uppercase();
        let entity_id = c.id("entity_id")?;
        let known = match entity_type.as_str() {
            "PROJECT" => projects.contains(&entity_id),
            "FEATURE" => kinds.get(&entity_id) == Some(&ItemKind::Feature),
            "TASK" => kinds.get(&entity_id) == Some(&ItemKind::Task),
            _ => {
                return Err(c.bad(
                    "entity_type",
                    format!("'{entity_type}' is not PROJECT, FEATURE or TASK"),
                ))
            }
        };
        if !known {
            return Err(c.bad(
                "entity_id",
                format!("{entity_type} {entity_id} is not in the file"),
            ));
        }
        let content = c.text("content")?;
        check_len(&c, "content", &content, 65536)?;
        p.sections.push(Section {
            id,
            entity_type,
            entity_id,
            title: c.bounded("title", 255)?,
            usage_description: c.opt("usage_description")?.unwrap_or_default(),
            content,
            content_format: format_of(&c, "content_format")?,
            ordinal: c.int("ordinal")?,
            tags: c.tags("tags")?,
            version: c.int("version")?,
            created_at: c.text("created_at")?,
            updated_at: c.text("modified_at")?,
        });
    }
    let mut tsecs: HashMap<String, Vec<TemplateSection>> = HashMap::new();
    for r in &rows.template_sections {
        let c = Cols { shown, row: r };
        let tid = c.id("template_id")?;
        if !c.tags("tags")?.is_empty() {
            p.dropped.push(format!(
                "the tags of template section {} (Cairn's template sections carry none)",
                c.id("id")?
            ));
        }
        tsecs.entry(tid.clone()).or_default().push(TemplateSection {
            id: c.id("id")?,
            template_id: tid,
            title: c.bounded("title", 255)?,
            usage_description: c.opt("usage_description")?.unwrap_or_default(),
            content_sample: c.opt("content_sample")?.unwrap_or_default(),
            content_format: format_of(&c, "content_format")?,
            is_required: c.flag("is_required")?,
            ordinal: c.int("ordinal")?,
        });
    }
    for r in &rows.templates {
        let c = Cols { shown, row: r };
        let id = c.id("id")?;
        let target = c.text("target_entity_type")?.to_ascii_uppercase();
        if !matches!(target.as_str(), "PROJECT" | "FEATURE" | "TASK") {
            return Err(c.bad(
                "target_entity_type",
                format!("'{target}' is not PROJECT, FEATURE or TASK"),
            ));
        }
        let secs = tsecs.remove(&id).unwrap_or_default();
        let ts = c.text("created_at")?;
        p.templates.push((
            Template {
                name: c.bounded("name", 255)?,
                description: c.opt("description")?.unwrap_or_default(),
                target_entity_type: target,
                is_built_in: c.flag("is_built_in")?,
                is_protected: c.flag("is_protected")?,
                is_enabled: c.flag("is_enabled")?,
                created_by: c.opt("created_by")?,
                tags: c.tags("tags")?,
                version: 1,
                created_at: ts,
                updated_at: c.text("modified_at")?,
                id,
            },
            secs,
        ));
    }
    if let Some(orphan) = tsecs.keys().next() {
        return Err(Error::invalid(format!(
            "{shown}: table template_sections holds sections of template {orphan}, which is not in \
             the file; nothing was written"
        )));
    }
    for r in &rows.molecules {
        let c = Cols { shown, row: r };
        let project_id = c.id("project_id")?;
        if !projects.contains(&project_id) {
            return Err(c.bad(
                "project_id",
                format!("project {project_id} is not in the file"),
            ));
        }
        p.molecules.push(Molecule {
            id: c.id("id")?,
            project_id,
            name: c.bounded("name", 255)?,
            knowledge: c.opt("knowledge")?.unwrap_or_default(),
            related: c.related("related_molecules", src::Related::Molecules)?,
            created_by_task_id: c.id("created_by_task_id")?,
            last_task_id: c.id("last_task_id")?,
            version: c.int("version")?,
            created_at: c.text("created_at")?,
            updated_at: c.text("updated_at")?,
        });
    }
    let molecules: HashSet<String> = p.molecules.iter().map(|m| m.id.clone()).collect();
    for r in &rows.atoms {
        let c = Cols { shown, row: r };
        let project_id = c.id("project_id")?;
        if !projects.contains(&project_id) {
            return Err(c.bad(
                "project_id",
                format!("project {project_id} is not in the file"),
            ));
        }
        let molecule_id = c.opt_id("molecule_id")?;
        if let Some(m) = &molecule_id {
            if !molecules.contains(m) {
                return Err(c.bad("molecule_id", format!("molecule {m} is not in the file")));
            }
        }
        let raw_paths = c.opt("paths")?.unwrap_or_else(|| "[]".into());
        let paths = src::strings(&raw_paths).map_err(|e| c.bad("paths", e))?;
        for g in &paths {
            Glob::parse(g).map_err(|e| c.bad("paths", e))?;
        }
        p.atoms.push(Atom {
            id: c.id("id")?,
            project_id,
            molecule_id,
            name: c.bounded("name", 255)?,
            paths,
            knowledge: c.opt("knowledge")?.unwrap_or_default(),
            related: c.related("related_atoms", src::Related::Atoms)?,
            created_by_task_id: c.id("created_by_task_id")?,
            last_task_id: c.id("last_task_id")?,
            version: c.int("version")?,
            created_at: c.text("created_at")?,
            updated_at: c.text("updated_at")?,
        });
    }
    let atoms: HashSet<String> = p.atoms.iter().map(|a| a.id.clone()).collect();
    for r in &rows.changelog {
        let c = Cols { shown, row: r };
        let raw = c.text("parent_type")?;
        let parent_type = NodeKind::parse(&raw)
            .ok_or_else(|| c.bad("parent_type", format!("'{raw}' is not atom or molecule")))?;
        let parent_id = c.id("parent_id")?;
        let known = match parent_type {
            NodeKind::Atom => atoms.contains(&parent_id),
            NodeKind::Molecule => molecules.contains(&parent_id),
        };
        if !known {
            return Err(c.bad("parent_id", format!("{raw} {parent_id} is not in the file")));
        }
        p.changelog.push(ChangelogEntry {
            id: c.id("id")?,
            parent_type,
            parent_id,
            task_id: c.id("task_id")?,
            summary: c.bounded("summary", 4096)?,
            created_at: c.text("created_at")?,
        });
    }
    if let Some(id) = tags.keys().next() {
        p.dropped.push(format!(
            "{} tag row(s) of entities the file does not hold ({id} first)",
            tags.len()
        ));
    }
    Ok(p)
}

fn format_of(c: &Cols<'_>, col: &str) -> Result<String> {
    let raw = c.text(col)?;
    ContentFormat::parse(&raw.to_ascii_uppercase())
        .map(|f| f.as_str().to_string())
        .ok_or_else(|| {
            c.bad(
                col,
                format!("'{raw}' is not PLAIN_TEXT, MARKDOWN, JSON or CODE"),
            )
        })
}
