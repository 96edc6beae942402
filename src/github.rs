//! The GitHub adapter: the REST calls that turn a proposal into a branch and a pull
//! request, and read a pull request's state, made with the `curl` command line behind
//! the small [`Http`] trait (no HTTP or TLS stack is linked into Cairn).
//!
//! Like git, curl runs with a fixed argument list: the URL after `--url`, the body
//! from a private temporary file. The token goes to curl as a header read from its
//! standard input (`--header @-`), never on a command line (where other users could
//! read it) nor in a log line or an error message. Every curl process is built by
//! [`curl_command`]: `-q` first, so no `.curlrc` is read (one could add headers, or
//! trace the token to a file), and a minimal environment (`PATH`, the proxy and CA
//! variables; not `HOME`, `CURL_HOME` or `SSLKEYLOGFILE`). Curl is blocking: the
//! service calls it from tokio's blocking pool. Paths written into a tree pass
//! `git::check_path`, as they do for a local commit. Knows nothing of the store or
//! of ontologies.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// An HTTP answer: status and body.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

/// Sends one request. Errors are sentences an operator can act on; they never hold
/// the token.
pub trait Http: Send + Sync {
    fn send(
        &self,
        method: &str,
        url: &str,
        token: &str,
        body: Option<&str>,
    ) -> Result<Response, String>;
}

/// [`Http`] through the `curl` command line.
pub struct Curl {
    pub timeout: Duration,
}

impl Default for Curl {
    fn default() -> Curl {
        Curl {
            timeout: Duration::from_secs(30),
        }
    }
}

/// A private file holding a request body, removed when dropped.
struct BodyFile(PathBuf);

impl BodyFile {
    fn new(body: &str) -> Result<BodyFile, String> {
        let p =
            std::env::temp_dir().join(format!("cairn-github-{}.json", crate::domain::id::new_id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&p)
            .map_err(|e| format!("cannot write a request body in {}: {e}", p.display()))?;
        f.write_all(body.as_bytes())
            .map_err(|e| format!("cannot write a request body: {e}"))?;
        Ok(BodyFile(p))
    }
}

impl Drop for BodyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The environment curl keeps: where programs are, and the operator's proxy and CA
/// settings (a GitHub Enterprise behind a proxy or a private CA needs them).
const CURL_ENV: &[&str] = &[
    "PATH",
    "https_proxy",
    "HTTPS_PROXY",
    "http_proxy",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
];

/// A curl command reading no config file (`-q`, which must come first) and seeing
/// only [`CURL_ENV`] of the server's environment. Every curl process is made here.
pub fn curl_command() -> Command {
    let mut cmd = Command::new("curl");
    cmd.arg("-q").env_clear();
    for k in CURL_ENV {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    cmd
}

impl Http for Curl {
    fn send(
        &self,
        method: &str,
        url: &str,
        token: &str,
        body: Option<&str>,
    ) -> Result<Response, String> {
        let file = body.map(BodyFile::new).transpose()?;
        let mut cmd = curl_command();
        cmd.args([
            "--silent",
            "--show-error",
            "--proto",
            "=https,http",
            "--max-time",
        ])
        .arg(self.timeout.as_secs().max(1).to_string())
        .args(["--request", method])
        .args(["--header", "@-"])
        .args(["--header", "Accept: application/vnd.github+json"])
        .args(["--header", "X-GitHub-Api-Version: 2022-11-28"])
        .args(["--header", "User-Agent: cairn"])
        // No `Expect: 100-continue` round trip before a body.
        .args(["--header", "Expect:"])
        .args(["--write-out", "\n%{http_code}"]);
        if let Some(f) = &file {
            cmd.args([
                "--header",
                "Content-Type: application/json",
                "--data-binary",
            ])
            .arg(format!("@{}", f.0.display()));
        }
        cmd.arg("--url").arg(url);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "curl is not installed: GitHub pull requests need the curl command line (install it, e.g. apt-get install curl)"
                    .to_string()
            }
            _ => format!("cannot run curl: {e}"),
        })?;
        if let Some(mut w) = child.stdin.take() {
            // One short line; curl reads it before it connects.
            let header = format!("Authorization: Bearer {token}\n");
            w.write_all(header.as_bytes())
                .map_err(|e| format!("cannot pass the token to curl: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("curl failed: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "curl could not reach {}: {}",
                host_of(url),
                err.trim()
            ));
        }
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
        let status = code
            .trim()
            .parse()
            .map_err(|_| format!("curl gave no HTTP status for {}", host_of(url)))?;
        Ok(Response {
            status,
            body: body.to_string(),
        })
    }
}

