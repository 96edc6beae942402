//! Running a parsed command: the configuration loaded, the store opened, then a
//! session (stdio or HTTP), one call, a reindex or an embedding check.

use std::io::Write;
use std::process::ExitCode;

use rmcp::ServiceExt;

use super::args::{Command, HttpArgs};
use super::output::{print_out, say};
use crate::config::{Config, DbSource, Overrides};
use crate::mcp::{dispatch, server::Server, Registry};
use crate::service::{embedding, workflow, App};
use crate::store::Store;

/// Makes sure the database's directory exists before the store opens the file. The
/// default data directory (`~/.local/share/cairn`) is Cairn's own and is created on
/// first use, readable by this user only. A directory the user named (`--db`,
/// `$CAIRN_DB`, the config file) is never created: a typo there would otherwise leave
/// a database somewhere nobody looks.
fn ensure_db_dir(config: &Config) -> Result<(), String> {
    if config.db_path.to_str().is_some_and(crate::store::is_url) {
        return Ok(());
    }
    let dir = match config.db_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => return Ok(()),
    };
    match crate::store::file::dir(dir) {
        // Whatever else is wrong with it, the store's opening error says.
        crate::store::file::Dir::Usable => return Ok(()),
        // It exists: creating it would fail with a less helpful message.
        crate::store::file::Dir::Unusable(why) => {
            return Err(format!(
                "cannot use the database {}: {why}",
                config.db_path.display()
            ))
        }
        crate::store::file::Dir::Missing => {}
    }
    if config.db_source == DbSource::Default {
        use std::os::unix::fs::DirBuilderExt;
        return std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()));
    }
    Err(format!(
        "the directory {} does not exist (the database {} comes from {}); create it \
         (mkdir -p {}) or name a database file in an existing directory",
        dir.display(),
        config.db_path.display(),
        config.db_source.describe(),
        dir.display()
    ))
}

pub async fn run(o: Overrides, cmd: Command) -> Result<ExitCode, String> {
    let config = Config::load(&o).map_err(|e| e.to_string())?;
    let reg = Registry::new(&config.toolsets);
    if let Command::Tools { name } = &cmd {
        return super::tools::tools(&config, &reg, name.as_deref());
    }
    if let Command::Embed { texts } = &cmd {
        return embed(config, texts.clone()).await;
    }
    if matches!(cmd, Command::Backup { .. })
        && config.db_path.to_str().is_some_and(crate::store::is_url)
    {
        return Err(
            "backup copies a SQLite file; a PostgreSQL database is copied by its own tool: \
             pg_dump --format=custom --file=cairn.dump 'postgres://…' (the README's PostgreSQL section)"
                .into(),
        );
    }
    let http = match &cmd {
        Command::Serve { http } => bind_http(http, &config).await?,
        _ => None,
    };
    ensure_db_dir(&config)?;
    let options = crate::store::Options {
        busy_timeout: config.busy_timeout,
        // SQLite's pages are 4 KiB by default.
        max_pages: config.max_db_bytes.map(|b| (b / 4096).max(1)),
        ..Default::default()
    };
    let shown = crate::store::shown(&config.db_path.to_string_lossy());
    let store = Store::open(&config.db_path, &options)
        .await
        .map_err(|e| match e {
            crate::store::Error::Open(m) => m,
            other => format!("cannot open {shown}: {other}"),
        })?;
    tracing::info!(db = %shown, "store open");
    let app = App::new(store.clone(), config);
    // The caches of compiled graphs and vectors are left to the operating system at
    // exit: they hold memory only, and freeing a 20,000-atom graph piece by piece made
    // the exit 150 ms slower. (The rest of the application, language servers
    // included, is dropped as usual.)
    let caches = (app.graph.clone(), app.semantic.clone());
    let done = session(app, reg, cmd, http).await;
    store.close().await;
    std::mem::forget(caches);
    done
}

