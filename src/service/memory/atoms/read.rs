//! Reading atoms: one with its evidence, edges and history (get), and pages of them (list).

use super::*;
use crate::domain::field::Field;

/// One atom as `get` answers it: with its evidence, its edges, its history chain
/// and the other atoms on its key.
pub struct AtomView {
    pub atom: MemoryAtom,
    pub version: i64,
    pub status_reason: Option<String>,
    pub evidence: Vec<Reference>,
    pub strength: Strength,
    pub edges: Vec<MemoryEdge>,
    /// Superseded predecessors and successors, oldest first, this one included.
    pub history: Vec<(MemoryAtom, i64)>,
    /// Other atoms on the same key (any status), with their versions.
    pub on_key: Vec<(MemoryAtom, i64)>,
    pub subjects: HashMap<SubjectId, (SubjectKind, String)>,
}

/// Reads one atom with everything around it.
pub async fn get(app: &App, id: &str) -> Result<AtomView> {
    let mut c = app.store.snapshot().await?;
    let (a, row) = load_atom(&mut c, id).await?;
    let ev = store::evidence_of(&mut c, std::slice::from_ref(&row.id)).await?;
    let ref_ids: Vec<String> = ev.iter().map(|(_, r, _)| r.clone()).collect();
    let evidence: Vec<Reference> = store::references_by_ids(&mut c, &ref_ids)
        .await?
        .iter()
        .map(reference_from_row)
        .collect::<Result<_>>()?;
    let strength = strength_of(evidence.iter().map(|r| r.ref_type));
    let edges: Vec<MemoryEdge> = store::edges_touching(&mut c, std::slice::from_ref(&row.id), &[])
        .await?
        .iter()
        .map(edge_from_row)
        .collect::<Result<_>>()?;
    // The supersession chain both ways.
    let mut seen: HashSet<String> = HashSet::from([row.id.clone()]);
    let mut frontier = vec![row.id.clone()];
    let mut chain: Vec<String> = vec![row.id.clone()];
    // (winner, loser) of every supersession met, to order the chain by it.
    let mut replaced: HashSet<(String, String)> = HashSet::new();
    while !frontier.is_empty() && chain.len() < 200 {
        let es = store::edges_touching(&mut c, &frontier, &["SUPERSEDES"]).await?;
        frontier.clear();
        for e in es {
            replaced.insert((e.from_id.clone(), e.to_id.clone()));
            for n in [e.from_id, e.to_id] {
                if seen.insert(n.clone()) {
                    frontier.push(n.clone());
                    chain.push(n);
                }
            }
        }
    }
    let mut history: Vec<(MemoryAtom, i64)> = Vec::new();
    for r in store::atoms_by_ids(&mut c, &chain).await? {
        history.push((atom_from_row(&r)?, r.version));
    }
    history = supersession_order(history, &replaced);
    let on_key = match &a.claim_key {
        Some(k) => {
            let f = AtomFilter {
                claim_key: Some(k.clone()),
                ..Default::default()
            };
            store::list_atoms(&mut c, &f, 50, 0)
                .await?
                .0
                .iter()
                .filter(|r| r.id != row.id)
                .map(|r| atom_from_row(r).map(|a| (a, r.version)))
                .collect::<Result<_>>()?
        }
        None => vec![],
    };
    let mut ids: Vec<SubjectId> = Vec::new();
    for x in std::iter::once(&a)
        .chain(history.iter().map(|h| &h.0))
        .chain(on_key.iter().map(|k| &k.0))
    {
        ids.extend(x.about);
        ids.extend(x.context.subject());
    }
    for e in &edges {
        for n in [e.from, e.to] {
            if let NodeRef::Subject(s) = n {
                ids.push(s);
            }
        }
    }
    let subjects = crate::service::memory::subjects::names_of(&mut c, &ids).await?;
    c.commit().await?;
    Ok(AtomView {
        atom: a,
        version: row.version,
        status_reason: row.status_reason,
        evidence,
        strength,
        edges,
        history,
        on_key,
        subjects,
    })
}

