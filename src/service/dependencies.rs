//! Dependency edges created and removed directly (`manage_dependency`) and listed.

use crate::domain::{id, now, ItemKind};
use crate::error::{Error, Result};
use crate::service::workflow::add_block;
use crate::service::App;
use crate::domain::container::Dependency as Edge;
use crate::store::dependency;
use crate::store::{item, lock};

pub async fn create(
    app: &App,
    kind: ItemKind,
    from: &str,
    to: &str,
    edge_type: &str,
) -> Result<Edge> {
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
        // The target's blocked state changed: readers holding its old version must re-read.
        lock::touch(&mut tx, item::table(kind), to, &ts).await?;
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
    Ok(edge)
}

/// Deletes an edge by id, or by its ends and type.
pub async fn delete(
    app: &App,
    id: Option<&str>,
    ends: Option<(ItemKind, &str, &str, &str)>,
) -> Result<()> {
    let mut tx = app.store.write().await?;
    let ts = now();
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
                lock::touch(&mut tx, item::table(kind), &to, &ts).await?;
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
                lock::touch(&mut tx, item::table(kind), to, &ts).await?;
            }
        }
        (None, None) => {
            return Err(Error::validation(
                "id",
                "give the dependency id, or fromId and toId",
            ))
        }
    }
    tx.commit().await?;
    Ok(())
}

/// (dependencies: edges into the item, dependents: edges out of it)
pub async fn list(app: &App, kind: ItemKind, id: &str) -> Result<(Vec<Edge>, Vec<Edge>)> {
    let mut c = app.store.read().await?;
    item::require(&mut c, kind, id).await?;
    let inc = dependency::incoming(&mut c, kind, id).await?;
    let out = dependency::outgoing(&mut c, kind, id).await?;
    Ok((inc, out))
}
