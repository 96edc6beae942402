//! The `cairn` command: parse arguments, set up logging on stderr, open the store,
//! then serve MCP over stdio, run one tool, or list the tools.

#![deny(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use cairn::config::{Config, DbSource, Overrides};
use cairn::mcp::{dispatch, server::Server, Registry};
use cairn::service::{embedding, workflow, App};
use cairn::store::Store;
use rmcp::ServiceExt;

const USAGE: &str = "\
cairn — task orchestrator MCP server with a memory of the codebase

USAGE:
    cairn [OPTIONS] serve                 serve MCP over stdio
    cairn [OPTIONS] serve --http ADDR:PORT [--token-file PATH] [--allow-origin ORIGIN]...
                                          serve MCP over Streamable HTTP at /mcp and a
                                          read-only page at / (see HTTP below)
    cairn [OPTIONS] call TOOL ['JSON']    run one tool, print its envelope (exit 1 on failure)
    cairn [OPTIONS] call TOOL --help      what TOOL does and its parameters (or: cairn help TOOL)
    cairn [OPTIONS] call TOOL - | @PATH   the arguments from stdin, or from a file
    cairn [OPTIONS] tools [TOOL]          list the tools, or explain one
    cairn [OPTIONS] reindex [--all]       embed the texts whose vectors are missing or stale
                                          (--all: every text), progress on stderr
    cairn [OPTIONS] embed TEXT...         print which embedder runs and the texts' cosine
                                          similarities (checks the model install)

OPTIONS:
    --db PATH|URL       database file (else $CAIRN_DB, else config `db`, else ~/.local/share/cairn/cairn.db);
                        its directory must exist (only the default one is created); or a
                        PostgreSQL database, postgres://user[:password]@host[:port]/name
    --config PATH       config file (else $CAIRN_CONFIG, else ~/.config/cairn/config.toml)
    --toolsets LIST     comma-separated toolsets to serve (default: all)
    --model-dir PATH    embedding model (else $CAIRN_MODEL_DIR, else config `model_dir`, else
                        ~/.local/share/cairn/models/all-minilm-l6-v2; install it with
                        scripts/fetch-model.sh; absent: a built-in hashing embedder runs)
    -h, --help          this text
    -V, --version       the version

HTTP:
    --http ADDR:PORT    e.g. 127.0.0.1:8080 (port 0: any free port; the address is printed)
    --token-file PATH   the bearer token (else $CAIRN_TOKEN); required unless ADDR is a
                        loopback address; MCP clients send `Authorization: Bearer TOKEN`, a
                        browser opens http://ADDR:PORT/?token=TOKEN once (kept as a cookie)
    --allow-origin O    a browser origin allowed besides the server's own (repeatable)
    --max-sessions N    MCP sessions open at once (default 1000; past it, 503)
    --session-idle-ms MS
                        a session idle this long, no call in flight, closes (1800000)
    --header-timeout-ms MS, --body-timeout-ms MS
                        how long a request's headers, then its body, may take to
                        arrive (30000 each); the four limits are also keys of [http]
                        in the config file
    SIGTERM or Ctrl-C stops accepting, lets calls in flight finish (30 s at most), closes
    the store.

Logs go to stderr; set CAIRN_LOG=debug|info|warn|error (default warn). When the reader
of stdout stops early (`cairn tools | head -1`), cairn stops writing and exits with the
status it would have had.";

enum Command {
    /// `--help`, or `-h`: the usage text.
    Usage,
    /// `--version`, or `-V`.
    Version,
    /// stdio, or HTTP when `http.addr` is set.
    Serve {
        http: HttpArgs,
    },
    Call {
        tool: String,
        json: Option<String>,
    },
    /// `tools` lists the served tools; `tools NAME` and `call NAME --help` explain one.
    Tools {
        name: Option<String>,
    },
    Reindex {
        all: bool,
    },
    Embed {
        texts: Vec<String>,
    },
}

/// `serve --http`'s options as given.
#[derive(Default)]
struct HttpArgs {
    addr: Option<String>,
    token_file: Option<PathBuf>,
    allow_origins: Vec<String>,
    /// `--max-sessions` and the like: the config file's `[http]` key and the value.
    limits: Vec<(&'static str, String)>,
}

/// The `[http]` setting a flag sets (`--max-sessions` sets `max_sessions`).
fn limit_flag(flag: &str) -> Option<&'static str> {
    let name = flag.strip_prefix("--")?.replace('-', "_");
    cairn::config::HttpSettings::KEYS
        .iter()
        .find(|k| **k == name)
        .copied()
}

