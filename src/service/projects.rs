//! What an agent calls a project, turned into the project: its id, its name, or (see
//! [`resolve`]) a path inside its repository. One resolver, so every tool that takes
//! a project reads the same names the same way, and an ambiguous name is refused
//! with its candidates instead of being guessed.

use crate::error::{Error, Result};
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
