//! Path context: which atoms (and through them which molecules) cover a set of file
//! paths. Each project's atoms are compiled once into a pattern index and kept in
//! memory; before reuse the cached copy is checked against the project's graph
//! generation, a counter the database bumps with every atom or molecule write, so a
//! write by another server process on the same file is seen on the next call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::domain::field::{Field, Tool};
use crate::domain::glob::{self, Glob, Index, Origin};
use crate::domain::graph::{
    context_paths, Atom, AtomPaths, ChangelogEntry, Molecule, NodeKind, Related,
};
use crate::domain::{Item, ItemKind, Status};
use crate::error::{Error, Result};
use crate::service::graph::Resolved;
use crate::service::App;
use crate::store::{code, graph, section, Conn};

/// The token budget of a context answer when the caller names none: a few thousand
/// tokens, most specific atoms first, what was left out listed.
pub const DEFAULT_TOKENS: i64 = 4000;

/// At most this many paths per context call.
pub const PATHS_MAX: usize = 500;
/// Near misses listed per unmatched path.
const NEAR_MISSES_MAX: usize = 5;

/// One atom in a snapshot: what matching needs, and the whole atom once a call has
/// matched it (read then, so the first call reads only the matched atoms' knowledge).
struct Slot {
    head: AtomPaths,
    full: Option<Atom>,
}

/// One project's graph as of one generation, with its compiled pattern index. Atoms
/// live in slots (the index's owners); a refresh empties the slots of changed or
/// deleted atoms and appends the new versions.
pub struct Snapshot {
    pub generation: i64,
    slots: Vec<Option<Slot>>,
    atom_pos: HashMap<String, usize>,
    molecules: Vec<Molecule>,
    molecule_pos: HashMap<String, usize>,
    index: Index,
}

impl Snapshot {
    fn build(generation: i64, atoms: Vec<Slot>, molecules: Vec<Molecule>) -> Snapshot {
        let mut s = Snapshot {
            generation,
            slots: Vec::with_capacity(atoms.len()),
            atom_pos: HashMap::with_capacity(atoms.len()),
            molecules: vec![],
            molecule_pos: HashMap::new(),
            index: Index::default(),
        };
        for a in atoms {
            s.insert(a);
        }
        s.set_molecules(molecules);
        s
    }

    fn from_heads(generation: i64, atoms: Vec<AtomPaths>, molecules: Vec<Molecule>) -> Snapshot {
        let slots = atoms
            .into_iter()
            .map(|head| Slot { head, full: None })
            .collect();
        Snapshot::build(generation, slots, molecules)
    }

    fn insert(&mut self, a: Slot) {
        let owner = self.slots.len();
        for (pattern, p) in a.head.paths.iter().enumerate() {
            // Patterns were validated on write; one that no longer parses (written
            // by an older build) is skipped rather than failing every lookup.
            if let Ok(g) = Glob::parse_stored(p) {
                self.index.add(Origin { owner, pattern }, g);
            }
        }
        self.atom_pos.insert(a.head.id.clone(), owner);
        self.slots.push(Some(a));
    }

    fn remove(&mut self, id: &str) {
        if let Some(owner) = self.atom_pos.remove(id) {
            self.slots[owner] = None;
            self.index.remove(owner);
        }
    }