fn parse(args: Vec<String>) -> Result<(Overrides, Command), String> {
    let mut o = Overrides::default();
    let mut http = HttpArgs::default();
    let mut rest = Vec::new();
    let (mut help, mut version) = (false, false);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (a.as_str(), None),
        };
        if let Some(key) = limit_flag(flag) {
            let v = match inline {
                Some(v) => v.to_string(),
                None => value(flag)?,
            };
            http.limits.push((key, v));
            continue;
        }
        match a.as_str() {
            "-h" | "--help" => help = true,
            "-V" | "--version" => version = true,
            "--db" => o.db = Some(PathBuf::from(value("--db")?)),
            "--config" => o.config = Some(PathBuf::from(value("--config")?)),
            "--toolsets" => o.toolsets = Some(value("--toolsets")?),
            "--model-dir" => o.model_dir = Some(PathBuf::from(value("--model-dir")?)),
            "--http" => http.addr = Some(value("--http")?),
            "--token-file" => http.token_file = Some(PathBuf::from(value("--token-file")?)),
            "--allow-origin" => http.allow_origins.push(value("--allow-origin")?),
            s if s.starts_with("--http=") => http.addr = Some(s[7..].to_string()),
            s if s.starts_with("--token-file=") => http.token_file = Some(PathBuf::from(&s[13..])),
            s if s.starts_with("--allow-origin=") => http.allow_origins.push(s[15..].to_string()),
            s if s.starts_with("--model-dir=") => o.model_dir = Some(PathBuf::from(&s[12..])),
            s if s.starts_with("--db=") => o.db = Some(PathBuf::from(&s[5..])),
            s if s.starts_with("--config=") => o.config = Some(PathBuf::from(&s[9..])),
            s if s.starts_with("--toolsets=") => o.toolsets = Some(s[11..].to_string()),
            s if s.starts_with('-') && rest.is_empty() => {
                return Err(format!("unknown option {s}"))
            }
            _ => rest.push(a),
        }
    }
    // `--help` anywhere asks for help: about the tool after `call`, else the usage.
    if help {
        let cmd = match (rest.first().map(String::as_str), rest.get(1)) {
            (Some("call"), Some(tool)) => Command::Tools {
                name: Some(tool.clone()),
            },
            _ => Command::Usage,
        };
        return Ok((o, cmd));
    }
    if version {
        return Ok((o, Command::Version));
    }
    let mut rest = rest.into_iter();
    let cmd = match rest.next().as_deref() {
        Some("serve") => Command::Serve {
            http: std::mem::take(&mut http),
        },
        Some("tools") => Command::Tools { name: rest.next() },
        // `help` as `--help`: the usage, or `help TOOL` what TOOL does.
        Some("help") => match rest.next() {
            Some(tool) => Command::Tools { name: Some(tool) },
            None => Command::Usage,
        },
        Some("call") => {
            let tool = rest.next().ok_or("call needs a tool name")?;
            Command::Call {
                tool,
                json: rest.next(),
            }
        }
        Some("reindex") => {
            let all = match rest.next().as_deref() {
                None => false,
                Some("--all") => true,
                Some(x) => return Err(format!("unexpected argument '{x}'")),
            };
            Command::Reindex { all }
        }
        Some("embed") => {
            let texts: Vec<String> = rest.by_ref().collect();
            if texts.is_empty() {
                return Err("embed needs at least one text".into());
            }
            Command::Embed { texts }
        }
        Some(other) => return Err(format!("unknown command '{other}'")),
        None => return Err("a command is required".into()),
    };
    if let Some(extra) = rest.next() {
        return Err(format!("unexpected argument '{extra}'"));
    }
    if http.addr.is_some()
        || http.token_file.is_some()
        || !http.allow_origins.is_empty()
        || !http.limits.is_empty()
    {
        return Err(
            "--http and its options (--token-file, --allow-origin, --max-sessions, \
                    the timeouts) go with serve"
                .into(),
        );
    }
    if let Command::Serve { http } = &cmd {
        if http.addr.is_none()
            && (http.token_file.is_some()
                || !http.allow_origins.is_empty()
                || !http.limits.is_empty())
        {
            return Err(
                "--token-file, --allow-origin, --max-sessions and the timeouts need \
                        --http ADDR:PORT"
                    .into(),
            );
        }
    }
    Ok((o, cmd))
}

