//! The one place a git process is built and run. Whoever owns a repository's
//! `.git` (its hooks, its config) or the server user's home (`~/.gitconfig`) must
//! not be able to make Cairn run a program, talk to the network, or read its
//! arguments differently, so every process gets:
//!
//! - hooks off: `core.hooksPath=/dev/null` (no file can ever exist beneath it, so no
//!   hook is found: `reference-transaction`, `post-index-change` and the rest);
//! - `core.fsmonitor=false` (a monitor is a program git would start);
//! - no network: `protocol.allow=never` and `GIT_NO_LAZY_FETCH` (a partial clone
//!   would otherwise fetch a missing object, with credential helpers and ssh);
//! - the user's global and system config unread (`GIT_CONFIG_GLOBAL` and
//!   `GIT_CONFIG_SYSTEM` on `/dev/null`), except their `safe.directory` entries,
//!   passed on so a repository the operator declared safe stays usable;
//! - a minimal environment: only `PATH` is inherited, so `GIT_DIR`, `GIT_INDEX_FILE`,
//!   `GIT_TRACE*`, `GIT_CONFIG_PARAMETERS` and the like of the server's environment
//!   never reach git; `GIT_OPTIONAL_LOCKS=0` so no read refreshes the user's index
//!   (and one allocator setting, `GLIBC_TUNABLES`, for speed: see [`command`]);
//! - `--literal-pathspecs` (a path is never pathspec magic) and `--no-pager`.
//!
//! The repository's own config is still read (it says what the repository is: its
//! object format, its work tree); what in it could start a program is overridden
//! here or avoided by the commands: blobs are hashed without filters, diffs run with
//! `--no-ext-diff --no-textconv`, commits with `--no-gpg-sign`, and no command
//! checks files out.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

use crate::error::{Error, Result};

/// The environment that says where the user's global and system config are.
const CONFIG_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
];

/// The `safe.directory` entries of the user's global and system config, read once
/// (the only thing Cairn takes from them), by a git that sees nothing else of the
/// environment and no repository.
static SAFE_DIRECTORIES: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut out = Vec::new();
    for scope in ["--system", "--global"] {
        let mut cmd = Command::new(&*GIT);
        cmd.env_clear();
        for k in CONFIG_ENV {
            if let Some(v) = std::env::var_os(k) {
                cmd.env(k, v);
            }
        }
        let read = cmd
            .current_dir("/")
            .args([
                "--no-pager",
                "config",
                scope,
                "--includes",
                "--get-all",
                "safe.directory",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        if let Ok(o) = read {
            let text = String::from_utf8_lossy(&o.stdout);
            out.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_string));
        }
    }
    out
});

/// The git program: the first `git` on the server's `PATH`, found once, as the
/// child's own lookup on the same `PATH` would find it. Named by its absolute path
/// so the process is started with `posix_spawn`: the standard library forks
/// instead when a program is looked up on a `PATH` the command sets itself, and a
/// fork copies the server's page tables (an import of 100,000 pages spent a tenth
/// of its time there). `git` itself when none is found, so the error stays git's.
static GIT: LazyLock<PathBuf> = LazyLock::new(|| {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("git"))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| PathBuf::from("git"))
});

/// A git command on the work tree at `root`, with the protections the module
/// documentation lists. Every git process Cairn starts is made here.
pub(super) fn command(root: &Path) -> Command {
    let mut cmd = Command::new(&*GIT);
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_SYSTEM", "/dev/null")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        // glibc gives the top of the heap back to the kernel once more than 128 KiB
        // of it is free. `fast-import` sets up and tears down a zlib stream of about
        // 270 KiB for every object, so with this command line's heap layout it grew
        // and trimmed its heap twice per blob: an import of 100,000 pages spent
        // 2.2 s of 3.1 in the kernel (210,000 `brk` calls, 950,000 page faults)
        // where it spends 0.04 s with the threshold at 1 MiB. A git process lives
        // for one command, so what it keeps is freed when it exits. (Only glibc
        // reads the variable.)
        .env("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1048576")
        .args(["--no-pager", "--literal-pathspecs", "-C"])
        .arg(root)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "protocol.allow=never",
            "-c",
            "core.quotepath=off",
        ]);
    for dir in SAFE_DIRECTORIES.iter() {
        cmd.arg("-c").arg(format!("safe.directory={dir}"));
    }
    cmd
}

/// Runs git in `root` with extra environment, feeding `stdin` from another thread
/// (so a large input never deadlocks against a large output), and answers raw
/// bytes. Blocking: the adapter calls it from tokio's blocking pool.
pub(super) fn run_raw(
    root: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
    stdin: Option<Vec<u8>>,
) -> Result<(bool, Vec<u8>, String)> {
    let mut cmd = command(root);
    cmd.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Internal(format!("cannot run git: {e}")))?;
    let writer = match (stdin, child.stdin.take()) {
        (Some(input), Some(mut w)) => Some(std::thread::spawn(move || w.write_all(&input))),
        _ => None,
    };
    let out = child
        .wait_with_output()
        .map_err(|e| Error::Internal(format!("git failed: {e}")))?;
    if let Some(w) = writer {
        match w.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) if !out.status.success() => {
                tracing::debug!(error = %e, "git closed its input early")
            }
            Ok(Err(e)) => return Err(Error::Internal(format!("writing to git: {e}"))),
            Err(_) => return Err(Error::Internal("writing to git panicked".into())),
        }
    }
    Ok((
        out.status.success(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// As [`run_raw`], with text in and out.
pub(super) fn run(
    root: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<(bool, String, String)> {
    let (ok, out, err) = run_raw(root, args, &[], stdin.map(|s| s.as_bytes().to_vec()))?;
    Ok((ok, String::from_utf8_lossy(&out).into_owned(), err))
}
