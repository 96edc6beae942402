//! The command line: the usage text and the parse of `std::env::args` into a
//! [`Command`] and the [`Overrides`] of the configuration (with `lexopt`).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::config::Overrides;

pub const USAGE: &str = "\
cairn — task orchestrator MCP server with a memory of the codebase

USAGE:
    cairn [OPTIONS] serve                 serve MCP over stdio
    cairn [OPTIONS] serve --http ADDR:PORT [--token-file PATH | --tokens-file PATH]
                          [--allow-origin ORIGIN]...
                                          serve MCP over Streamable HTTP at /mcp and a
                                          read-only page at / (see HTTP below)
    cairn token add NAME --role write|read --file PATH
                                          mint a named agent's token: printed once, its
                                          hash appended to the tokens file PATH
    cairn [OPTIONS] call TOOL ['JSON']    run one tool, print its envelope (exit 1 on failure)
    cairn [OPTIONS] call TOOL --help      what TOOL does and its parameters (or: cairn help TOOL)
    cairn [OPTIONS] call TOOL - | @PATH   the arguments from stdin, or from a file
    cairn [OPTIONS] tools [TOOL]          list the tools, or explain one
    cairn [OPTIONS] reindex [--all]       embed the texts whose vectors are missing or stale
                                          (--all: every text), progress on stderr
    cairn [OPTIONS] embed TEXT...         print which embedder runs and the texts' cosine
                                          similarities (checks the model install)
    cairn [OPTIONS] backup PATH           write a consistent copy of the SQLite database to
                                          PATH (a new file), also while servers use it
    cairn [OPTIONS] export DIR            write everything the database holds to DIR (new or
                                          empty) as JSON lines, one file per table
    cairn [OPTIONS] import DIR            load an export into an empty database (SQLite or
                                          PostgreSQL), all of it or nothing (exit 3: not empty)
    cairn [OPTIONS] import --from task-orchestrator FILE.db
                                          import the TypeScript task-orchestrator port's
                                          database (all or nothing; refused when its ids
                                          are here already)
    cairn [OPTIONS] import --from mcp-memory FILE [--kind TYPE=KIND]...
                                          import the MCP memory server's memory.json:
                                          entities as subjects, observations and relations
                                          as Facts (--kind: an entity type's subject kind)

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
    --tokens-file PATH  named agents instead: one `NAME ROLE sha256:HEX` line each (see
                        cairn token add); a read agent's writing calls are refused
                        (FORBIDDEN), a write agent's name is recorded as the author
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

Logs go to stderr; set CAIRN_LOG=debug|info|warn|error (default warn), and
CAIRN_LOG_FORMAT=json for one JSON object per line. When the reader
of stdout stops early (`cairn tools | head -1`), cairn stops writing and exits with the
status it would have had.";

/// What the command line asks for.
pub enum Command {
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
    /// `backup PATH`: a consistent copy of the database in a new file.
    Backup {
        to: PathBuf,
    },
    Embed {
        texts: Vec<String>,
    },
    /// `token add NAME --role ROLE --file PATH`.
    TokenAdd {
        name: String,
        role: crate::service::agent::Role,
        file: PathBuf,
    },
    /// `export DIR`: every table of user state as JSON lines (`store::transfer`).
    Export {
        dir: PathBuf,
    },
    /// `import DIR`: an export loaded into an empty database.
    Import {
        dir: PathBuf,
    },
    /// `import --from SOURCE FILE`: another store's data imported.
    ImportFrom(super::import_from::ImportFrom),
}

/// `serve --http`'s options as given.
#[derive(Default)]
pub struct HttpArgs {
    pub addr: Option<String>,
    pub token_file: Option<PathBuf>,
    /// `--tokens-file`: the named agents' hashes.
    pub tokens_file: Option<PathBuf>,
    pub allow_origins: Vec<String>,
    /// `--max-sessions` and the like: the config file's `[http]` key and the value.
    pub limits: Vec<(&'static str, String)>,
}

/// The `[http]` setting a flag sets (`--max-sessions` sets `max_sessions`).
fn limit_flag(flag: &str) -> Option<&'static str> {
    let name = flag.strip_prefix("--")?.replace('-', "_");
    crate::config::HttpSettings::KEYS
        .iter()
        .find(|k| **k == name)
        .copied()
}

/// One command-line item, owned (lexopt's borrows the parser).
enum Item {
    Short(char),
    Long(String),
    Value(OsString),
}

fn text(v: OsString, flag: &str) -> Result<String, String> {
    v.into_string()
        .map_err(|v| format!("{flag}: '{}' is not valid UTF-8", v.to_string_lossy()))
}

/// Options are read anywhere on the line; the words left (the command and its
/// arguments) are read in order after. An unknown option before the command is an
/// error; after it, one of the command's words, as given (`embed -x`).
pub fn parse(args: Vec<OsString>) -> Result<(Overrides, Command), String> {
    let mut o = Overrides::default();
    let mut http = HttpArgs::default();
    let mut rest: Vec<String> = Vec::new();
    let (mut help, mut version) = (false, false);
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let item = match p.next() {
            Ok(Some(lexopt::Arg::Short(c))) => Item::Short(c),
            Ok(Some(lexopt::Arg::Long(l))) => Item::Long(l.to_string()),
            Ok(Some(lexopt::Arg::Value(v))) => Item::Value(v),
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        };
        let flag = match &item {
            Item::Short(c) => format!("-{c}"),
            Item::Long(l) => format!("--{l}"),
            Item::Value(_) => String::new(),
        };
        let mut value = || {
            p.value()
                .map_err(|_| format!("{flag} needs a value"))
                .and_then(|v| text(v, &flag))
        };
        if let Some(key) = limit_flag(&flag) {
            http.limits.push((key, value()?));
            continue;
        }
        match item {
            Item::Short('h') => help = true,
            Item::Short('V') => version = true,
            Item::Long(l) => match l.as_str() {
                "help" => help = true,
                "version" => version = true,
                "db" => o.db = Some(PathBuf::from(value()?)),
                "config" => o.config = Some(PathBuf::from(value()?)),
                "toolsets" => o.toolsets = Some(value()?),
                "model-dir" => o.model_dir = Some(PathBuf::from(value()?)),
                "http" => http.addr = Some(value()?),
                "token-file" => http.token_file = Some(PathBuf::from(value()?)),
                "tokens-file" => http.tokens_file = Some(PathBuf::from(value()?)),
                "allow-origin" => http.allow_origins.push(value()?),
                _ if rest.is_empty() => return Err(format!("unknown option {flag}")),
                _ => match p.optional_value() {
                    Some(v) => rest.push(format!("{flag}={}", v.to_string_lossy())),
                    None => rest.push(flag),
                },
            },
            Item::Short(_) if rest.is_empty() => return Err(format!("unknown option {flag}")),
            // The rest of a cluster stays with it: `-5x` is one word.
            Item::Short(_) => match p.optional_value() {
                Some(v) => rest.push(format!("{flag}{}", v.to_string_lossy())),
                None => rest.push(flag),
            },
            Item::Value(v) => rest.push(text(v, "an argument")?),
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
        Some("backup") => Command::Backup {
            to: PathBuf::from(rest.next().ok_or("backup needs the path of the copy")?),
        },
        Some("export") => Command::Export {
            dir: PathBuf::from(rest.next().ok_or("export needs the directory to write")?),
        },
        // `import DIR` loads Cairn's own export; `import --from SOURCE FILE` another store's.
        Some("import") => {
            let words: Vec<String> = rest.by_ref().collect();
            match (super::import_from::parse(&words)?, words.as_slice()) {
                (Some(i), _) => Command::ImportFrom(i),
                (None, [dir]) if !dir.starts_with('-') => Command::Import {
                    dir: PathBuf::from(dir),
                },
                (None, _) => {
                    return Err(format!(
                    "import needs the directory of an export, or --from {} and the file to import",
                    super::import_from::SOURCES.join("|")
                ))
                }
            }
        }
        Some("embed") => {
            let texts: Vec<String> = rest.by_ref().collect();
            if texts.is_empty() {
                return Err("embed needs at least one text".into());
            }
            Command::Embed { texts }
        }
        Some("token") => token_command(&mut rest)?,
        Some(other) => return Err(format!("unknown command '{other}'")),
        None => return Err("a command is required".into()),
    };
    if let Some(extra) = rest.next() {
        return Err(format!("unexpected argument '{extra}'"));
    }
    if http.addr.is_some()
        || http.token_file.is_some()
        || http.tokens_file.is_some()
        || !http.allow_origins.is_empty()
        || !http.limits.is_empty()
    {
        return Err(
            "--http and its options (--token-file, --tokens-file, --allow-origin, --max-sessions, \
                    the timeouts) go with serve"
                .into(),
        );
    }
    if let Command::Serve { http } = &cmd {
        if http.addr.is_none()
            && (http.token_file.is_some()
                || http.tokens_file.is_some()
                || !http.allow_origins.is_empty()
                || !http.limits.is_empty())
        {
            return Err(
                "--token-file, --tokens-file, --allow-origin, --max-sessions and the timeouts need \
                        --http ADDR:PORT"
                    .into(),
            );
        }
    }
    if let Command::Serve { http } = &cmd {
        if http.token_file.is_some() && http.tokens_file.is_some() {
            return Err(
                "--token-file and --tokens-file exclude each other: one token, or named agents"
                    .into(),
            );
        }
    }
    Ok((o, cmd))
}

/// `token add NAME --role ROLE --file PATH`: the words after `token`, options in
/// either form (`--role read`, `--role=read`) and in any order after NAME.
fn token_command(rest: &mut impl Iterator<Item = String>) -> Result<Command, String> {
    const HOW: &str = "token add NAME --role write|read --file PATH";
    match rest.next().as_deref() {
        Some("add") => {}
        Some(other) => return Err(format!("unknown token command '{other}': {HOW}")),
        None => return Err(format!("token needs a command: {HOW}")),
    }
    let (mut name, mut role, mut file) = (None, None, None);
    while let Some(w) = rest.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (w.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| rest.next())
                .ok_or_else(|| format!("{flag} needs a value: {HOW}"))
        };
        match flag.as_str() {
            "--role" => {
                let v = value()?;
                role = Some(
                    crate::service::agent::Role::parse(&v)
                        .ok_or_else(|| format!("--role is write or read, not '{v}'"))?,
                );
            }
            "--file" => file = Some(PathBuf::from(value()?)),
            f if f.starts_with('-') => return Err(format!("unknown option {f}: {HOW}")),
            _ if name.is_none() => name = Some(w),
            _ => return Err(format!("unexpected argument '{w}': {HOW}")),
        }
    }
    match (name, role, file) {
        (Some(name), Some(role), Some(file)) => Ok(Command::TokenAdd { name, role, file }),
        (None, ..) => Err(format!("token add needs the agent's NAME: {HOW}")),
        (_, None, _) => Err(format!(
            "token add needs --role write or --role read: {HOW}"
        )),
        (.., None) => Err(format!(
            "token add needs --file PATH, the tokens file: {HOW}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn run(line: &str) -> Result<(Overrides, Command), String> {
        parse(line.split_whitespace().map(OsString::from).collect())
    }

    #[test]
    fn options_anywhere_in_either_form() {
        for line in ["--db x.db serve", "--db=x.db serve", "serve --db x.db"] {
            let (o, cmd) = run(line).unwrap();
            assert_eq!(o.db, Some(PathBuf::from("x.db")), "{line}");
            assert!(matches!(cmd, Command::Serve { .. }), "{line}");
        }
        let (_, cmd) =
            run("--max-sessions=5 serve --http 127.0.0.1:0 --session-idle-ms 9").unwrap();
        let Command::Serve { http } = cmd else {
            panic!()
        };
        assert_eq!(http.addr.as_deref(), Some("127.0.0.1:0"));
        assert_eq!(
            http.limits,
            [
                ("max_sessions", "5".to_string()),
                ("session_idle_ms", "9".to_string())
            ]
        );
    }

    #[test]
    fn the_commands_words_are_kept_as_given() {
        let (_, cmd) = run("embed -x -5y --z=1 plain").unwrap();
        let Command::Embed { texts } = cmd else {
            panic!()
        };
        assert_eq!(texts, ["-x", "-5y", "--z=1", "plain"]);
        let (_, cmd) = run("call advance -").unwrap();
        assert!(
            matches!(cmd, Command::Call { tool, json } if tool == "advance" && json.as_deref() == Some("-"))
        );
        let (_, cmd) = run("call advance --help").unwrap();
        assert!(matches!(cmd, Command::Tools { name: Some(n) } if n == "advance"));
        assert!(matches!(run("help").unwrap().1, Command::Usage));
        assert!(matches!(run("-V").unwrap().1, Command::Version));
    }

    #[test]
    fn mistakes_are_named() {
        let e = |line: &str| run(line).err().unwrap_or_default();
        assert_eq!(e("--bogus serve"), "unknown option --bogus");
        assert_eq!(e("serve --db"), "--db needs a value");
        assert_eq!(e(""), "a command is required");
        assert_eq!(e("frob"), "unknown command 'frob'");
        assert_eq!(e("serve extra"), "unexpected argument 'extra'");
        assert!(e("serve --token-file t").contains("need --http"));
        assert!(e("--http 1.2.3.4:5 tools").contains("go with serve"));
        assert_eq!(e("embed"), "embed needs at least one text");
        assert_eq!(e("export"), "export needs the directory to write");
        assert_eq!(e("import a b"), "unexpected argument 'b'");
        assert!(e("import").starts_with("import needs the directory of an export, or --from"));
        assert!(e("import --kind a=Lib dir").contains("--from"));
        assert!(
            matches!(run("import dir").unwrap().1, Command::Import { dir } if dir == Path::new("dir"))
        );
        assert!(matches!(
            run("import --from mcp-memory m.json").unwrap().1,
            Command::ImportFrom(_)
        ));
    }
}