fn main() -> ExitCode {
    // candle asks for its thread count before every matrix product and, unless
    // RAYON_NUM_THREADS is set, finds it by reading /proc/cpuinfo: dozens of file
    // reads per embedded query. Setting the variable once, here, before any thread
    // exists, to the count the process may use, keeps the parallelism and drops the reads.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let level = match std::env::var("CAIRN_LOG")
        .unwrap_or_default()
        .to_ascii_lowercase()
        .as_str()
    {
        "trace" => tracing::Level::TRACE,
        "debug" => tracing::Level::DEBUG,
        "info" => tracing::Level::INFO,
        "error" => tracing::Level::ERROR,
        _ => tracing::Level::WARN,
    };
    // Every line for stderr, whichever crate logs it, loses any URL's password.
    tracing_subscriber::fmt()
        .with_writer(|| Redacted)
        .with_max_level(level)
        .init();
    redact_panics();

    let (overrides, cmd) = match parse(args) {
        Ok(x) => x,
        Err(e) => {
            say(&format!("{e}\n\n{USAGE}"));
            return ExitCode::from(2);
        }
    };
    let printed = match cmd {
        Command::Usage => Some(print_out(USAGE)),
        Command::Version => Some(print_out(&format!("cairn {}", env!("CARGO_PKG_VERSION")))),
        _ => None,
    };
    if let Some(done) = printed {
        return match done {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                say(&e);
                ExitCode::FAILURE
            }
        };
    }
    // Many HTTP sessions share one server: their calls and page renders run on every
    // core. stdio serves one client, and the commands run one call: one thread.
    let builder = match &cmd {
        Command::Serve { http } if http.addr.is_some() => {
            tokio::runtime::Builder::new_multi_thread()
        }
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let rt = match { builder }.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            say(&format!("cannot start the runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(overrides, cmd)) {
        Ok(code) => code,
        Err(e) => {
            say(&e);
            ExitCode::FAILURE
        }
    }
}

/// Writes `text` and a newline to stdout. A reader that closed its end early
/// (`cairn tools | head -1`) chose to stop reading: that is not an error, so the
/// command goes on as if the text had been read and exits with the status it would
/// have had. (Rust ignores SIGPIPE, so the write fails with EPIPE instead of killing
/// the process; `println!` would panic on it.) Any other failure is an error.
fn print_out(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

/// Tells the person at the shell `message` on stderr, any URL's password masked. A
/// stderr nobody reads any more is no reason to fail (`eprintln!` would panic).
fn say(message: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "cairn: {}",
        cairn::redact::text(message)
    );
}

/// stderr for the logs: each write (one formatted event) with any URL's password
/// masked ([`cairn::redact::text`]).
struct Redacted;

impl Write for Redacted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr()
            .lock()
            .write_all(cairn::redact::text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A panic whose message holds a URL's password is printed masked; any other goes
/// to the default hook (backtraces and all).
fn redact_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let masked = cairn::redact::text(&message);
        if masked == message {
            default(info);
        } else {
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            say(&format!("panicked{at}: {masked}"));
        }
    }));
}