/// The host (with its port) of an `https://` URL, lower-cased; `None` for any other
/// scheme, a URL with credentials (`user@`), no host, or a character outside the
/// printable ASCII a URL is made of.
pub fn https_host(url: &str) -> Option<String> {
    let rest = url
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))?;
    let rest = &url[rest.len()..];
    if !url.bytes().all(|b| b.is_ascii_graphic()) || url.contains(['"', '<', '>', '\\', '`']) {
        return None;
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || host.contains('@') || host.starts_with(':') {
        return None;
    }
    Some(host.to_ascii_lowercase())
}

/// Checks a pull request's URL as GitHub answered it: `https://` on the host of
/// `web` (the configured `github_web_url`). The error says why it is not kept.
pub fn check_pull_url(url: &str, web: &str) -> Result<(), String> {
    let want = https_host(web).unwrap_or_default();
    let shown: String = url
        .chars()
        .take(120)
        .collect::<String>()
        .escape_debug()
        .to_string();
    match https_host(url) {
        Some(h) if h == want => Ok(()),
        Some(h) => Err(format!(
            "GitHub answered the pull request URL '{shown}', on {h} rather than {want}; it was not kept"
        )),
        None => Err(format!(
            "GitHub answered the pull request URL '{shown}', which is not an https URL; it was not kept"
        )),
    }
}

fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    rest.split('/').next().unwrap_or(rest)
}

/// Percent-encodes a URL path, keeping `/` (branch names have them).
fn path_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether a GitHub owner or repository name is well formed (letters, digits, `-`,
/// `_`, `.`; what GitHub allows).
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// A pull request's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullState {
    Open,
    Merged,
    /// Closed without merging.
    Closed,
}

/// One repository on GitHub, through an [`Http`].
pub struct Repo<'a> {
    pub http: &'a dyn Http,
    /// The API's base URL, without a trailing slash.
    pub api: &'a str,
    pub owner: &'a str,
    pub name: &'a str,
    pub token: &'a str,
}