    fn set_molecules(&mut self, molecules: Vec<Molecule>) {
        self.molecule_pos = molecules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.clone(), i))
            .collect();
        self.molecules = molecules;
    }

    /// Applies what changed since this snapshot's generation.
    fn apply(
        &mut self,
        generation: i64,
        changed: Vec<AtomPaths>,
        deleted: Vec<String>,
        molecules: Vec<Molecule>,
    ) {
        for id in &deleted {
            self.remove(id);
        }
        for head in changed {
            self.remove(&head.id);
            self.insert(Slot { head, full: None });
        }
        self.set_molecules(molecules);
        self.generation = generation;
        // Emptied slots cost lookups; compact once they outnumber the live atoms.
        if self.index.dead() > self.atom_pos.len().max(64) {
            let live: Vec<Slot> = self.slots.drain(..).flatten().collect();
            let molecules = std::mem::take(&mut self.molecules);
            *self = Snapshot::build(generation, live, molecules);
        }
    }

    fn atom(&self, owner: usize) -> Option<&AtomPaths> {
        self.slots
            .get(owner)
            .and_then(Option::as_ref)
            .map(|s| &s.head)
    }

    fn full(&self, owner: usize) -> Option<&Atom> {
        self.slots
            .get(owner)
            .and_then(Option::as_ref)
            .and_then(|s| s.full.as_ref())
    }

    /// Reads, from `c` (the read this snapshot's generation is), the whole atoms of
    /// the `owners` not read before: one statement per 500 atoms.
    async fn fill(&mut self, c: &mut Conn, owners: &[usize]) -> Result<()> {
        let missing: Vec<&str> = owners
            .iter()
            .filter_map(|o| self.slots.get(*o).and_then(Option::as_ref))
            .filter(|s| s.full.is_none())
            .map(|s| s.head.id.as_str())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        for a in graph::atoms_by_ids(c, &missing).await? {
            let owner = self.atom_pos.get(&a.id).copied();
            if let Some(Some(slot)) = owner.and_then(|o| self.slots.get_mut(o)) {
                slot.full = Some(a);
            }
        }
        Ok(())
    }

    fn atom_name(&self, id: &str) -> Option<String> {
        self.atom_pos
            .get(id)
            .and_then(|i| self.atom(*i))
            .map(|a| a.name.clone())
    }

    fn molecule_name(&self, id: &str) -> Option<String> {
        self.molecule_pos
            .get(id)
            .map(|i| self.molecules[*i].name.clone())
    }
}

type Cell = Arc<tokio::sync::Mutex<Option<Snapshot>>>;

/// Compiled snapshots by project, shared by every call of one server process. Each
/// project's snapshot sits behind its own async lock, held while it is refreshed and
/// read, so two calls never refresh the same project at once.
#[derive(Default)]
pub struct GraphCache {
    projects: Mutex<HashMap<String, Cell>>,
}

impl GraphCache {
    fn cell(&self, project_id: &str) -> Cell {
        match self.projects.lock() {
            Ok(mut m) => m.entry(project_id.to_string()).or_default().clone(),
            // A poisoned map only means a panic elsewhere; a fresh cell is correct.
            Err(_) => Cell::default(),
        }
    }
}

/// Past this many changed atoms a full reload is cheaper than patching.
const PATCH_MAX: usize = 2000;

/// A project's compiled graph for one read: the cached one (its lock held while the
/// read uses it), or one built for this read alone.
enum Held {
    Cached(tokio::sync::OwnedMutexGuard<Option<Snapshot>>),
    Own(Box<Snapshot>),
}

impl Held {
    fn get_mut(&mut self) -> Option<&mut Snapshot> {
        match self {
            Held::Cached(g) => g.as_mut(),
            Held::Own(s) => Some(s),
        }
    }
}

/// The project's compiled graph as of the read `c` holds (a snapshot, `Store::snapshot`):
/// the cached one while its generation is the read's, patched with the atoms written
/// or deleted since, or rebuilt, from `c` itself, so what is applied is the state the
/// rest of the read sees. When another call has already moved the cache past this
/// read's state, the read builds its own rather than mix two states.
async fn held(app: &App, c: &mut Conn, project_id: &str) -> Result<Held> {
    // Read before the cell exists, so a call naming no project leaves no cell behind.
    let generation = graph::project_generation(c, project_id)
        .await?
        .ok_or_else(|| Error::not_found("project", project_id))?;
    let mut guard = app.graph.cell(project_id).lock_owned().await;
    let cached = guard.as_ref().map(|s| s.generation);
    if cached == Some(generation) {
        return Ok(Held::Cached(guard));
    }
    if cached.is_some_and(|g| g > generation) {
        drop(guard);
        let (atoms, molecules) = graph::load_matcher(c, project_id).await?;
        return Ok(Held::Own(Box::new(Snapshot::from_heads(
            generation, atoms, molecules,
        ))));
    }
    if let Some(s) = guard.as_mut() {
        // Bounded, so a project rewritten since reads no more than it needs to know
        // that a rebuild is due.
        let changed = graph::atoms_since(c, project_id, s.generation, PATCH_MAX as i64 + 1).await?;
        let deleted = if changed.len() <= PATCH_MAX {
            graph::deleted_since(c, project_id, s.generation).await?
        } else {
            vec![]
        };
        if changed.len() + deleted.len() <= PATCH_MAX {
            let molecules = graph::molecules_of(c, project_id).await?;
            tracing::debug!(
                project = project_id,
                generation,
                changed = changed.len(),
                deleted = deleted.len(),
                "graph snapshot patched"
            );
            s.apply(generation, changed, deleted, molecules);
            return Ok(Held::Cached(guard));
        }
    }
    let (atoms, molecules) = graph::load_matcher(c, project_id).await?;
    tracing::debug!(
        project = project_id,
        generation,
        atoms = atoms.len(),
        "graph snapshot rebuilt"
    );
    *guard = Some(Snapshot::from_heads(generation, atoms, molecules));
    Ok(Held::Cached(guard))
}