/// `cairn tools`: the served tools, a line each, by toolset; `cairn tools NAME` (and
/// `cairn call NAME --help`): what that tool does and its parameters.
fn tools(config: &Config, reg: &Registry, name: Option<&str>) -> Result<ExitCode, String> {
    let Some(name) = name else {
        let mut text = String::new();
        for (set, _) in cairn::mcp::TOOLSET_PURPOSES
            .iter()
            .filter(|(s, _)| config.toolsets.iter().any(|t| t == s))
        {
            text.push_str(&format!("[{set}]\n"));
            for d in reg.defs.iter().filter(|d| d.toolset == *set) {
                let first = d
                    .description
                    .split(". ")
                    .next()
                    .unwrap_or(d.description)
                    .trim_end_matches('.');
                text.push_str(&format!("  {:<22} {first}\n", d.name));
            }
        }
        print_out(text.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(def) = reg.find(name) {
        print_out(cairn::mcp::help::describe(def).trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    let shown: String = name.chars().take(80).collect();
    // A tool this build has, in a toolset the configuration leaves out.
    let all: Vec<String> = cairn::config::TOOLSETS
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(def) = Registry::new(&all).find(name) {
        say(&format!(
            "tool '{shown}' is in the {} toolset, which is not served here (toolsets: {}); \
             add it with --toolsets or `toolsets` in the config file",
            def.toolset,
            config.toolsets.join(",")
        ));
        return Ok(ExitCode::from(2));
    }
    let names: Vec<&str> = reg.defs.iter().map(|d| d.name).collect();
    let close = cairn::mcp::help::close_names(name, &names);
    if close.is_empty() {
        say(&format!(
            "no tool named '{shown}'; `cairn tools` lists them"
        ));
    } else {
        say(&format!(
            "no tool named '{shown}'; close names: {}",
            close.join(", ")
        ));
    }
    Ok(ExitCode::from(2))
}

/// Makes sure the database's directory exists before the store opens the file. The
/// default data directory (`~/.local/share/cairn`) is Cairn's own and is created on
/// first use, readable by this user only. A directory the user named (`--db`,
/// `$CAIRN_DB`, the config file) is never created: a typo there would otherwise leave
/// a database somewhere nobody looks.
fn ensure_db_dir(config: &Config) -> Result<(), String> {
    if config.db_path.to_str().is_some_and(cairn::store::is_url) {
        return Ok(());
    }
    let dir = match config.db_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => return Ok(()),
    };
    match cairn::store::file::dir(dir) {
        // Whatever else is wrong with it, the store's opening error says.
        cairn::store::file::Dir::Usable => return Ok(()),
        // It exists: creating it would fail with a less helpful message.
        cairn::store::file::Dir::Unusable(why) => {
            return Err(format!(
                "cannot use the database {}: {why}",
                config.db_path.display()
            ))
        }
        cairn::store::file::Dir::Missing => {}
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

async fn run(o: Overrides, cmd: Command) -> Result<ExitCode, String> {
    let config = Config::load(&o).map_err(|e| e.to_string())?;
    let reg = Registry::new(&config.toolsets);
    if let Command::Tools { name } = &cmd {
        return tools(&config, &reg, name.as_deref());
    }
    if let Command::Embed { texts } = &cmd {
        return embed(config, texts.clone()).await;
    }
    let http = match &cmd {
        Command::Serve { http } => bind_http(http, &config).await?,
        _ => None,
    };
    ensure_db_dir(&config)?;
    let options = cairn::store::Options {
        busy_timeout: config.busy_timeout,
        // SQLite's pages are 4 KiB by default.
        max_pages: config.max_db_bytes.map(|b| (b / 4096).max(1)),
        ..Default::default()
    };
    let shown = cairn::store::shown(&config.db_path.to_string_lossy());
    let store = Store::open(&config.db_path, &options)
        .await
        .map_err(|e| match e {
            cairn::store::Error::Open(m) => m,
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
async fn bind_http(http: &HttpArgs, config: &Config) -> Result<Option<cairn::web::Bound>, String> {
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
    let token = match &http.token_file {
        Some(p) => Some(cairn::web::auth::Token::from_file(p)?),
        None => match std::env::var("CAIRN_TOKEN") {
            Ok(t) if !t.is_empty() => Some(cairn::web::auth::Token::new(&t, "$CAIRN_TOKEN")?),
            _ => None,
        },
    };
    let allow_origins = http
        .allow_origins
        .iter()
        .map(|o| cairn::web::auth::parse_origin(o))
        .collect::<Result<Vec<_>, _>>()?;
    let o = cairn::web::Options {
        addr: addr.clone(),
        token,
        allow_origins,
        grace: std::time::Duration::from_secs(30),
        limits,
    };
    cairn::web::bind(o).await.map(Some)
}

async fn session(
    app: App,
    reg: Registry,
    cmd: Command,
    http: Option<cairn::web::Bound>,
) -> Result<ExitCode, String> {
    workflow::apply_configured(&app)
        .await
        .map_err(|e| e.to_string())?;
    match cmd {
        Command::Serve { .. } if http.is_some() => {
            if let Some(bound) = http {
                cairn::web::serve(app, reg, bound).await?;
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
                .serve(cairn::mcp::transport::stdio())
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
            let progress = cairn::service::progress::Progress::to(std::sync::Arc::new(
                cairn::progress::BarSink::new("embedding"),
            ));
            let env = dispatch(&app, &reg, &tool, raw, progress).await;
            print_out(&serde_json::to_string_pretty(&env).unwrap_or_else(|_| env.to_string()))?;
            Ok(if env["success"] == serde_json::Value::Bool(true) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Reindex { all } => {
            let mut bar = cairn::progress::Bar::new("reindex");
            let r = embedding::reindex(&app, cairn::store::embedding::SOURCES, all, &mut |d, t| {
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
        Command::Usage | Command::Version | Command::Tools { .. } | Command::Embed { .. } => {
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `cairn embed`: which embedder runs, whether each text was truncated, and the texts'
/// pairwise cosine similarities, as JSON. Needs no database.
async fn embed(config: Config, texts: Vec<String>) -> Result<ExitCode, String> {
    let lazy = std::sync::Arc::new(cairn::embed::Lazy::new(config.model_dir.clone()));
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
                    let s = cairn::embed::vector::dot(&a.vector, &b.vector) as f64;
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
