//! The `ontology` toolset (docs/ontology.md): discover, read,
//! query and traverse a project's synced ontology; propose new classes and
//! amendments, reviewed as git branches; validate hypothetical axioms; and
//! `manage_ontology` for the repository itself (attach, sync, status, import and
//! export OFN, proposals, push). Parameters are parsed and bounded here; answers are
//! built by hand in `view`.

pub mod view;

use serde_json::{json, Map, Value};

use crate::domain::ontology::records::ProposalState;
use crate::domain::ontology_query::TraverseDirection;
use crate::error::{Error, Result};
use crate::mcp::args::{Args, NAME_MAX, QUERY_MAX, SUMMARY_MAX, TEXT_MAX};
use crate::mcp::budget;
use crate::mcp::envelope::{self, Reply};
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::ontology::axioms::{self, AxiomInput};
use crate::service::ontology::propose::{self, AgentContext, Amendment, NoteProposal};
use crate::service::ontology::{interop, read, sync};
use crate::service::App;

const PROJECT: P = P("projectId", Ty::Id, "");
const AGENT: P = P(
    "agentContext",
    Ty::Object,
    "{agentType, taskDescription, agentId?, sessionId?, confidence}",
);
const DIRECTIONS: &[&str] = &["outgoing", "incoming", "both"];
const PROPOSE_OPS: &[&str] = &["create", "amend"];
const MANAGE_OPS: &[&str] = &[
    "attach",
    "sync",
    "status",
    "import",
    "export",
    "proposals",
    "push",
];

