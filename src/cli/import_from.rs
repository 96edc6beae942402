//! `cairn import --from SOURCE FILE`: the command line of the importers from other
//! stores (`task-orchestrator`: the TypeScript port's database; `mcp-memory`: the MCP
//! memory server's `memory.json`), and the run that prints what was written.

use std::path::PathBuf;
use std::process::ExitCode;

use super::output::print_out;
use crate::service::{foreign, App};

/// The stores `--from` names.
pub const SOURCES: &[&str] = &["task-orchestrator", "mcp-memory"];

/// What `import --from` asks for.
pub struct ImportFrom {
    pub source: String,
    pub file: PathBuf,
    /// `--kind TYPE=KIND`: an entity type's subject kind (mcp-memory).
    pub kinds: Vec<(String, String)>,
}

/// Reads the words after `import`; `None` when they carry no `--from` (an import of
/// another kind).
pub fn parse(words: &[String]) -> Result<Option<ImportFrom>, String> {
    let mut source = None;
    let mut file = None;
    let mut kinds = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (w.as_str(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "--from" => source = Some(value("--from")?),
            "--kind" => {
                let v = value("--kind")?;
                let (t, k) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--kind takes TYPE=KIND, not '{v}'"))?;
                kinds.push((t.to_string(), k.to_string()));
            }
            f if f.starts_with('-') && f.len() > 1 => {
                return Err(format!("import: unknown option {f}"))
            }
            _ if file.is_none() => file = Some(PathBuf::from(w)),
            _ => return Err(format!("unexpected argument '{w}'")),
        }
    }
    let Some(source) = source else {
        return Ok(None);
    };
    if !SOURCES.contains(&source.as_str()) {
        return Err(format!(
            "--from {source}: Cairn imports from {}",
            SOURCES.join(" or ")
        ));
    }
    let file = file.ok_or_else(|| {
        format!("import --from {source} needs the file to import (the port's .db, or memory.json)")
    })?;
    if !kinds.is_empty() && source != "mcp-memory" {
        return Err("--kind goes with --from mcp-memory".into());
    }
    Ok(Some(ImportFrom {
        source,
        file,
        kinds,
    }))
}

/// Runs the import and prints what it wrote as JSON; a refusal is the error text.
pub async fn run(app: &App, i: ImportFrom) -> Result<ExitCode, String> {
    let done = match i.source.as_str() {
        "task-orchestrator" => foreign::port::import(app, &i.file).await,
        _ => {
            foreign::memory_file::import(app, &i.file, &i.kinds, time::OffsetDateTime::now_utc())
                .await
        }
    }
    .map_err(|e| format!("import --from {}: {e}", i.source))?;
    let written: serde_json::Map<String, serde_json::Value> = done
        .written
        .iter()
        .map(|(k, n)| (k.to_string(), serde_json::Value::from(*n)))
        .collect();
    let out = serde_json::json!({
        "from": i.source,
        "file": i.file.display().to_string(),
        "written": written,
        "notes": done.notes,
    });
    print_out(&serde_json::to_string_pretty(&out).unwrap_or_else(|_| out.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn both_forms_and_mistakes() {
        let i = parse(&words("--from task-orchestrator x.db"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (i.source.as_str(), i.file),
            ("task-orchestrator", PathBuf::from("x.db"))
        );
        let i = parse(&words(
            "m.json --from=mcp-memory --kind concept=Lib --kind=event=Service",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(i.kinds.len(), 2);
        assert!(parse(&words("dir")).unwrap().is_none());
        assert!(parse(&words("--from beads x"))
            .err()
            .unwrap()
            .contains("imports from"));
        assert!(parse(&words("--from mcp-memory"))
            .err()
            .unwrap()
            .contains("needs the file"));
        assert!(parse(&words("--from mcp-memory --kind x m"))
            .err()
            .unwrap()
            .contains("TYPE=KIND"));
        assert!(parse(&words("--from task-orchestrator --kind a=B x")).is_err());
    }
}
