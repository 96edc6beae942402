//! Identity resolution: when two subjects of one kind are the same thing (`zod`,
//! `Zod`, `colinhacks/zod`, `https://github.com/colinhacks/zod`), and the plan that
//! merges them: which survives, which names it gains, which atoms and edges move.
//! Knows nothing of claim keys or statuses.
//!
//! Names are compared in a normal form: lower case; a URL's scheme, `www.` and a
//! code host (`github.com/`, `gitlab.com/`, `bitbucket.org/`) or package registry
//! path (`npmjs.com/package/`, `crates.io/crates/`, `pypi.org/project/`) removed;
//! a trailing `.git` or `/` removed; `owner/name` reduced to `name`; runs of `-`,
//! `_`, `.` and spaces folded to one `-` (as Python's package index does).
//!
//! Two decisions where the question was open:
//! - An npm scope stays part of the name: `@colinhacks/zod` is not folded to
//!   `zod`, because a scope is part of a package's identity (`@types/node` is not
//!   `node`). Such a name joins a subject only as an explicit alias.
//! - A web domain is not a name: `zod.dev` folds to `zod-dev`, which matches a
//!   subject only if given as an alias. Stripping the domain would make `next.js`
//!   `next` and merge unrelated things.
//!
//! Subjects of different kinds never merge (a Tool and a Lib named alike stay two).
//! The survivor is the oldest subject (earliest `created_at`, then lowest id), so the
//! choice is stable from one run to the next.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::change::{Action, ActionKind, Change};
use super::model::{
    Context, MemoryAtom, MemoryEdge, NodeRef, Subject, SubjectDetails, SubjectId, SubjectKind,
};

const HOSTS: &[&str] = &[
    "github.com/",
    "gitlab.com/",
    "bitbucket.org/",
    "codeberg.org/",
];
const REGISTRIES: &[&str] = &[
    "npmjs.com/package/",
    "crates.io/crates/",
    "pypi.org/project/",
    "pkg.go.dev/",
];

/// Folds runs of `-`, `_`, `.` and whitespace to one `-`, trimmed at both ends.
fn fold_separators(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut sep = false;
    for c in s.chars() {
        if matches!(c, '-' | '_' | '.') || c.is_whitespace() {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c);
        }
    }
    out
}

/// The normal form of a subject name (see the module comment).
pub fn normalise_name(name: &str) -> String {
    let mut s = name.trim().to_lowercase();
    for scheme in ["git+", "https://", "http://", "ssh://", "git://"] {
        if let Some(rest) = s.strip_prefix(scheme) {
            s = rest.to_string();
        }
    }
    if let Some(rest) = s.strip_prefix("git@") {
        // git@github.com:owner/name
        s = rest.replacen(':', "/", 1);
    }
    if let Some(rest) = s.strip_prefix("www.") {
        s = rest.to_string();
    }
    while s.ends_with('/') {
        s.pop();
    }
    if let Some(rest) = s.strip_suffix(".git") {
        s = rest.to_string();
    }
    let mut repo_url = false;
    for h in HOSTS {
        if let Some(rest) = s.strip_prefix(h) {
            s = rest.to_string();
            repo_url = true;
        }
    }
    let mut package_url = false;
    for r in REGISTRIES {
        if let Some(rest) = s.strip_prefix(r) {
            s = rest.to_string();
            package_url = true;
        }
    }
    let parts: Vec<&str> = s.split('/').filter(|p| !p.is_empty()).collect();
    let name = if s.starts_with('@') && parts.len() >= 2 {
        // An npm scoped package keeps its scope.
        let scope = parts.first().copied().unwrap_or("");
        let pkg = parts.get(1).copied().unwrap_or("");
        return format!(
            "@{}/{}",
            fold_separators(scope.trim_start_matches('@')),
            fold_separators(pkg)
        );
    } else if repo_url {
        // host/owner/name/...: the repository's name.
        parts.get(1).or(parts.first()).copied().unwrap_or("")
    } else if package_url {
        parts.first().copied().unwrap_or("")
    } else if parts.len() == 2 {
        parts.get(1).copied().unwrap_or("")
    } else {
        s.as_str()
    };
    fold_separators(name)
}