pub const DISCOVER: ToolDef = ToolDef {
    name: "ontology_discover",
    title: "Discover classes",
    toolset: "ontology",
    description: "Find classes before naming a concept: by terms (else meaning), expanded along taxonomy, relationships.",
    params: &[
        PROJECT,
        P("query", Ty::Str, ""),
        P("limit", Ty::Int, "Max 200"),
        P("domain", Ty::Str, "Only this one (ai, bc, mv)"),
    ],
    required: &["projectId", "query"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const READ: ToolDef = ToolDef {
    name: "ontology_read",
    title: "Read ontology",
    toolset: "ontology",
    description:
        "A class, property or individual (iri: IRI, term id or term), inferred axioms and why; with depth, relationshipTypes or direction, its subgraph.",
    params: &[
        PROJECT,
        P("iri", Ty::Str, ""),
        P("depth", Ty::Int, "Default 2, max 5"),
        P("relationshipTypes", Ty::List, "e.g. HAS_PART"),
        P("direction", Ty::Enum(DIRECTIONS), "Default both"),
    ],
    required: &["projectId", "iri"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const QUERY: ToolDef = ToolDef {
    name: "ontology_query",
    title: "Query ontology",
    toolset: "ontology",
    description: "Read-only Cypher (MATCH, WHERE, WITH, RETURN, aggregates, ORDER BY, LIMIT, *1..3) over :OwlClass nodes labelled by superclasses, SUBCLASS_OF, INSTANCE_OF, HAS_PART…",
    params: &[PROJECT, P("cypher", Ty::Str, "")],
    required: &["projectId", "cypher"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const PROPOSE: ToolDef = ToolDef {
    name: "ontology_propose",
    title: "Propose class",
    toolset: "ontology",
    description: "After discover, propose a class (create) or page change (amend: iri) as a branch; contradictions and low quality are refused, saying why.",
    params: &[
        PROJECT,
        P("operation", Ty::Enum(PROPOSE_OPS), ""),
        AGENT,
        P("preferredTerm", Ty::Str, ""),
        P("definition", Ty::Str, ""),
        P("domain", Ty::Str, ""),
        P("owlClass", Ty::Str, ""),
        P("physicality", Ty::Str, ""),
        P("role", Ty::Str, ""),
        P("isSubclassOf", Ty::List, ""),
        P("relationships", Ty::Object, "{has-part|requires|enables|bridges-to|relates-to|disjointWith: [IRIs]}"),
        P("axioms", Ty::Objects(&[]), "As ontology_validate's; subject defaults to this entity"),
        P("altTerms", Ty::List, ""),
        P("iri", Ty::Str, ""),
        P("addRelationships", Ty::Object, ""),
        P("removeRelationships", Ty::Object, ""),
        P("qualityScore", Ty::Num, ""),
        P("customFields", Ty::Object, "{key: value}; \"\" removes"),
        P("includePage", Ty::Bool, "Answer the page too"),
    ],
    required: &["projectId", "operation", "agentContext"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &[],
};

pub const VALIDATE: ToolDef = ToolDef {
    name: "ontology_validate",
    title: "Validate axioms",
    toolset: "ontology",
    description: "What hypothetical axioms would do, changing nothing.",
    params: &[
        PROJECT,
        P(
            "axioms",
            Ty::Objects(&[]),
            "[{axiomType: SubClassOf|EquivalentClasses|DisjointClasses|ClassAssertion|has-part|…, \
             subject, object, property?}]",
        ),
    ],
    required: &["projectId", "axioms"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

/// What `ontology_validate` takes, in its refusals (the schema stays short).
const AXIOMS_ACCEPTED: &str = "an axiom is {axiomType, subject, object}: SubClassOf, EquivalentClasses, DisjointClasses \
    (class expressions), SubObjectPropertyOf (subject a property or a chain `p o q`), ObjectPropertyDomain, \
    ObjectPropertyRange, ClassAssertion (subject an individual), a relationship key (has-part, requires, enables, \
    bridges-to, relates-to; subject a class or an individual); {axiomType, subject} for TransitiveObjectProperty, \
    ReflexiveObjectProperty; {axiomType: ObjectPropertyAssertion, subject, property, object}";

pub const MANAGE: ToolDef = ToolDef {
    name: "manage_ontology",
    title: "Manage ontology",
    toolset: "ontology",
    description: "The ontology's git repository: attach, sync, status, export (OFN), import (OFN, as a proposal), proposals, push.",
    params: &[
        PROJECT,
        P("operation", Ty::Enum(MANAGE_OPS), ""),
        P("repoPath", Ty::Str, "Absolute"),
        P("pagesDir", Ty::Str, ""),
        P("baseBranch", Ty::Str, ""),
        P("githubOwner", Ty::Str, ""),
        P("githubName", Ty::Str, ""),
        P("version", Ty::Int, ""),
        P("ofn", Ty::Doc, ""),
        P("path", Ty::Str, "OFN file in the repository"),
        P("inline", Ty::Bool, "export: the document too"),
        P("maxTokens", Ty::Int, ""),
        P("agentContext", Ty::Object, ""),
        P("state", Ty::Enum(ProposalState::NAMES), ""),
        P("proposalId", Ty::Id, ""),
        P("limit", Ty::Int, "Default 50"),
        P("offset", Ty::Int, ""),
    ],
    required: &["projectId", "operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &["status", "proposals"],
};

pub const TOOLS: &[&ToolDef] = &[&DISCOVER, &READ, &QUERY, &PROPOSE, &VALIDATE, &MANAGE];

/// Runs one tool of this toolset; `None` when the name is not one of its tools.
pub async fn call(app: &App, name: &str, a: Args) -> Option<Result<Reply>> {
    Some(match name {
        "ontology_discover" => discover(app, a).await,
        // One entity, or the subgraph around it: one tool reads the ontology from a
        // class outwards.
        "ontology_read"
            if ["depth", "relationshipTypes", "direction"]
                .iter()
                .any(|k| a.has(k)) =>
        {
            traverse(app, a).await
        }
        "ontology_read" => read_note(app, a).await,
        "ontology_query" => query(app, a).await,
        "ontology_propose" => propose_tool(app, a).await,
        "ontology_validate" => validate(app, a).await,
        "manage_ontology" => manage(app, a).await,
        _ => return None,
    })
}

/// A required, non-empty text of at most `max` bytes.
fn required(a: &Args, k: &str, max: usize) -> Result<String> {
    match a.str(k, max)? {
        Some(s) if !s.is_empty() => Ok(s),
        Some(_) => Err(Error::validation(k, "must not be empty")),
        None => Err(Error::validation(k, "is required")),
    }
}

/// A name-sized text (≤ 255 characters).
fn name(a: &Args, k: &str) -> Result<Option<String>> {
    a.name(k)
}

/// A list of names: at most 50, each ≤ 255 characters.
fn names(a: &Args, k: &str) -> Result<Vec<String>> {
    let v = a.list(k)?.unwrap_or_default();
    check_names(k, &v)?;
    Ok(v)
}

fn check_names(k: &str, v: &[String]) -> Result<()> {
    if v.len() > 50 {
        return Err(Error::validation(
            k,
            format!("{} given, at most 50 allowed", v.len()),
        ));
    }
    if let Some(x) = v.iter().find(|x| x.chars().count() > NAME_MAX) {
        return Err(Error::validation(
            k,
            format!(
                "'{}…' is longer than {NAME_MAX} characters",
                x.chars().take(40).collect::<String>()
            ),
        ));
    }
    Ok(())
}

/// `{key: [names] | name}` as (key, names).
fn name_map(a: &Args, k: &str) -> Result<Vec<(String, Vec<String>)>> {
    let Some(m) = a.object(k)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, v) in m {
        let list = match v {
            Value::String(s) => vec![s.trim().to_string()],
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map(|s| s.trim().to_string()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Error::validation(k, format!("{key}: expected a list of strings"))
                })?,
            _ => {
                return Err(Error::validation(
                    k,
                    format!("{key}: expected a string or a list of strings"),
                ))
            }
        };
        let list: Vec<String> = list.into_iter().filter(|s| !s.is_empty()).collect();
        check_names(k, &list)?;
        out.push((key, list));
    }
    Ok(out)
}

fn agent(a: &Args) -> Result<AgentContext> {
    let m = a.object("agentContext")?.ok_or_else(|| {
        Error::validation("agentContext", "is required: {agentType, taskDescription}")
    })?;
    let text = |k: &str, max: usize| -> Result<Option<String>> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.len() > max => Err(Error::validation(
                format!("agentContext.{k}"),
                format!("{} bytes given, at most {max} allowed", s.len()),
            )),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
            Some(_) => Err(Error::validation(
                format!("agentContext.{k}"),
                "expected a string",
            )),
        }
    };
    for k in m.keys() {
        if ![
            "agentId",
            "agentType",
            "taskDescription",
            "sessionId",
            "confidence",
        ]
        .contains(&k.as_str())
        {
            return Err(Error::validation(
                format!("agentContext.{k}"),
                "unknown field; agentContext takes agentId, agentType, taskDescription, sessionId, confidence",
            ));
        }
    }
    let agent_type = text("agentType", NAME_MAX)?
        .ok_or_else(|| Error::validation("agentContext.agentType", "is required"))?;
    let task_description = text("taskDescription", SUMMARY_MAX)?
        .ok_or_else(|| Error::validation("agentContext.taskDescription", "is required"))?;
    let confidence = match m.get("confidence") {
        None | Some(Value::Null) => 0.5,
        Some(v) => match v.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => x,
            _ => {
                return Err(Error::validation(
                    "agentContext.confidence",
                    "must be a number from 0 to 1",
                ))
            }
        },
    };
    Ok(AgentContext {
        agent_id: text("agentId", NAME_MAX)?.unwrap_or_else(|| agent_type.clone()),
        agent_type,
        task_description,
        session_id: text("sessionId", NAME_MAX)?,
        confidence,
    })
}

async fn discover(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let q = required(&a, "query", QUERY_MAX)?;
    let limit = a
        .int("limit", 1, 200)?
        .map(|n| n as usize)
        .unwrap_or(app.config.ontology.discovery_limit);
    let domain = name(&a, "domain")?;
    let d = read::discover(app, &pid, &q, limit, domain).await?;
    let results: Vec<Value> = d
        .found
        .iter()
        .map(|f| view::found(&d.served.index, f))
        .collect();
    Ok(Reply::new(
        format!(
            "{} class(es) for '{}'",
            results.len(),
            crate::domain::container::clip(&q, 60)
        ),
        json!({ "results": results, "count": results.len(), "semantic": d.semantic }),
    ))
}

async fn read_note(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let iri = name(&a, "iri")?.ok_or_else(|| Error::validation("iri", "is required"))?;
    let n = read::read(app, &pid, &iri).await?;
    Ok(Reply::new(
        format!("{} ({})", n.iri, n.served.index.term(&n.iri)),
        view::note(&n),
    ))
}

async fn query(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let cypher = required(&a, "cypher", QUERY_MAX)?;
    let ans = read::query(app, &pid, &cypher).await?;
    let rows = ans.outcome.rows.len();
    let msg = if ans.outcome.repairs.is_empty() {
        format!("{rows} row(s)")
    } else {
        format!(
            "{rows} row(s) after {} repair(s)",
            ans.outcome.repairs.len()
        )
    };
    Ok(Reply::new(msg, view::answer(&ans)))
}

async fn traverse(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let start = name(&a, "iri")?.ok_or_else(|| Error::validation("iri", "is required"))?;
    let depth = a.int("depth", 0, 64)?.unwrap_or(2) as usize;
    let types = a.list("relationshipTypes")?;
    if let Some(t) = &types {
        check_names("relationshipTypes", t)?;
    }
    let direction = match a.choice("direction", DIRECTIONS)?.unwrap_or("both") {
        "outgoing" => TraverseDirection::Outgoing,
        "incoming" => TraverseDirection::Incoming,
        _ => TraverseDirection::Both,
    };
    let t = read::traverse(app, &pid, &start, depth, types, direction).await?;
    Ok(Reply::new(
        format!(
            "{} node(s) within {depth} hop(s) of {}",
            t.subgraph.nodes.len(),
            t.start
        ),
        view::traversal(&t),
    ))
}

async fn propose_tool(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let op = a.req_choice("operation", PROPOSE_OPS)?;
    let ctx = agent(&a)?;
    let p = match op {
        "create" => {
            a.forbid(
                &[
                    "iri",
                    "addRelationships",
                    "removeRelationships",
                    "qualityScore",
                    "customFields",
                ],
                "to create (they amend)",
            )?;
            let proposal = NoteProposal {
                preferred_term: name(&a, "preferredTerm")?
                    .ok_or_else(|| Error::validation("preferredTerm", "is required to create"))?,
                definition: required(&a, "definition", TEXT_MAX)?,
                owl_class: name(&a, "owlClass")?,
                physicality: name(&a, "physicality")?.unwrap_or_default(),
                role: name(&a, "role")?.unwrap_or_default(),
                domain: name(&a, "domain")?
                    .ok_or_else(|| Error::validation("domain", "is required to create"))?,
                is_subclass_of: names(&a, "isSubclassOf")?,
                relationships: name_map(&a, "relationships")?,
                alt_terms: names(&a, "altTerms")?,
                axioms: proposed_axioms(&a)?,
            };
            propose::create(app, &pid, proposal, ctx).await?
        }
        _ => {
            a.forbid(
                &[
                    "preferredTerm",
                    "domain",
                    "owlClass",
                    "physicality",
                    "role",
                    "isSubclassOf",
                    "relationships",
                ],
                "to amend (they create)",
            )?;
            let target =
                name(&a, "iri")?.ok_or_else(|| Error::validation("iri", "is required to amend"))?;
            let custom = match a.object("customFields")? {
                None => Vec::new(),
                Some(m) => m
                    .into_iter()
                    .map(|(k, v)| match v {
                        Value::String(s) if s.len() <= TEXT_MAX => Ok((k, s)),
                        _ => Err(Error::validation(
                            "customFields",
                            format!("{k}: expected a string of at most {TEXT_MAX} bytes"),
                        )),
                    })
                    .collect::<Result<Vec<_>>>()?,
            };
            let amendment = Amendment {
                add_relationships: name_map(&a, "addRelationships")?,
                remove_relationships: name_map(&a, "removeRelationships")?,
                definition: match a.str("definition", TEXT_MAX)? {
                    Some(d) if d.is_empty() => {
                        return Err(Error::validation("definition", "must not be empty"))
                    }
                    d => d,
                },
                quality_score: a.num("qualityScore", 0.0, 1.0)?.map(|x| x as f32),
                add_alt_terms: names(&a, "altTerms")?,
                custom_fields: custom,
                add_axioms: proposed_axioms(&a)?,
            };
            propose::amend(app, &pid, &target, amendment, ctx).await?
        }
    };
    let msg = format!(
        "proposal {} {} on branch {}{}",
        p.proposal.id,
        p.proposal.state.as_str(),
        p.proposal.branch,
        pull_request(&p.proposal)
    );
    Ok(Reply::new(
        msg,
        view::proposed(&p, a.bool("includePage")?.unwrap_or(false)),
    ))
}

/// The `axioms` parameter in the one shape `ontology_validate` and
/// `ontology_propose` take ([`AXIOMS_ACCEPTED`]); a proposal's may leave out the
/// subject (its own entity).
fn axiom_inputs(raw: &[Map<String, Value>], subject_required: bool) -> Result<Vec<AxiomInput>> {
    let mut input = Vec::new();
    for (i, m) in raw.iter().enumerate() {
        let get = |k: &str| -> Result<Option<String>> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= QUERY_MAX => {
                    Ok(Some(s.trim().to_string()))
                }
                Some(Value::String(s)) if s.len() > QUERY_MAX => Err(Error::validation(
                    format!("axioms[{i}].{k}"),
                    format!("at most {QUERY_MAX} bytes"),
                )),
                _ => Err(Error::validation(
                    format!("axioms[{i}].{k}"),
                    "must be a non-empty string",
                )),
            }
        };
        if let Some(k) = m
            .keys()
            .find(|k| !["axiomType", "subject", "object", "property"].contains(&k.as_str()))
        {
            return Err(Error::validation(
                format!("axioms[{i}].{k}"),
                format!("unknown field; {AXIOMS_ACCEPTED}"),
            ));
        }
        let t = get("axiomType")?.unwrap_or_default();
        let known = axioms::AXIOM_TYPES
            .iter()
            .find(|(n, ..)| n.eq_ignore_ascii_case(&t))
            .map(|(n, ..)| *n);
        let shape = match known {
            Some("TransitiveObjectProperty" | "ReflexiveObjectProperty") => "s",
            Some("ObjectPropertyAssertion") => "spo",
            Some(_) => "so",
            None if propose::rel_key(&t, false).is_some() => "so",
            None => {
                return Err(Error::validation(
                    format!("axioms[{i}].axiomType"),
                    format!("'{t}' is not accepted; {AXIOMS_ACCEPTED}"),
                ))
            }
        };
        let (subject, object, property) = (get("subject")?, get("object")?, get("property")?);
        for (k, given, wanted) in [
            ("subject", subject.is_some(), true),
            ("object", object.is_some(), shape.contains('o')),
            ("property", property.is_some(), shape.contains('p')),
        ] {
            if given != wanted && (k != "subject" || subject_required) {
                let what = if wanted {
                    "is required"
                } else {
                    "is not taken"
                };
                return Err(Error::validation(
                    format!("axioms[{i}].{k}"),
                    format!("{what} by {t}; {AXIOMS_ACCEPTED}"),
                ));
            }
        }
        input.push(AxiomInput {
            axiom_type: t,
            subject: subject.unwrap_or_default(),
            object,
            property,
        });
    }
    Ok(input)
}

/// A proposal's `axioms`, none when absent.
fn proposed_axioms(a: &Args) -> Result<Vec<AxiomInput>> {
    axiom_inputs(&a.objects("axioms", 50)?.unwrap_or_default(), false)
}

async fn validate(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let raw = a.objects("axioms", 50)?.unwrap_or_default();
    if raw.is_empty() {
        return Err(Error::validation(
            "axioms",
            "give at least one {axiomType, subject, object}",
        ));
    }
    let input = axiom_inputs(&raw, true)?;
    let v = axioms::validate(app, &pid, input).await?;
    let c = &v.checked;
    let msg = match &c.clash {
        Some(_) => "the axioms break the ontology".to_string(),
        None => format!("consistent; {} new subsumption(s)", c.gained.len()),
    };
    Ok(Reply::new(msg, view::validated(&v)))
}

async fn manage(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let op = a.req_choice("operation", MANAGE_OPS)?;
    let only = |allowed: &[&str]| -> Result<()> {
        let all = [
            "repoPath",
            "pagesDir",
            "baseBranch",
            "githubOwner",
            "githubName",
            "version",
            "ofn",
            "path",
            "agentContext",
            "state",
            "proposalId",
            "limit",
            "offset",
            "inline",
            "maxTokens",
        ];
        let not: Vec<&str> = all
            .iter()
            .copied()
            .filter(|k| !allowed.contains(k))
            .collect();
        a.forbid(&not, &format!("to {op}"))
    };
    match op {
        "attach" => {
            only(&[
                "repoPath",
                "pagesDir",
                "baseBranch",
                "githubOwner",
                "githubName",
                "version",
            ])?;
            let at = sync::attach(
                app,
                sync::Attach {
                    project_id: pid,
                    repo_path: required(&a, "repoPath", 4096)?,
                    pages_dir: a.str("pagesDir", 4096)?,
                    base_branch: name(&a, "baseBranch")?,
                    github_owner: name(&a, "githubOwner")?,
                    github_name: name(&a, "githubName")?,
                    version: a.version()?,
                },
            )
            .await?;
            let verb = if at.created { "attached" } else { "changed" };
            Ok(Reply::new(
                format!(
                    "ontology repository {} {verb}; sync it next",
                    at.repo.repo_path
                ),
                view::attached(&at),
            ))
        }
        "sync" => {
            only(&[])?;
            let r = sync::sync(app, &pid).await?;
            let msg = format!(
                "synced {}: {} page(s) added, {} changed, {} removed; {} problem(s)",
                &r.commit[..r.commit.len().min(12)],
                r.pages.added,
                r.pages.changed,
                r.pages.removed,
                r.problems.len()
            );
            Ok(Reply::new(msg, view::synced(&r)))
        }
        "status" => {
            only(&[])?;
            let s = sync::status(app, &pid).await?;
            Ok(Reply::new(
                format!("ontology of project {pid}"),
                view::status(&s),
            ))
        }
        "export" => {
            only(&["path", "inline", "maxTokens"])?;
            let to = a.str("path", 4096)?.map(|p| (p, "path"));
            let e = interop::export(app, &pid, to).await?;
            let max = a.int("maxTokens", 1, 10_000_000)?.unwrap_or(4000) as usize;
            let msg = format!(
                "{} classes, {} properties, {} individuals, {} axioms written to {} ({} bytes)",
                e.classes, e.properties, e.individuals, e.axioms, e.path, e.bytes
            );
            let mut data = json!({ "path": e.path, "bytes": e.bytes, "tokens": budget::tokens(e.ofn.chars().count()), "classes": e.classes, "properties": e.properties, "individuals": e.individuals, "axioms": e.axioms });
            if a.bool("inline")?.unwrap_or(false) {
                let mut with = data.clone();
                with["ofn"] = json!(e.ofn);
                let size =
                    budget::tokens_of(&envelope::success(Reply::new(msg.clone(), with.clone())));
                if size <= max {
                    data = with;
                } else {
                    data["inline"] = json!(format!("left out: {size} tokens with the document, over maxTokens {max}; read the file"));
                }
            }
            Ok(Reply::new(msg, data))
        }
        "import" => {
            only(&["ofn", "path", "agentContext"])?;
            // One bound for the document, whichever parameter carries it.
            let max = app.config.ontology.max_document;
            let (text, file) = match (a.raw_str("ofn", usize::MAX)?, a.str("path", 4096)?) {
                (Some(t), None) if t.len() as u64 > max => {
                    return Err(Error::validation(
                        "ofn",
                        format!(
                            "{} bytes given, at most {max} allowed ({})",
                            t.len(),
                            DOCUMENT_BOUND
                        ),
                    ))
                }
                (Some(t), None) => (t, "ofn".to_string()),
                (None, Some(p)) => {
                    let rel = crate::mcp::code::repo_path("path", &p)?;
                    let repo = crate::service::ontology::repo(app, &pid).await?;
                    let r = rel.clone();
                    let text = tokio::task::spawn_blocking(move || {
                        read_repo_file(&repo.repo_path, &r, max)
                    })
                    .await
                    .map_err(|e| Error::Internal(format!("reading {rel}: {e}")))??;
                    (text, rel)
                }
                (Some(_), Some(_)) => {
                    return Err(Error::validation("path", "give ofn or path, not both"))
                }
                (None, None) => {
                    return Err(Error::validation(
                        "ofn",
                        "is required to import (or give path)",
                    ))
                }
            };
            let ctx = if a.has("agentContext") {
                agent(&a)?
            } else {
                AgentContext {
                    agent_id: "import".into(),
                    agent_type: "import".into(),
                    task_description: format!("Import {file}"),
                    session_id: None,
                    confidence: 1.0,
                }
            };
            let parameter = if a.has("path") { "path" } else { "ofn" };
            let im = interop::import(app, &pid, text, (&file, parameter), ctx).await?;
            let data = view::imported(&im);
            Ok(Reply::new(
                format!(
                    "{file} proposed as {} new and {} updated page(s) on branch {}; {} construct(s) skipped",
                    im.new_pages,
                    im.updated_pages,
                    im.proposed.proposal.branch,
                    im.skipped.len()
                ),
                data,
            ))
        }
        "proposals" => {
            only(&["state", "limit", "offset"])?;
            let states: Vec<ProposalState> = a
                .choice("state", ProposalState::NAMES)?
                .and_then(ProposalState::parse)
                .into_iter()
                .collect();
            let (limit, offset) = a.page(50)?;
            let (rows, total) =
                crate::service::ontology::sync::proposals(app, &pid, &states, limit, offset)
                    .await?;
            let list: Vec<Value> = rows.iter().map(view::proposal).collect();
            Ok(Reply::new(
                format!("{} of {total} proposal(s)", list.len()),
                json!({ "proposals": list, "total": total, "limit": limit, "offset": offset }),
            ))
        }
        _ => {
            only(&["proposalId"])?;
            let id = a.req_id("proposalId")?;
            let p = propose::push_again(app, &pid, &id).await?;
            let msg = match p.state {
                ProposalState::Pushed => format!("proposal {} pushed{}", p.id, pull_request(&p)),
                _ => format!(
                    "proposal {} not pushed: {}",
                    p.id,
                    p.push_error.clone().unwrap_or_default()
                ),
            };
            let mut m = Map::new();
            m.insert("proposal".into(), view::proposal(&p));
            Ok(Reply::new(msg, Value::Object(m)))
        }
    }
}

/// ` (pull request URL)`, or ` (pull request #N)` when its URL was not kept.
fn pull_request(p: &crate::domain::ontology::records::ProposalRecord) -> String {
    match (&p.pr_url, p.pr_number) {
        (Some(u), _) => format!(" (pull request {u})"),
        (None, Some(n)) => format!(" (pull request #{n})"),
        (None, None) => String::new(),
    }
}

/// Where the bound on a document's size is set.
const DOCUMENT_BOUND: &str = "max_document_mib in [ontology] of the config file sets the bound";

/// A text file of the repository's working tree of at most `max` bytes, read
/// through `repo_fs`.
fn read_repo_file(root: &str, rel: &str, max: u64) -> Result<String> {
    let fs = crate::repo_fs::RepoFs::new(std::path::Path::new(root))
        .map_err(|e| Error::invalid(e.to_string()))?;
    match fs.read_at_most(rel, max).map_err(|e| match e {
        crate::repo_fs::PathError::Refused(m) if m.contains("bytes, at most") => {
            Error::validation("path", format!("{m} ({DOCUMENT_BOUND})"))
        }
        e => Error::validation("path", e.to_string()),
    })? {
        Some(b) => String::from_utf8(b)
            .map_err(|_| Error::validation("path", format!("{rel} is not UTF-8 text"))),
        None => Err(Error::NotFound {
            entity: "file",
            id: rel.to_string(),
        }),
    }
}