pub struct Options {
    pub changelog_limit: i64,
    pub max_tokens: Option<i64>,
}

/// Per atom: each matched path with the patterns that matched it, and the best
/// specificity among those patterns.
type Matches = (Vec<(String, Vec<String>)>, usize);

/// One matched atom.
pub struct ContextAtom {
    pub atom: Atom,
    /// Requested paths this atom matched, in request order, each with the patterns of
    /// the atom that matched it.
    pub matched: Vec<(String, Vec<String>)>,
    /// Literal segments before the first wildcard of the most specific matching pattern.
    pub specificity: usize,
    pub related: Vec<Resolved>,
    pub changelog: Vec<ChangelogEntry>,
    pub tokens: usize,
}

pub struct ContextMolecule {
    pub molecule: Molecule,
    pub related: Vec<Resolved>,
    pub atoms: Vec<ContextAtom>,
    /// Set when a token budget left the molecule's knowledge out.
    pub knowledge_omitted: bool,
}

/// A pattern that shares an unmatched path's fixed prefix but did not match it.
pub struct NearMiss {
    pub atom_id: String,
    pub atom_name: String,
    pub pattern: String,
}

pub struct Omitted {
    pub id: String,
    pub name: String,
    pub specificity: usize,
    pub tokens: usize,
}

pub struct Budget {
    pub max_tokens: usize,
    pub estimated_tokens: usize,
    pub omitted_atoms: Vec<Omitted>,
    pub omitted_molecule_knowledge: Vec<Omitted>,
}

pub struct Context {
    pub paths: Vec<String>,
    /// Absolute paths that lie outside the project's repository (or a project with no
    /// repository), with why: they match nothing.
    pub refused_paths: Vec<(String, String)>,
    pub molecules: Vec<ContextMolecule>,
    pub orphan_atoms: Vec<ContextAtom>,
    pub unmatched_paths: Vec<String>,
    pub near_misses: Vec<(String, Vec<NearMiss>)>,
    pub budget: Option<Budget>,
    pub generation: i64,
}

/// Tokens estimated as characters / 4, plus a little for the JSON around each field.
fn tokens_of(chars: usize) -> usize {
    chars.div_ceil(4)
}

fn atom_tokens(a: &ContextAtom) -> usize {
    let mut n = 60
        + a.atom.name.len()
        + a.atom.knowledge.len()
        + a.atom.paths.iter().map(|p| p.len() + 3).sum::<usize>();
    for (p, pats) in &a.matched {
        n += 2 * p.len() + 8 + pats.iter().map(|x| x.len() + 3).sum::<usize>();
    }
    for (r, name) in &a.related {
        n += 60 + r.reason.len() + name.as_ref().map_or(0, String::len);
    }
    for e in &a.changelog {
        n += 120 + e.summary.len();
    }
    tokens_of(n)
}

fn resolve(related: &[Related], name: impl Fn(&str) -> Option<String>) -> Vec<Resolved> {
    related.iter().map(|r| (r.clone(), name(&r.id))).collect()
}

/// Matches `raw_paths` against every atom pattern of the project, in one read
/// transaction.
pub async fn context(
    app: &App,
    project_id: &str,
    raw_paths: &[String],
    opts: &Options,
) -> Result<Context> {
    let mut tx = app.store.snapshot().await?;
    let c = context_in(app, &mut tx, project_id, raw_paths, opts).await?;
    tx.commit().await?;
    Ok(c)
}

