//! A project's `Project` subject: the memory's name for an orchestrator project, so
//! atoms scoped to it are what `recall {projectId}` answers. Every project gets one,
//! created and linked in the transaction that creates the project (or attaches a
//! repository to it); a `Project:NAME` reference or a project's id, wherever a subject
//! is taken, means that linked subject, linked (or created) on first use when an
//! older database lacks it.

use time::OffsetDateTime;

use crate::domain::memory::identity::normalise_name;
use crate::domain::memory::model::{
    ProjectFields, Subject, SubjectDetails, SubjectId, SubjectKind,
};
use crate::error::{Error, Result};
use crate::service::projects::{self, Named};
use crate::store::memory::{self as store, SubjectRow};
use crate::store::Conn;

use super::{fresh, load_subject, stamp, subject_to_row};

fn project_uuid(id: &str) -> Result<u128> {
    uuid::Uuid::parse_str(id)
        .map(|u| u.as_u128())
        .map_err(|e| Error::Internal(format!("stored project id {id}: {e}")))
}

/// The live Project subject linked to project `p`: the one linked already; else an
/// unlinked Project subject of its name, when that name is this project's alone (so
/// a subject remembered before the project existed becomes its); else a new one.
/// `created` gains a subject this made.
pub(crate) async fn ensure(
    c: &mut Conn,
    p: &Named,
    now: OffsetDateTime,
    created: &mut Vec<Subject>,
) -> Result<SubjectRow> {
    if let Some(row) = store::subject_of_project(c, &p.id).await? {
        return Ok(row);
    }
    let uuid = project_uuid(&p.id)?;
    if projects::named(c, &p.name).await?.len() == 1 {
        let norm = normalise_name(&p.name);
        for row in store::subjects_named(c, SubjectKind::Project.as_wire(), &norm).await? {
            if row.merged_into.is_none() && row.orchestrator_project_id.is_none() {
                return link(c, &row.id, uuid, now).await;
            }
        }
    }
    let s = Subject {
        id: SubjectId(fresh()),
        kind: SubjectKind::Project,
        name: p.name.clone(),
        aliases: vec![],
        title: None,
        summary: None,
        tags: vec![],
        created_at: now,
        updated_at: now,
        merged_into: None,
        details: SubjectDetails::Project(ProjectFields {
            orchestrator_project: Some(uuid),
            ..Default::default()
        }),
    };
    super::subjects::insert(c, &s).await?;
    created.push(s.clone());
    Ok(subject_to_row(&s, 1))
}

/// Links subject `id` (a live, unlinked Project subject) to a project: a consequence of
/// the project's creation, so its version moves without a check.
async fn link(c: &mut Conn, id: &str, project: u128, now: OffsetDateTime) -> Result<SubjectRow> {
    let (mut s, version) = load_subject(c, id).await?;
    match &mut s.details {
        SubjectDetails::Project(f) => f.orchestrator_project = Some(project),
        d => {
            *d = SubjectDetails::Project(ProjectFields {
                orchestrator_project: Some(project),
                ..Default::default()
            })
        }
    }
    s.updated_at = now;
    let row = subject_to_row(&s, version);
    let v = store::update_subject(c, &row, version).await?;
    Ok(SubjectRow {
        version: v,
        updated_at: stamp(now),
        ..row
    })
}

/// Creates or links the Project subject of a project just created or given a
/// repository (`name` its name).
pub(crate) async fn for_new_project(c: &mut Conn, id: &str, name: &str) -> Result<()> {
    let p = Named {
        id: id.to_string(),
        name: name.to_string(),
    };
    ensure(c, &p, OffsetDateTime::now_utc(), &mut Vec::new())
        .await
        .map(|_| ())
}

/// What `Project:NAME` names when NAME is a project's: its linked subject (linked or
/// created when `create`; else `None` while it has none). `None` too when no project
/// has that name; an ambiguous name is refused.
pub(crate) async fn named_ref(
    c: &mut Conn,
    name: &str,
    create: bool,
    now: OffsetDateTime,
    created: &mut Vec<Subject>,
) -> Result<Option<SubjectRow>> {
    let Some(p) = projects::one_named(c, "subject", name).await? else {
        return Ok(None);
    };
    if create {
        return ensure(c, &p, now, created).await.map(Some);
    }
    Ok(store::subject_of_project(c, &p.id).await?)
}

/// What a project's id names where a subject is taken: its linked subject (linked or
/// created when `create`). `None` when `id` is no project's.
pub(crate) async fn id_ref(
    c: &mut Conn,
    id: &str,
    create: bool,
    now: OffsetDateTime,
    created: &mut Vec<Subject>,
) -> Result<Option<SubjectRow>> {
    if let Some(row) = store::subject_of_project(c, id).await? {
        return Ok(Some(row));
    }
    if !create {
        return Ok(None);
    }
    let Some(p) = crate::store::project::get(c, id).await? else {
        return Ok(None);
    };
    let p = Named {
        id: p.id,
        name: p.name,
    };
    ensure(c, &p, now, created).await.map(Some)
}