/// What `cmd` does once the store is open.
/// `serve --http`'s token, origins and listening socket, checked and bound before
/// the store opens: a missing token or a port in use touches no database.
async fn bind_http(http: &HttpArgs, config: &Config) -> Result<Option<crate::web::Bound>, String> {
    let Some(addr) = &http.addr else {
        return Ok(None);
    };
    let mut limits = config.http.clone();
    for (key, raw) in &http.limits {
        let flag = format!("--{}", key.replace('_', "-"));
        let v: u64 = raw
            .trim()
            .parse()
            .map_err(|_| format!("{flag} needs a whole number, not '{raw}'"))?;
        limits.set(key, v).map_err(|why| format!("{flag}: {why}"))?;
    }
    use crate::web::auth::{Secrets, Token};
    let env_token = std::env::var("CAIRN_TOKEN").ok().filter(|t| !t.is_empty());
    let secrets =
        match (&http.tokens_file, &http.token_file) {
            (Some(_), _) if env_token.is_some() => return Err(
                "--tokens-file and $CAIRN_TOKEN exclude each other: one token, or named agents; \
                 unset CAIRN_TOKEN (or add it to the file with cairn token add)"
                    .into(),
            ),
            (Some(p), _) => Some(Secrets::Named(crate::web::tokens::read(p)?)),
            (None, Some(p)) => Some(Secrets::Single(Token::from_file(p)?)),
            (None, None) => match env_token {
                Some(t) => Some(Secrets::Single(Token::new(&t, "$CAIRN_TOKEN")?)),
                None => None,
            },
        };
    let allow_origins = http
        .allow_origins
        .iter()
        .map(|o| crate::web::auth::parse_origin(o))
        .collect::<Result<Vec<_>, _>>()?;
    let o = crate::web::Options {
        addr: addr.clone(),
        secrets,
        allow_origins,
        grace: std::time::Duration::from_secs(30),
        limits,
    };
    crate::web::bind(o).await.map(Some)
}