/// [`context`] inside the caller's read `c` (a snapshot).
pub async fn context_in(
    app: &App,
    c: &mut Conn,
    project_id: &str,
    raw_paths: &[String],
    opts: &Options,
) -> Result<Context> {
    if raw_paths.len() > PATHS_MAX {
        return Err(Error::validation(
            Field::Paths,
            format!(
                "{} paths given, at most {PATHS_MAX} per call",
                raw_paths.len()
            ),
        ));
    }
    // Answers NOT_FOUND for a missing project.
    let mut guard = held(app, c, project_id).await?;
    let Some(snap) = guard.get_mut() else {
        return Err(Error::Internal(
            "graph snapshot missing after refresh".into(),
        ));
    };

    // Requested paths, normalised and de-duplicated in request order. An absolute
    // path inside the project's repository is made relative to it; one outside it is
    // refused with its reason. Relative paths that cannot name a file (`..`) match
    // nothing and are reported unmatched, in request order with the rest.
    let root = code::repo_of(c, project_id)
        .await?
        .map(|r| PathBuf::from(r.repo_path));
    let mut paths: Vec<String> = Vec::new();
    let mut outside: Vec<String> = Vec::new();
    let mut refused: Vec<(String, String)> = Vec::new();
    for raw in raw_paths {
        match place(raw, root.as_deref()) {
            Ok(Some(p)) if !paths.contains(&p) => paths.push(p),
            Ok(Some(_)) => {}
            Ok(None) => {
                let r = raw.trim().to_string();
                if !r.is_empty() && !outside.contains(&r) {
                    outside.push(r);
                }
            }
            Err(why) => refused.push((raw.trim().to_string(), why)),
        }
    }
    let mut unmatched: Vec<String> = Vec::new();

    // atom position → (path → patterns) and best specificity.
    let mut hits: HashMap<usize, Matches> = HashMap::new();
    let mut near_misses = Vec::new();
    for p in &paths {
        let found = snap.index.lookup(p);
        if found.is_empty() {
            unmatched.push(p.clone());
            let mut nm: Vec<NearMiss> = Vec::new();
            for o in snap.index.near_misses(p, NEAR_MISSES_MAX) {
                let Some(a) = snap.atom(o.owner) else {
                    continue;
                };
                nm.push(NearMiss {
                    atom_id: a.id.clone(),
                    atom_name: a.name.clone(),
                    pattern: a.paths[o.pattern].clone(),
                });
            }
            if !nm.is_empty() {
                near_misses.push((p.clone(), nm));
            }
            continue;
        }
        for h in found {
            let Some(a) = snap.atom(h.origin.owner) else {
                continue;
            };
            let e = hits.entry(h.origin.owner).or_default();
            e.1 = e.1.max(h.specificity);
            let pattern = a.paths[h.origin.pattern].clone();
            match e.0.iter_mut().find(|(q, _)| q == p) {
                Some((_, pats)) => {
                    if !pats.contains(&pattern) {
                        pats.push(pattern)
                    }
                }
                None => e.0.push((p.clone(), vec![pattern])),
            }
        }
    }

    if !outside.is_empty() {
        let order = |p: &String| {
            raw_paths
                .iter()
                .position(|r| r.trim() == p || glob::normalize_path(r).as_ref() == Some(p))
        };
        unmatched.extend(outside);
        unmatched.sort_by_key(order);
    }

    // Matched atoms in name order (then id), for a deterministic answer.
    let mut positions: Vec<usize> = hits.keys().copied().collect();
    positions.sort_by(|a, b| {
        let (x, y) = (snap.atom(*a), snap.atom(*b));
        x.map(|x| (&x.name, &x.id))
            .cmp(&y.map(|y| (&y.name, &y.id)))
    });
    // The matched atoms' knowledge, read once per atom and generation: kept in the
    // snapshot, so the next call matching them reads nothing more.
    snap.fill(c, &positions).await?;
    let snap = &*snap;
    let ids: Vec<&str> = positions
        .iter()
        .filter_map(|i| snap.atom(*i).map(|a| a.id.as_str()))
        .collect();
    let mut logs = if opts.changelog_limit > 0 {
        graph::recent_changelog(c, NodeKind::Atom, &ids, opts.changelog_limit).await?
    } else {
        HashMap::new()
    };
    let mut matched: Vec<ContextAtom> = positions
        .iter()
        .filter_map(|i| {
            let a = snap.full(*i)?.clone();
            let (m, spec) = hits.remove(i).unwrap_or_default();
            let mut ca = ContextAtom {
                related: resolve(&a.related, |id| snap.atom_name(id)),
                changelog: logs.remove(&a.id).unwrap_or_default(),
                atom: a,
                matched: m,
                specificity: spec,
                tokens: 0,
            };
            ca.tokens = atom_tokens(&ca);
            Some(ca)
        })
        .collect();

    // The token budget keeps the most specific atoms first, then molecule knowledge.
    let mut budget = None;
    let mut dropped_knowledge: Vec<String> = Vec::new();
    if let Some(max) = opts.max_tokens {
        let max = max.max(0) as usize;
        let mut used = tokens_of(40 + unmatched.iter().map(|p| p.len() + 3).sum::<usize>());
        let mut order: Vec<usize> = (0..matched.len()).collect();
        order.sort_by(|a, b| {
            matched[*b]
                .specificity
                .cmp(&matched[*a].specificity)
                .then(a.cmp(b))
        });
        let mut keep = vec![false; matched.len()];
        let mut omitted_atoms = Vec::new();
        for i in order {
            let a = &matched[i];
            // A molecule's frame (id, name) is paid once, by its first atom kept.
            if used + a.tokens <= max {
                used += a.tokens;
                keep[i] = true;
            } else {
                omitted_atoms.push(Omitted {
                    id: a.atom.id.clone(),
                    name: a.atom.name.clone(),
                    specificity: a.specificity,
                    tokens: a.tokens,
                });
            }
        }
        let mut i = 0;
        matched.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut mols: Vec<&str> = matched
            .iter()
            .filter_map(|a| a.atom.molecule_id.as_deref())
            .collect();
        mols.sort_unstable();
        mols.dedup();
        let mut omitted_mk = Vec::new();
        // Molecule frames first (name and id are cheap and needed to place atoms)...
        for m in &mols {
            if let Some(pos) = snap.molecule_pos.get(*m) {
                used += tokens_of(60 + snap.molecules[*pos].name.len());
            }
        }
        // ...then their knowledge, most specific molecules first.
        let mut by_spec: Vec<(usize, usize)> = mols
            .iter()
            .filter_map(|m| {
                let pos = *snap.molecule_pos.get(*m)?;
                let spec = matched
                    .iter()
                    .filter(|a| a.atom.molecule_id.as_deref() == Some(m))
                    .map(|a| a.specificity)
                    .max()
                    .unwrap_or(0);
                Some((pos, spec))
            })
            .collect();
        by_spec.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (pos, spec) in by_spec {
            let m = &snap.molecules[pos];
            let t = tokens_of(
                m.knowledge.len() + m.related.iter().map(|r| 80 + r.reason.len()).sum::<usize>(),
            );
            if used + t <= max {
                used += t;
            } else {
                dropped_knowledge.push(m.id.clone());
                omitted_mk.push(Omitted {
                    id: m.id.clone(),
                    name: m.name.clone(),
                    specificity: spec,
                    tokens: t,
                });
            }
        }
        budget = Some(Budget {
            max_tokens: max,
            estimated_tokens: used,
            omitted_atoms,
            omitted_molecule_knowledge: omitted_mk,
        });
    }

    // Group by molecule, molecules by name (snapshot order), atoms by name within.
    let mut by_molecule: HashMap<String, Vec<ContextAtom>> = HashMap::new();
    let mut orphans = Vec::new();
    for a in matched {
        match a.atom.molecule_id.clone() {
            Some(m) if snap.molecule_pos.contains_key(&m) => {
                by_molecule.entry(m).or_default().push(a)
            }
            _ => orphans.push(a),
        }
    }
    let mut molecules = Vec::new();
    for m in &snap.molecules {
        if let Some(atoms) = by_molecule.remove(&m.id) {
            let omitted = dropped_knowledge.contains(&m.id);
            let mut molecule = m.clone();
            if omitted {
                molecule.knowledge = String::new();
            }
            molecules.push(ContextMolecule {
                related: if omitted {
                    vec![]
                } else {
                    resolve(&m.related, |id| snap.molecule_name(id))
                },
                molecule,
                atoms,
                knowledge_omitted: omitted,
            });
        }
    }
    Ok(Context {
        paths,
        refused_paths: refused,
        molecules,
        orphan_atoms: orphans,
        unmatched_paths: unmatched,
        near_misses,
        budget,
        generation: snap.generation,
    })
}

