//! What an agent calls a project, turned into the project: its id, its name, or (see
//! [`resolve`]) a path inside its repository. One resolver, so every tool that takes
//! a project reads the same names the same way, and an ambiguous name is refused
//! with its candidates instead of being guessed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::service::App;
use crate::store::{project, Conn};

/// A project as a name resolves to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub id: String,
    pub name: String,
}

/// The projects called `name`: those spelled exactly so, else those whose name is
/// `name` ignoring case and surrounding spaces. Several means the name is ambiguous.
pub async fn named(c: &mut Conn, name: &str) -> Result<Vec<Named>> {
    let all = project::names(c).await?;
    let want = name.trim();
    let exact: Vec<Named> = all
        .iter()
        .filter(|(_, n)| n == want)
        .map(|(id, n)| Named {
            id: id.clone(),
            name: n.clone(),
        })
        .collect();
    if !exact.is_empty() {
        return Ok(exact);
    }
    let folded = want.to_lowercase();
    Ok(all
        .into_iter()
        .filter(|(_, n)| n.trim().to_lowercase() == folded)
        .map(|(id, name)| Named { id, name })
        .collect())
}

/// The refusal of a name that several projects share, listing them.
pub fn ambiguous(param: &str, name: &str, found: &[Named]) -> Error {
    let list: Vec<String> = found
        .iter()
        .take(10)
        .map(|n| format!("{} ({})", n.name, n.id))
        .collect();
    Error::validation(
        param,
        format!(
            "'{name}' names {} projects: {}; send the id of the one meant",
            found.len(),
            list.join(", ")
        ),
    )
}

/// The one project `name` names, `None` when none does; an ambiguous name is refused.
pub async fn one_named(c: &mut Conn, param: &str, name: &str) -> Result<Option<Named>> {
    let mut found = named(c, name).await?;
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(ambiguous(param, name, &found)),
    }
}

/// The project id `given` means, for parameter `param`: an id (UUID shape) as it is;
/// an absolute path, the project whose repository (code or ontology) holds it, the
/// innermost when repositories nest; otherwise a name ([`named`]). A name or path
/// nobody answers to is NOT_FOUND saying what to send; an ambiguous one is refused
/// with its candidates.
pub async fn resolve(app: &App, param: &str, given: &str) -> Result<String> {
    if let Ok(id) = crate::domain::id::parse(param, given) {
        return Ok(id);
    }
    let want = given.trim();
    let mut c = app.store.read().await?;
    if want.starts_with('/') {
        let p = Path::new(want);
        let real = p.canonicalize().ok();
        let holds = |root: &str| {
            let r = Path::new(root);
            let rr = r.canonicalize().unwrap_or_else(|_| PathBuf::from(r));
            p.starts_with(r)
                || p.starts_with(&rr)
                || real.as_deref().is_some_and(|x| x.starts_with(&rr))
        };
        let mut best: Vec<(usize, String)> = project::repo_roots(&mut c)
            .await?
            .into_iter()
            .filter(|(_, root)| holds(root))
            .map(|(id, root)| (root.len(), id))
            .collect();
        let deepest = best.iter().map(|b| b.0).max().unwrap_or(0);
        best.retain(|b| b.0 == deepest);
        best.sort();
        best.dedup();
        return match best.len() {
            0 => Err(Error::NotFoundNear {
                entity: "project",
                id: want.to_string(),
                message: format!("no project's repository holds {want}"),
                nearest: vec![],
            }),
            1 => Ok(best.remove(0).1),
            _ => {
                let all = project::names(&mut c).await?;
                let found: Vec<Named> = all
                    .into_iter()
                    .filter(|(id, _)| best.iter().any(|b| &b.1 == id))
                    .map(|(id, name)| Named { id, name })
                    .collect();
                Err(ambiguous(param, want, &found))
            }
        };
    }
    match one_named(&mut c, param, want).await? {
        Some(n) => Ok(n.id),
        None => Err(Error::NotFoundNear {
            entity: "project",
            id: want.to_string(),
            message: format!(
                "no project is named '{}'",
                crate::domain::container::clip(want, 80)
            ),
            nearest: vec![],
        }),
    }
}