/// Every normal form a subject is known by: its name, its aliases, and for an
/// artifact its repository.
pub fn identity_names(s: &Subject) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = std::iter::once(&s.name)
        .chain(s.aliases.iter())
        .map(|n| normalise_name(n))
        .filter(|n| !n.is_empty())
        .collect();
    if let SubjectDetails::Artifact(a) = &s.details {
        if let Some(r) = &a.repo {
            let n = normalise_name(r);
            if !n.is_empty() {
                out.insert(n);
            }
        }
    }
    out
}

/// Follows `merged_into` links to the subject that stands for `id` now. A cycle (which
/// the merge plan never makes) stops at the lowest id on it.
pub fn canonical(id: SubjectId, merged: &HashMap<SubjectId, SubjectId>) -> SubjectId {
    let mut cur = id;
    let mut seen = Vec::new();
    while let Some(next) = merged.get(&cur) {
        if seen.contains(next) {
            return seen.iter().copied().min().unwrap_or(cur);
        }
        seen.push(cur);
        cur = *next;
    }
    cur
}

/// Finds the subject of `kind` a name refers to: one whose name or alias has the same
/// normal form, followed to its survivor if merged. Of several, the oldest.
pub fn resolve(subjects: &[Subject], kind: SubjectKind, name: &str) -> Option<SubjectId> {
    let n = normalise_name(name);
    if n.is_empty() {
        return None;
    }
    let merged: HashMap<SubjectId, SubjectId> = subjects
        .iter()
        .filter_map(|s| s.merged_into.map(|m| (s.id, m)))
        .collect();
    let found = subjects
        .iter()
        .filter(|s| s.kind == kind && identity_names(s).contains(&n))
        .min_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)))?;
    Some(canonical(found.id, &merged))
}

/// Union-find over subject indexes.
struct Sets(Vec<usize>);

impl Sets {
    fn find(&mut self, mut i: usize) -> usize {
        while let Some(&p) = self.0.get(i) {
            if p == i {
                break;
            }
            let gp = self.0.get(p).copied().unwrap_or(p);
            if let Some(slot) = self.0.get_mut(i) {
                *slot = gp;
            }
            i = p;
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            if let Some(slot) = self.0.get_mut(hi) {
                *slot = lo;
            }
        }
    }
}

/// Which subjects merge into which: the live (not yet merged) subjects of one kind
/// sharing a normal name, each group mapped to its oldest member. Subjects merged
/// before are mapped to their survivor as well.
pub fn survivors(subjects: &[Subject]) -> HashMap<SubjectId, SubjectId> {
    // Subjects in survivor order, so the first of each group is its survivor.
    let mut order: Vec<&Subject> = subjects
        .iter()
        .filter(|s| s.merged_into.is_none())
        .collect();
    order.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    let mut sets = Sets((0..order.len()).collect());
    let mut first_with: HashMap<(SubjectKind, String), usize> = HashMap::new();
    for (i, s) in order.iter().enumerate() {
        for n in identity_names(s) {
            match first_with.get(&(s.kind, n.clone())) {
                Some(&j) => sets.union(i, j),
                None => {
                    first_with.insert((s.kind, n), i);
                }
            }
        }
    }
    let mut map: HashMap<SubjectId, SubjectId> = subjects
        .iter()
        .filter_map(|s| s.merged_into.map(|m| (s.id, m)))
        .collect();
    for (i, s) in order.iter().enumerate() {
        let root = sets.find(i);
        if root != i {
            if let Some(r) = order.get(root) {
                map.insert(s.id, r.id);
            }
        }
    }
    // Resolve chains through earlier merges.
    let keys: Vec<SubjectId> = map.keys().copied().collect();
    let resolved: Vec<(SubjectId, SubjectId)> =
        keys.iter().map(|k| (*k, canonical(*k, &map))).collect();
    resolved.into_iter().collect()
}

fn canon_node(n: NodeRef, map: &HashMap<SubjectId, SubjectId>) -> NodeRef {
    match n {
        NodeRef::Subject(s) => NodeRef::Subject(map.get(&s).copied().unwrap_or(s)),
        other => other,
    }
}

/// The merge plan for duplicate subjects found among `subjects`: for each survivor,
/// one action merging the others into it (their names become its aliases), moving
/// every atom's ABOUT and IN_CONTEXT, every subject field and every edge that names a
/// merged subject. An edge that would then duplicate another, or join a subject to
/// itself, is dropped. Atoms and edges still naming a subject merged in an earlier
/// run are moved too.
pub fn merge_plan(subjects: &[Subject], atoms: &[MemoryAtom], edges: &[MemoryEdge]) -> Vec<Action> {
    plan_with(survivors(subjects), subjects, atoms, edges)
}

