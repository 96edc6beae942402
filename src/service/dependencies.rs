//! Dependency edges created and removed directly (`manage_dependency`) and listed.

use crate::domain::container::Dependency as Edge;
use crate::domain::field::Field;
use crate::domain::{id, now, ItemKind, Touched};
use crate::error::{Error, Result};
use crate::service::workflow::add_block;
use crate::service::App;
use crate::store::dependency;
use crate::store::{item, lock};

/// Creates an edge; answers it and, for BLOCKS, the blocked item's new version (its
/// blocked state changed, so readers holding its old version must re-read).
pub async fn create(
    app: &App,
    kind: ItemKind,
    from: &str,
    to: &str,
    edge_type: &str,
) -> Result<(Edge, Vec<Touched>)> {
    let mut touched = Vec::new();
    let mut tx = app.store.write().await?;
    let target = item::require(&mut tx, kind, to).await?;
    let ts = now();
    let fresh = if edge_type == "BLOCKS" {
        if target.status.is_terminal() {
            return Err(Error::invalid(format!(
                "{} {to} is {}: a finished item cannot be blocked",
                kind.as_str(),
                target.status.as_str()
            )));
        }
        let fresh = add_block(&mut tx, kind, from, to, None, &ts).await?;
        let version = lock::touch(&mut tx, item::table(kind), to, &ts).await?;
        touched.push(Touched {
            entity: kind.as_str(),
            id: to.to_string(),
            version,
        });
        fresh
    } else {
        if from == to {
            return Err(Error::invariant("an item cannot relate to itself"));
        }
        item::require(&mut tx, kind, from).await?;
        let eid = id::new_id();
        dependency::insert(
            &mut tx,
            &dependency::NewEdge {
                id: &eid,
                kind,
                from_id: Some(from),
                to_id: to,
                edge_type,
                reason: None,
                now: &ts,
            },
        )
        .await?
    };
    if !fresh {
        return Err(Error::invalid(format!(
            "{from} {edge_type} {to} already exists"
        )));
    }
    let edge = dependency::incoming(&mut tx, kind, to)
        .await?
        .into_iter()
        .find(|e| e.from_id.as_deref() == Some(from) && e.kind == edge_type)
        .ok_or_else(|| Error::Internal("edge vanished after insert".into()))?;
    tx.commit().await?;
    Ok((edge, touched))
}

/// Deletes an edge by id, or by its ends and type; answers the formerly blocked
/// item's new version when it was a BLOCKS edge.
pub async fn delete(
    app: &App,
    id: Option<&str>,
    ends: Option<(ItemKind, &str, &str, &str)>,
) -> Result<Vec<Touched>> {
    let mut tx = app.store.write().await?;
    let ts = now();
    let mut touched = Vec::new();
    match (id, ends) {
        (Some(id), _) => {
            let (kind, _from, to, t) = dependency::get(&mut tx, id)
                .await?
                .ok_or_else(|| Error::not_found("dependency", id))?;
            dependency::delete(&mut tx, id).await?;
            if t == "BLOCKS" {
                let kind = if kind == "task" {
                    ItemKind::Task
                } else {
                    ItemKind::Feature
                };
                let version = lock::touch(&mut tx, item::table(kind), &to, &ts).await?;
                touched.push(Touched {
                    entity: kind.as_str(),
                    id: to,
                    version,
                });
            }
        }
        (None, Some((kind, from, to, t))) => {
            if !dependency::delete_between(&mut tx, Some(from), to, t).await? {
                return Err(Error::NotFound {
                    entity: "dependency",
                    id: format!("{from} {t} {to}"),
                });
            }
            if t == "BLOCKS" {
                let version = lock::touch(&mut tx, item::table(kind), to, &ts).await?;
                touched.push(Touched {
                    entity: kind.as_str(),
                    id: to.to_string(),
                    version,
                });
            }
        }
        (None, None) => {
            return Err(Error::validation(
                Field::Id,
                format!(
                    "give the dependency id, or {} and {}",
                    Field::FromId,
                    Field::ToId
                ),
            ))
        }
    }
    tx.commit().await?;
    Ok(touched)
}

/// (dependencies: edges into the item, dependents: edges out of it)
pub async fn list(app: &App, kind: ItemKind, id: &str) -> Result<(Vec<Edge>, Vec<Edge>)> {
    let mut c = app.store.read().await?;
    item::require(&mut c, kind, id).await?;
    let inc = dependency::incoming(&mut c, kind, id).await?;
    let out = dependency::outgoing(&mut c, kind, id).await?;
    Ok((inc, out))
}