/// A history chain oldest first: an atom before the one that superseded it, whatever
/// clocks their calls gave; atoms the edges leave unordered by when they were
/// recorded, then by id.
fn supersession_order(
    mut atoms: Vec<(MemoryAtom, i64)>,
    replaced: &HashSet<(String, String)>,
) -> Vec<(MemoryAtom, i64)> {
    atoms.sort_by(|x, y| {
        x.0.recorded_at
            .cmp(&y.0.recorded_at)
            .then(x.0.id.cmp(&y.0.id))
    });
    let ids: Vec<String> = atoms.iter().map(|(a, _)| a.id.to_string()).collect();
    // Kahn's algorithm over loser -> winner, taking the earliest ready atom each time.
    let mut waiting: Vec<usize> = ids
        .iter()
        .map(|w| {
            replaced
                .iter()
                .filter(|(win, lose)| win == w && ids.contains(lose))
                .count()
        })
        .collect();
    let mut done = vec![false; atoms.len()];
    let mut order = Vec::with_capacity(atoms.len());
    while order.len() < atoms.len() {
        // A cycle (never written, but a file is not trusted) falls back to the time order.
        let next = (0..atoms.len())
            .find(|&i| !done[i] && waiting[i] == 0)
            .or_else(|| (0..atoms.len()).find(|&i| !done[i]));
        let Some(i) = next else { break };
        done[i] = true;
        order.push(i);
        for (j, w) in ids.iter().enumerate() {
            if replaced.contains(&(w.clone(), ids[i].clone())) && waiting[j] > 0 {
                waiting[j] -= 1;
            }
        }
    }
    let mut slots: Vec<Option<(MemoryAtom, i64)>> = atoms.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// What `list` filters on.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub statuses: Vec<MemoryStatus>,
    pub types: Vec<MemoryAtomType>,
    pub about: Vec<String>,
    pub predicate: Option<String>,
    pub claim_key: Option<String>,
    pub include_history: bool,
    pub limit: i64,
    pub offset: i64,
}

/// A page of atoms.
pub struct AtomPage {
    pub items: Vec<(MemoryAtom, i64)>,
    pub total: i64,
    pub subjects: HashMap<SubjectId, (SubjectKind, String)>,
}

/// Atoms by status, type, subject, predicate or claim key, newest first. Without a
/// status filter, retired atoms and drafts appear only with `include_history`.
pub async fn list(app: &App, q: ListQuery) -> Result<AtomPage> {
    let mut c = app.store.snapshot().await?;
    let mut about = Vec::new();
    for s in &q.about {
        let r = SubjectRef::parse(s).ok_or_else(|| {
            Error::validation(
                Field::About,
                format!("'{s}' is neither a subject id nor Kind:name (Lib:zod)"),
            )
        })?;
        let row = resolve_ref(
            &mut c,
            &r,
            false,
            OffsetDateTime::now_utc(),
            &mut Vec::new(),
        )
        .await?;
        about.push(row.id.clone());
        about.extend(merged_into(&mut c, &row.id).await?);
    }
    let statuses: Vec<String> = if !q.statuses.is_empty() {
        q.statuses.iter().map(|s| s.as_wire().to_string()).collect()
    } else if q.include_history {
        vec![]
    } else {
        ["ACTIVE", "NEEDS_REVIEW", "CONTESTED", "PROPOSED"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let f = AtomFilter {
        statuses,
        types: q.types.iter().map(|t| t.as_wire().to_string()).collect(),
        about,
        predicate: q.predicate.clone(),
        claim_key: q.claim_key.clone(),
        ..Default::default()
    };
    let (rows, total) = store::list_atoms(&mut c, &f, q.limit, q.offset).await?;
    let mut items = Vec::new();
    for r in &rows {
        items.push((atom_from_row(r)?, r.version));
    }
    let ids: Vec<SubjectId> = items
        .iter()
        .flat_map(|(a, _)| a.about.into_iter().chain(a.context.subject()))
        .collect();
    let subjects = crate::service::memory::subjects::names_of(&mut c, &ids).await?;
    c.commit().await?;
    Ok(AtomPage {
        items,
        total,
        subjects,
    })
}