/// Why an explicit merge was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError {
    /// A subject is not among those given.
    Unknown(SubjectId),
    /// A subject cannot be merged into itself (or into one merged into it).
    Same(SubjectId),
    /// Subjects of different kinds are never one.
    Kinds(SubjectKind, SubjectKind),
    /// The subject was merged already.
    Merged(SubjectId, SubjectId),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Unknown(s) => write!(f, "no subject {s}"),
            MergeError::Same(s) => write!(f, "subject {s} cannot be merged into itself"),
            MergeError::Kinds(a, b) => write!(
                f,
                "a {a} and a {b} are never one subject: merge subjects of one kind"
            ),
            MergeError::Merged(s, into) => write!(
                f,
                "subject {s} was merged into {into} already: merge into {into}, or name another"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// The plan for an explicit merge of `from` into `into` (two subjects of one kind
/// whose names do not fold to one form, e.g. `zod.dev` and `zod`): the same changes
/// as an identity merge, `from`'s names becoming `into`'s aliases. `subjects` must
/// hold both (followed to their survivors), `atoms` and `edges` at least those that
/// name `from`.
pub fn merge_plan_for(
    from: SubjectId,
    into: SubjectId,
    subjects: &[Subject],
    atoms: &[MemoryAtom],
    edges: &[MemoryEdge],
) -> Result<Vec<Action>, MergeError> {
    let find = |id: SubjectId| {
        subjects
            .iter()
            .find(|s| s.id == id)
            .ok_or(MergeError::Unknown(id))
    };
    let (f, i) = (find(from)?, find(into)?);
    if let Some(m) = f.merged_into {
        return Err(MergeError::Merged(from, m));
    }
    if let Some(m) = i.merged_into {
        return Err(MergeError::Merged(into, m));
    }
    if from == into {
        return Err(MergeError::Same(from));
    }
    if f.kind != i.kind {
        return Err(MergeError::Kinds(f.kind, i.kind));
    }
    let mut map: HashMap<SubjectId, SubjectId> = subjects
        .iter()
        .filter_map(|s| s.merged_into.map(|m| (s.id, m)))
        .collect();
    map.insert(from, into);
    let keys: Vec<SubjectId> = map.keys().copied().collect();
    let map: HashMap<SubjectId, SubjectId> =
        keys.iter().map(|k| (*k, canonical(*k, &map))).collect();
    Ok(plan_with(map, subjects, atoms, edges))
}

/// The changes that carry out `map` (merged subject → survivor).
fn plan_with(
    map: HashMap<SubjectId, SubjectId>,
    subjects: &[Subject],
    atoms: &[MemoryAtom],
    edges: &[MemoryEdge],
) -> Vec<Action> {
    if map.is_empty() {
        return Vec::new();
    }
    let by_id: HashMap<SubjectId, &Subject> = subjects.iter().map(|s| (s.id, s)).collect();
    let mut per: BTreeMap<SubjectId, (Vec<Change>, Vec<String>)> = BTreeMap::new();

    // Subjects merged now, in id order.
    let mut merging: Vec<(&SubjectId, &SubjectId)> = map
        .iter()
        .filter(|(from, _)| by_id.get(from).is_some_and(|s| s.merged_into.is_none()))
        .collect();
    merging.sort();
    for (from, into) in &merging {
        let (Some(f), Some(i)) = (by_id.get(from), by_id.get(into)) else {
            continue;
        };
        let entry = per.entry(**into).or_default();
        let mut have: Vec<&String> = std::iter::once(&i.name).chain(i.aliases.iter()).collect();
        let mut aliases = Vec::new();
        for n in std::iter::once(&f.name).chain(f.aliases.iter()) {
            let already =
                have.contains(&n) || per_aliases(&entry.0).any(|a| a == n) || aliases.contains(n);
            if !already {
                aliases.push(n.clone());
            }
        }
        have.clear();
        entry.0.push(Change::MergeSubject {
            from: **from,
            into: **into,
            aliases,
        });
        entry.1.push(f.name.clone());
    }

    let moved = |s: SubjectId| map.get(&s).copied().filter(|t| *t != s);
    for s in subjects {
        let mut probe = s.clone();
        for (field, target) in probe.subject_refs_mut() {
            if let Some(to) = moved(*target) {
                per.entry(to)
                    .or_default()
                    .0
                    .push(Change::RepointSubjectField {
                        subject: s.id,
                        field,
                        from: *target,
                        to,
                    });
            }
        }
    }
    for a in atoms {
        if let Some(from) = a.about {
            if let Some(to) = moved(from) {
                per.entry(to).or_default().0.push(Change::MoveAbout {
                    atom: a.id,
                    from,
                    to,
                });
            }
        }
        if let Context::In(from) = a.context {
            if let Some(to) = moved(from) {
                per.entry(to).or_default().0.push(Change::MoveContext {
                    atom: a.id,
                    from,
                    to,
                });
            }
        }
    }
    let mut present: HashSet<MemoryEdge> = edges.iter().copied().collect();
    for e in edges {
        let to_edge = MemoryEdge::new(canon_node(e.from, &map), e.kind, canon_node(e.to, &map));
        if to_edge == *e {
            continue;
        }
        let survivor = match (to_edge.from, to_edge.to) {
            (NodeRef::Subject(s), _) if moved_end(e.from, &map) => s,
            (_, NodeRef::Subject(s)) => s,
            (NodeRef::Subject(s), _) => s,
            _ => continue,
        };
        present.remove(e);
        let change = if to_edge.from == to_edge.to || present.contains(&to_edge) {
            Change::DropEdge(*e)
        } else {
            present.insert(to_edge);
            Change::MoveEdge {
                from: *e,
                to: to_edge,
            }
        };
        per.entry(survivor).or_default().0.push(change);
    }

    per.into_iter()
        .filter(|(_, (changes, _))| !changes.is_empty())
        .map(|(into, (changes, names))| {
            let target = by_id
                .get(&into)
                .map_or_else(|| into.to_string(), |s| format!("{} `{}`", s.kind, s.name));
            let reason = if names.is_empty() {
                format!("rows still name subjects merged into {target} earlier")
            } else {
                format!(
                    "{} and {target} are one subject (same normal name)",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Action {
                kind: ActionKind::MergeSubjects,
                changes,
                reason,
            }
        })
        .collect()
}

fn moved_end(n: NodeRef, map: &HashMap<SubjectId, SubjectId>) -> bool {
    matches!(n, NodeRef::Subject(s) if map.contains_key(&s))
}

fn per_aliases(changes: &[Change]) -> impl Iterator<Item = &String> {
    changes.iter().flat_map(|c| match c {
        Change::MergeSubject { aliases, .. } => aliases.iter(),
        _ => [].iter(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::model::{ArtifactFields, AtomId, EdgeKind};
    use super::super::wire::at;
    use super::*;

    #[test]
    fn names_fold_to_one_form() {
        for n in [
            "zod",
            "Zod",
            " ZOD ",
            "colinhacks/zod",
            "https://github.com/colinhacks/zod",
            "https://github.com/colinhacks/zod.git",
            "git@github.com:colinhacks/zod.git",
            "github.com/colinhacks/zod/tree/main",
            "https://www.npmjs.com/package/zod",
        ] {
            assert_eq!(normalise_name(n), "zod", "{n}");
        }
        assert_eq!(normalise_name("@colinhacks/zod"), "@colinhacks/zod");
        assert_eq!(normalise_name("@types/node"), "@types/node");
        assert_eq!(normalise_name("zod.dev"), "zod-dev");
        assert_eq!(
            normalise_name("scikit_learn"),
            normalise_name("Scikit-Learn")
        );
        assert_eq!(normalise_name("Next.js"), "next-js");
        assert_eq!(normalise_name("a/b/c"), "a/b/c");
    }

    fn subject(
        id: u128,
        kind: SubjectKind,
        name: &str,
        aliases: &[&str],
        created: &str,
    ) -> Subject {
        Subject {
            id: SubjectId(id),
            kind,
            name: name.into(),
            aliases: aliases.iter().map(|s| s.to_string()).collect(),
            title: None,
            summary: None,
            tags: vec![],
            created_at: at(created),
            updated_at: at(created),
            merged_into: None,
            details: SubjectDetails::Artifact(ArtifactFields::default()),
        }
    }

    #[test]
    fn same_kind_subjects_with_one_normal_name_merge_into_the_oldest() {
        let subjects = vec![
            subject(3, SubjectKind::Lib, "colinhacks/zod", &[], "2025-03-01"),
            subject(
                1,
                SubjectKind::Lib,
                "Zod",
                &["@colinhacks/zod"],
                "2025-01-01",
            ),
            subject(2, SubjectKind::Lib, "zod", &["zod.dev"], "2025-02-01"),
            subject(4, SubjectKind::Tool, "zod", &[], "2024-01-01"),
            subject(5, SubjectKind::Lib, "yup", &[], "2024-01-01"),
        ];
        let m = survivors(&subjects);
        assert_eq!(m.get(&SubjectId(2)), Some(&SubjectId(1)));
        assert_eq!(m.get(&SubjectId(3)), Some(&SubjectId(1)));
        assert_eq!(m.len(), 2);
        assert_eq!(
            resolve(&subjects, SubjectKind::Lib, "ZOD"),
            Some(SubjectId(1))
        );
        assert_eq!(
            resolve(&subjects, SubjectKind::Lib, "@colinhacks/zod"),
            Some(SubjectId(1))
        );
        assert_eq!(
            resolve(&subjects, SubjectKind::Tool, "zod"),
            Some(SubjectId(4))
        );
        assert_eq!(resolve(&subjects, SubjectKind::Lib, "joi"), None);
    }

    #[test]
    fn a_repository_field_identifies_an_artifact() {
        let mut a = subject(1, SubjectKind::Lib, "Zod", &[], "2025-01-01");
        let mut b = subject(2, SubjectKind::Lib, "zod-validation", &[], "2025-02-01");
        b.details = SubjectDetails::Artifact(ArtifactFields {
            repo: Some("https://github.com/colinhacks/zod".into()),
            ..Default::default()
        });
        a.aliases.clear();
        let m = survivors(&[a, b]);
        assert_eq!(m.get(&SubjectId(2)), Some(&SubjectId(1)));
    }

    #[test]
    fn the_merge_plan_moves_every_about_context_and_uses_edge() {
        let subjects = vec![
            subject(1, SubjectKind::Lib, "Zod", &[], "2025-01-01"),
            subject(
                2,
                SubjectKind::Lib,
                "colinhacks/zod",
                &["zod.dev"],
                "2025-02-01",
            ),
            subject(10, SubjectKind::Project, "A", &[], "2025-01-01"),
        ];
        let mut atoms = Vec::new();
        for (id, about) in [(100u128, 1u128), (101, 2), (102, 2)] {
            atoms.push(MemoryAtom {
                about: Some(SubjectId(about)),
                ..super::super::model::sample_atom(AtomId(id))
            });
        }
        let uses = |p: u128, l: u128| {
            MemoryEdge::new(
                NodeRef::Subject(SubjectId(p)),
                EdgeKind::Uses,
                NodeRef::Subject(SubjectId(l)),
            )
        };
        let edges = vec![uses(10, 1), uses(10, 2), uses(2, 1)];
        let plan = merge_plan(&subjects, &atoms, &edges);
        assert_eq!(plan.len(), 1);
        let changes = &plan[0].changes;
        assert_eq!(
            changes[0],
            Change::MergeSubject {
                from: SubjectId(2),
                into: SubjectId(1),
                aliases: vec!["colinhacks/zod".into(), "zod.dev".into()]
            }
        );
        assert!(changes.contains(&Change::MoveAbout {
            atom: AtomId(101),
            from: SubjectId(2),
            to: SubjectId(1)
        }));
        assert!(changes.contains(&Change::MoveAbout {
            atom: AtomId(102),
            from: SubjectId(2),
            to: SubjectId(1)
        }));
        assert!(!changes.iter().any(|c| matches!(
            c,
            Change::MoveAbout {
                atom: AtomId(100),
                ..
            }
        )));
        // Project A USES zod twice after the merge: one is dropped; zod USES zod is dropped.
        assert!(changes.contains(&Change::DropEdge(uses(10, 2))));
        assert!(changes.contains(&Change::DropEdge(uses(2, 1))));
        assert!(
            plan[0].reason.contains("`colinhacks/zod`"),
            "{}",
            plan[0].reason
        );
    }
}