impl Repo<'_> {
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let url = format!("{}/repos/{}/{}/{}", self.api, self.owner, self.name, path);
        let text = body.map(|b| b.to_string());
        let r = self.http.send(method, &url, self.token, text.as_deref())?;
        let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        if !(200..300).contains(&r.status) {
            let why = v["message"].as_str().unwrap_or("no message");
            return Err(format!(
                "GitHub answered {} to {method} /repos/{}/{}/{path}: {why}",
                r.status, self.owner, self.name
            ));
        }
        Ok(v)
    }

    fn sha(v: &Value, what: &str) -> Result<String, String> {
        v["sha"]
            .as_str()
            .or_else(|| v["object"]["sha"].as_str())
            .map(str::to_string)
            .ok_or_else(|| format!("GitHub's answer to {what} has no sha"))
    }

    /// The commit a branch points at (`GET git/ref/heads/{branch}`).
    pub fn branch_sha(&self, branch: &str) -> Result<String, String> {
        let v = self.call(
            "GET",
            &format!("git/ref/heads/{}", path_escape(branch)),
            None,
        )?;
        Self::sha(&v, "the base ref")
    }

    /// The tree of a commit (`GET git/commits/{sha}`).
    pub fn commit_tree(&self, commit: &str) -> Result<String, String> {
        let v = self.call("GET", &format!("git/commits/{}", path_escape(commit)), None)?;
        v["tree"]["sha"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "GitHub's commit has no tree".to_string())
    }

    /// Stores a text as a blob (`POST git/blobs`).
    pub fn create_blob(&self, content: &str) -> Result<String, String> {
        let v = self.call(
            "POST",
            "git/blobs",
            Some(json!({"content": content, "encoding": "utf-8"})),
        )?;
        Self::sha(&v, "the blob")
    }

    /// A tree: `base_tree` with files (path, blob sha) written (`POST git/trees`);
    /// every path is checked as a local commit's are.
    pub fn create_tree(&self, base_tree: &str, files: &[(&str, &str)]) -> Result<String, String> {
        for (path, _) in files {
            crate::git::check_path(path)
                .map_err(|e| format!("the path '{}' {e}", path.escape_debug()))?;
        }
        let tree: Vec<Value> = files
            .iter()
            .map(|(path, sha)| json!({"path": path, "mode": "100644", "type": "blob", "sha": sha}))
            .collect();
        let v = self.call(
            "POST",
            "git/trees",
            Some(json!({"base_tree": base_tree, "tree": tree})),
        )?;
        Self::sha(&v, "the tree")
    }

    /// A commit of `tree` on `parent` (`POST git/commits`).
    pub fn create_commit(&self, message: &str, tree: &str, parent: &str) -> Result<String, String> {
        let v = self.call(
            "POST",
            "git/commits",
            Some(json!({"message": message, "tree": tree, "parents": [parent]})),
        )?;
        Self::sha(&v, "the commit")
    }

    /// A branch at `sha` (`POST git/refs`).
    pub fn create_branch(&self, branch: &str, sha: &str) -> Result<(), String> {
        self.call(
            "POST",
            "git/refs",
            Some(json!({"ref": format!("refs/heads/{branch}"), "sha": sha})),
        )?;
        Ok(())
    }

    /// A pull request from `head` into `base` (`POST pulls`): its number and URL.
    pub fn create_pull(
        &self,
        title: &str,
        head: &str,
        base: &str,
        body: &str,
    ) -> Result<(i64, String), String> {
        let v = self.call(
            "POST",
            "pulls",
            Some(json!({"title": title, "head": head, "base": base, "body": body})),
        )?;
        let number = v["number"]
            .as_i64()
            .ok_or_else(|| "GitHub's pull request has no number".to_string())?;
        Ok((
            number,
            v["html_url"].as_str().unwrap_or_default().to_string(),
        ))
    }

    /// A pull request's state (`GET pulls/{number}`).
    pub fn pull_state(&self, number: i64) -> Result<PullState, String> {
        let v = self.call("GET", &format!("pulls/{number}"), None)?;
        Ok(
            if v["merged"].as_bool() == Some(true) || v["merged_at"].is_string() {
                PullState::Merged
            } else if v["state"].as_str() == Some("closed") {
                PullState::Closed
            } else {
                PullState::Open
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_escaped_and_names_checked() {
        assert_eq!(
            path_escape("ontology/agent-1 x#?"),
            "ontology/agent-1%20x%23%3F"
        );
        assert!(valid_name("my-org.io") && valid_name("repo_1"));
        assert!(!valid_name("a/b") && !valid_name("..") && !valid_name("") && !valid_name("a b"));
        assert_eq!(host_of("http://127.0.0.1:9/repos/x"), "127.0.0.1:9");
    }

    #[test]
    fn pull_urls_are_kept_only_over_https_on_the_configured_host() {
        let web = "https://github.com";
        assert_eq!(
            check_pull_url("https://github.com/acme/onto/pull/7", web),
            Ok(())
        );
        assert_eq!(
            check_pull_url("HTTPS://GitHub.com/acme/onto/pull/7", web),
            Ok(())
        );
        assert_eq!(
            check_pull_url("https://ghe.corp:8443/a/b/pull/1", "https://GHE.corp:8443"),
            Ok(())
        );
        for bad in [
            "javascript:alert(1)",
            "http://github.com/acme/onto/pull/7",
            "https://evil.example/acme/onto/pull/7",
            "https://github.com@evil.example/x",
            "https://github.com.evil.example/x",
            "https://github.com:443/x",
            "https:///x",
            "https://github.com/a\nb",
            "https://github.com/a b",
            "https://github.com/\"onmouseover=alert(1)",
            "//github.com/x",
            "",
        ] {
            assert!(check_pull_url(bad, web).is_err(), "{bad:?}");
        }
        assert_eq!(https_host("https://github.com/"), Some("github.com".into()));
        assert_eq!(https_host("http://github.com"), None);
    }
}