/// Places a path an agent gave in the project's repository: `Some` relative path, or
/// `None` for a relative path that names no file inside a repository (`..`, empty);
/// an absolute path is made relative when it lies inside the repository (as written
/// or through the root's real path), else refused with the reason.
fn place(raw: &str, root: Option<&Path>) -> std::result::Result<Option<String>, String> {
    let t = raw.trim();
    let absolute = t.starts_with('/') || t.starts_with('\\') || t.as_bytes().get(1) == Some(&b':');
    if !absolute {
        return Ok(glob::normalize_path(t));
    }
    let Some(root) = root else {
        return Err(format!(
            "'{t}' is absolute and the project has no repository bound ({}): give paths relative to the repository root",
            Tool::InitProject
        ));
    };
    let p = Path::new(t);
    let real = root.canonicalize().ok();
    let rel = p
        .strip_prefix(root)
        .ok()
        .or_else(|| real.as_deref().and_then(|r| p.strip_prefix(r).ok()));
    match rel.and_then(|r| r.to_str()).and_then(glob::normalize_path) {
        Some(r) => Ok(Some(r)),
        None => Err(format!(
            "'{t}' is absolute and outside the project's repository ({}): give paths relative to its root",
            root.display()
        )),
    }
}

/// What `includeGraphContext` found for a task.
pub struct TaskContext {
    /// The paths read from its Context Files section(s).
    pub paths: Vec<String>,
    pub context: Option<Context>,
    /// Why there is no context, when there is none.
    pub note: Option<String>,
}

