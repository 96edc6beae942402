//! Validation of subjects, evidence references and diary entries.

use super::*;

const COMMON_SUBJECT_FIELDS: &[&str] = &["kind", "name", "aliases", "title", "summary", "tags"];

/// The kind-specific field names of a subject kind.
pub fn subject_fields(k: SubjectKind) -> &'static [&'static str] {
    use SubjectKind as K;
    match k {
        K::Org => &["domain", "units", "policiesIndex"],
        K::Project => &[
            "status",
            "startDate",
            "endDate",
            "org",
            "repoLinks",
            "docsLinks",
            "domain",
            "orchestratorProject",
        ],
        K::Person => &["roles", "org", "teams", "handles", "timezone"],
        K::Tool | K::Lib | K::Service | K::Model | K::Dataset => {
            &["ecosystem", "category", "repo", "homepage"]
        }
        K::Stack => &["description", "scope"],
        K::Template => &[
            "purpose",
            "location",
            "inputs",
            "outputs",
            "version",
            "maintainer",
        ],
    }
}

/// Validates a new subject's fields (`kind` and `name` required, `aliases` ≤ 50 of
/// ≤ 255, and the fields of its kind) and builds it, created at `now`.
pub fn subject(
    input: &[(String, Raw)],
    id: SubjectId,
    known: &Known<'_>,
    now: OffsetDateTime,
) -> Result<Subject, ValidationErrors> {
    let mut f = Fields::new(input, "a subject");
    let present = input
        .iter()
        .any(|(k, v)| loose_eq(k, "kind") && *v != Raw::Null);
    let kind = f.enumeration("kind", SubjectKind::parse);
    if !present {
        let m = format!("required: send one of {}", SubjectKind::WIRE.join(", "));
        f.err("kind", m);
    }
    if let Some(k) = kind {
        f.what = format!("a {k}");
    }
    let name = f.req_text("name", MAX_NAME, "its canonical name");
    let mut aliases: Vec<String> = Vec::new();
    for a in f.texts("aliases", MAX_TAGS, MAX_NAME) {
        if !aliases.contains(&a) && Some(&a) != name.as_ref() {
            aliases.push(a);
        }
    }
    let title = f.text("title", MAX_NAME);
    let summary = f.text("summary", MAX_SUMMARY);
    let tags = f.tags();
    let org_kinds = [SubjectKind::Org];
    let details = match kind {
        None => SubjectDetails::None,
        Some(SubjectKind::Org) => SubjectDetails::Org(OrgFields {
            domain: f.text("domain", MAX_NAME),
            units: f.texts("units", MAX_ITEMS, MAX_NAME),
            policies_index: f.text("policiesIndex", MAX_SUMMARY),
        }),
        Some(SubjectKind::Project) => {
            let start_date = f.time("startDate");
            let end_date = f.time("endDate");
            if let (Some(a), Some(b)) = (start_date, end_date) {
                if b < a {
                    f.err("endDate", "is before startDate: send a later date");
                }
            }
            let org = f
                .uuid("org")
                .and_then(|o| check_subject(&mut f, known, "org", o, &org_kinds, "org"));
            SubjectDetails::Project(ProjectFields {
                status: f.enumeration("status", ProjectStatus::parse),
                start_date,
                end_date,
                org,
                repo_links: f.texts("repoLinks", MAX_ITEMS, MAX_SUMMARY),
                docs_links: f.texts("docsLinks", MAX_ITEMS, MAX_SUMMARY),
                domain: f.text("domain", MAX_NAME),
                orchestrator_project: f.uuid("orchestratorProject"),
            })
        }
        Some(SubjectKind::Person) => {
            let org = f
                .uuid("org")
                .and_then(|o| check_subject(&mut f, known, "org", o, &org_kinds, "org"));
            SubjectDetails::Person(PersonFields {
                roles: f.texts("roles", MAX_ITEMS, MAX_NAME),
                org,
                teams: f.texts("teams", MAX_ITEMS, MAX_NAME),
                handles: f.texts("handles", MAX_ITEMS, MAX_NAME),
                timezone: f.text("timezone", MAX_NAME),
            })
        }
        Some(SubjectKind::Stack) => SubjectDetails::Stack(StackFields {
            description: f.text("description", MAX_SUMMARY),
            scope: f.enumeration("scope", StackScope::parse),
        }),
        Some(SubjectKind::Template) => {
            let maintainer = f.uuid("maintainer").and_then(|m| {
                check_subject(
                    &mut f,
                    known,
                    "maintainer",
                    m,
                    &[SubjectKind::Person, SubjectKind::Org],
                    "the maintainer",
                )
            });
            SubjectDetails::Template(TemplateFields {
                purpose: f.text("purpose", MAX_SUMMARY),
                location: f.text("location", MAX_SUMMARY),
                inputs: f.texts("inputs", MAX_ITEMS, MAX_SUMMARY),
                outputs: f.texts("outputs", MAX_ITEMS, MAX_SUMMARY),
                version: f.text("version", MAX_NAME),
                maintainer,
            })
        }
        Some(_) => SubjectDetails::Artifact(ArtifactFields {
            ecosystem: f.text("ecosystem", MAX_NAME),
            category: f.text("category", MAX_NAME),
            repo: f.text("repo", MAX_SUMMARY),
            homepage: f.text("homepage", MAX_SUMMARY),
        }),
    };
    let mut allowed: Vec<&str> = COMMON_SUBJECT_FIELDS.to_vec();
    match kind {
        Some(k) => allowed.extend_from_slice(subject_fields(k)),
        None => {
            for k in SubjectKind::ALL {
                for f in subject_fields(*k) {
                    if !allowed.contains(f) {
                        allowed.push(f);
                    }
                }
            }
        }
    }
    let errors = f.finish(&allowed);
    match (errors.is_empty(), kind, name) {
        (true, Some(kind), Some(name)) => Ok(Subject {
            id,
            kind,
            name,
            aliases,
            title,
            summary,
            tags,
            created_at: now,
            updated_at: now,
            merged_into: None,
            details,
        }),
        (_, _, _) => Err(ValidationErrors(errors)),
    }
}