async fn session(
    app: App,
    reg: Registry,
    cmd: Command,
    http: Option<crate::web::Bound>,
) -> Result<ExitCode, String> {
    // Before the configured pipelines are applied: an export reads the database as
    // it is, and an import replaces the pipelines with the export's.
    if let Some(done) = super::transfer::run(&app, &cmd).await {
        return done;
    }
    workflow::apply_configured(&app)
        .await
        .map_err(|e| e.to_string())?;
    match cmd {
        Command::Serve { .. } if http.is_some() => {
            if let Some(bound) = http {
                crate::web::serve(app, reg, bound).await?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve { .. } => {
            let embedder = app.embedder.clone();
            // A server embeds in the background while idle; `cairn call` does not.
            let background = app.background.clone();
            background.enable();
            // A person who ran `cairn serve` by hand sees why nothing happens.
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                say(
                    "cairn serve speaks MCP on stdin and stdout and waits for an MCP client; \
                     register it with one instead, e.g. `claude mcp add cairn -- cairn serve`, \
                     or try a tool by hand with `cairn call TOOL '{...}'` (Ctrl-D ends this)",
                );
            }
            let service = Server::new(app, reg)
                .serve(crate::mcp::transport::stdio())
                .await
                .map_err(|e| format!("MCP handshake failed: {e}"))?;
            let stopped = service.waiting().await;
            background.stop();
            stopped.map_err(|e| format!("server stopped: {e}"))?;
            // Says whether this session ever needed the model (writes alone never do).
            tracing::info!(
                embedder = embedder.loaded().unwrap_or("never loaded"),
                "server stopped"
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Call { tool, json } => {
            // `-` reads the arguments from stdin, `@path` from a file (a large or
            // quoted argument need not pass through the shell).
            let json = match json.as_deref() {
                Some("-") => {
                    let mut s = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                        .map_err(|e| format!("cannot read the arguments from stdin: {e}"))?;
                    Some(s)
                }
                Some(a) if a.starts_with('@') => Some(
                    std::fs::read_to_string(&a[1..])
                        .map_err(|e| format!("cannot read the arguments from {}: {e}", &a[1..]))?,
                ),
                _ => json,
            };
            let raw =
                match json.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                    None => None,
                    Some(s) => match serde_json::from_str::<serde_json::Value>(s) {
                        Ok(serde_json::Value::Object(m)) => Some(m),
                        Ok(_) => return Err(
                            "the arguments must be a JSON object, e.g. '{\"operation\":\"get\"}'"
                                .into(),
                        ),
                        Err(e) => return Err(format!("the arguments are not valid JSON: {e}")),
                    },
                };
            // A first search may embed a backlog for minutes: show how far it got.
            let progress = crate::service::progress::Progress::to(std::sync::Arc::new(
                crate::progress::BarSink::new("embedding"),
            ));
            let env = dispatch(&app, &reg, &tool, raw, progress).await;
            print_out(&serde_json::to_string_pretty(&env).unwrap_or_else(|_| env.to_string()))?;
            Ok(if env["success"] == serde_json::Value::Bool(true) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Backup { to } => {
            app.store
                .backup(&to)
                .await
                .map_err(|e| format!("cannot back up to {}: {e}", to.display()))?;
            let bytes = std::fs::metadata(&to).map(|m| m.len()).unwrap_or(0);
            let _ = writeln!(
                std::io::stderr(),
                "backup: {} written ({bytes} bytes)",
                to.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Reindex { all } => {
            let mut bar = crate::progress::Bar::new("reindex");
            let r = embedding::reindex(&app, crate::store::embedding::SOURCES, all, &mut |d, t| {
                bar.update(d, t)
            })
            .await
            .map_err(|e| e.to_string())?;
            if let Some(why) = &r.fallback_reason {
                say(why);
            }
            let _ = writeln!(
                std::io::stderr(),
                "reindex: {} embedded with {} ({} truncated to the model's window), {} stale vectors removed",
                r.embedded, r.embedder, r.truncated, r.pruned
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::ImportFrom(i) => super::import_from::run(&app, i).await,
        Command::Usage
        | Command::Version
        | Command::Tools { .. }
        | Command::Embed { .. }
        | Command::TokenAdd { .. }
        | Command::Export { .. }
        | Command::Import { .. } => Ok(ExitCode::SUCCESS),
    }
}

/// `cairn embed`: which embedder runs, whether each text was truncated, and the texts'
/// pairwise cosine similarities, as JSON. Needs no database.
async fn embed(config: Config, texts: Vec<String>) -> Result<ExitCode, String> {
    let lazy = std::sync::Arc::new(crate::embed::Lazy::new(config.model_dir.clone()));
    let l = lazy.clone();
    let (id, fallback, vecs) = tokio::task::spawn_blocking(move || {
        let e = l.get();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        e.embed(&refs)
            .map(|v| (e.id(), l.fallback_reason().map(str::to_string), v))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    let sims: Vec<Vec<f64>> = vecs
        .iter()
        .map(|a| {
            vecs.iter()
                .map(|b| {
                    let s = crate::embed::vector::dot(&a.vector, &b.vector) as f64;
                    (s * 1e4).round() / 1e4
                })
                .collect()
        })
        .collect();
    let out = serde_json::json!({
        "embedder": id,
        "modelDir": config.model_dir.display().to_string(),
        "fallbackReason": fallback,
        "dim": vecs.first().map(|v| v.vector.len()),
        "truncated": vecs.iter().map(|v| v.truncated).collect::<Vec<_>>(),
        "head": vecs.iter().map(|v| v.vector.iter().take(4).map(|x| (*x as f64 * 1e6).round() / 1e6).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "similarity": sims,
    });
    print_out(&serde_json::to_string_pretty(&out).unwrap_or_else(|_| out.to_string()))?;
    Ok(ExitCode::SUCCESS)
}