/// Reads the task's "Context Files" section(s) and runs `context` on their paths, in
/// one read transaction.
pub async fn for_task(app: &App, task: &Item, opts: &Options) -> Result<TaskContext> {
    let mut tx = app.store.snapshot().await?;
    let tc = for_task_in(app, &mut tx, task, opts).await?;
    tx.commit().await?;
    Ok(tc)
}

/// [`for_task`] inside the caller's read `c` (a snapshot).
pub async fn for_task_in(
    app: &App,
    c: &mut Conn,
    task: &Item,
    opts: &Options,
) -> Result<TaskContext> {
    let sections = section::list(c, &task.id, &[], &[]).await?;
    let files: Vec<_> = sections
        .iter()
        .filter(|s| s.title.trim().eq_ignore_ascii_case("context files"))
        .collect();
    if files.is_empty() {
        return Ok(TaskContext {
            paths: vec![],
            context: None,
            note: Some(format!(
                "the task has no 'Context Files' section: add one ({}) listing the paths it touches, one per line",
                Tool::ManageSections
            )),
        });
    }
    let mut paths: Vec<String> = Vec::new();
    for s in files {
        for p in context_paths(&s.content) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    paths.truncate(PATHS_MAX);
    let Some(project_id) = task.project_id.as_deref() else {
        return Ok(TaskContext {
            paths,
            context: None,
            note: Some(
                "the task belongs to no project, and the knowledge graph lives in projects".into(),
            ),
        });
    };
    let note = paths
        .is_empty()
        .then(|| "the Context Files section names no paths".to_string());
    let context = context_in(app, c, project_id, &paths, opts).await?;
    Ok(TaskContext {
        paths,
        context: Some(context),
        note,
    })
}

/// The hint `advance` answers with when a task reaches a terminal state other than
/// WILL_NOT_IMPLEMENT: which atoms its Context Files touch (with the versions an
/// update needs) and which paths no atom covers.
pub struct Hints {
    pub atoms: Vec<(String, String, i64)>,
    pub unmatched_paths: Vec<String>,
}

pub async fn hints(app: &App, task: &Item) -> Result<Option<Hints>> {
    if task.kind != ItemKind::Task || task.status != Status::Closed {
        return Ok(None);
    }
    let opts = Options {
        changelog_limit: 0,
        max_tokens: None,
    };
    let tc = for_task(app, task, &opts).await?;
    let mut h = Hints {
        atoms: vec![],
        unmatched_paths: vec![],
    };
    if let Some(c) = tc.context {
        for a in c
            .molecules
            .iter()
            .flat_map(|m| m.atoms.iter())
            .chain(c.orphan_atoms.iter())
        {
            h.atoms
                .push((a.atom.id.clone(), a.atom.name.clone(), a.atom.version));
        }
        h.unmatched_paths = c.unmatched_paths;
    }
    Ok(Some(h))
}