/// Validates a new reference (`refType` required; `title` or `uri` required;
/// `retrievedAt` defaults to `now`).
pub fn reference(
    input: &[(String, Raw)],
    id: ReferenceId,
    now: OffsetDateTime,
) -> Result<Reference, ValidationErrors> {
    let mut f = Fields::new(input, "a reference");
    let ref_type = f.req_enum("refType", RefType::parse, RefType::WIRE);
    let title = f.text("title", MAX_NAME);
    let uri = f.text("uri", 2048);
    let title_given = input
        .iter()
        .any(|(k, v)| (loose_eq(k, "title") || loose_eq(k, "uri")) && *v != Raw::Null);
    if !title_given {
        f.err(
            "uri",
            "a reference needs a uri or a title: send where it is, or what it is called",
        );
    }
    let r = Reference {
        id,
        ref_type: ref_type.unwrap_or(RefType::Chat),
        title,
        uri,
        authors: f.texts("authors", MAX_ITEMS, MAX_NAME),
        published_at: f.time("publishedAt"),
        retrieved_at: f.time("retrievedAt").unwrap_or(now),
        snippet: f.text("snippet", MAX_SUMMARY),
        hash: f.text("hash", 128),
    };
    let errors = f.finish(&[
        "refType",
        "title",
        "uri",
        "authors",
        "publishedAt",
        "retrievedAt",
        "snippet",
        "hash",
    ]);
    if errors.is_empty() {
        Ok(r)
    } else {
        Err(ValidationErrors(errors))
    }
}

/// Validates a diary entry (`accomplishments`, `decisions`, `challenges`,
/// `learnings`: lists of texts, at least one item in all; `session` optional).
pub fn diary_entry(
    input: &[(String, Raw)],
    id: DiaryEntryId,
    now: OffsetDateTime,
) -> Result<DiaryEntry, ValidationErrors> {
    let mut f = Fields::new(input, "a diary entry");
    let e = DiaryEntry {
        id,
        recorded_at: now,
        session: f.text("session", MAX_NAME),
        accomplishments: f.texts("accomplishments", MAX_ITEMS, MAX_SUMMARY),
        decisions: f.texts("decisions", MAX_ITEMS, MAX_SUMMARY),
        challenges: f.texts("challenges", MAX_ITEMS, MAX_SUMMARY),
        learnings: f.texts("learnings", MAX_ITEMS, MAX_SUMMARY),
    };
    let empty = e.accomplishments.is_empty()
        && e.decisions.is_empty()
        && e.challenges.is_empty()
        && e.learnings.is_empty();
    if empty && f.errors.is_empty() {
        f.err(
            "learnings",
            "the entry is empty: send at least one accomplishment, decision, challenge or learning",
        );
    }
    let errors = f.finish(&[
        "session",
        "accomplishments",
        "decisions",
        "challenges",
        "learnings",
    ]);
    if errors.is_empty() {
        Ok(e)
    } else {
        Err(ValidationErrors(errors))
    }
}
