//! Who may talk to the HTTP server: the bearer token (one, or the named agents of a
//! tokens file), the `Host` and `Origin` checks against DNS rebinding and cross-site
//! requests, and the page's cookie.
//!
//! The single token lives in memory only: read once from `--token-file` or
//! `$CAIRN_TOKEN`, compared in constant time, never logged, never written anywhere
//! (the database included), never sent back. A tokens file (`--tokens-file`,
//! [`super::tokens`]) holds only SHA-256 hashes: a presented token is hashed and
//! compared in constant time with every one, and the one it matches names the call's
//! agent. MCP clients send a token as `Authorization: Bearer …`. A browser that
//! visits `/?token=…` once gets an HttpOnly, SameSite=Strict cookie instead
//! ([`PageCookie`]): an HMAC-SHA256 of the token (of its hash, for a named one) under
//! a key drawn at each start, one cookie per token, so the cookie says which agent
//! opened the page, is not the token, opens the page only, and stops working when the
//! server restarts.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use http::HeaderMap;

use super::tokens::{self, NamedToken};
use crate::service::agent::Agent;

/// The page's cookie.
pub const COOKIE_NAME: &str = "cairn_page";

/// Shortest token accepted: a guessable token on a network port is no protection.
pub const MIN_TOKEN_LEN: usize = 16;

/// The shared secret. Its `Debug` prints no part of it.
#[derive(Clone)]
pub struct Token(Box<[u8]>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// Checks a token read from a file or the environment. It must be long enough and
    /// consist of characters that travel unchanged in a header and a cookie.
    pub fn new(raw: &str, source: &str) -> Result<Token, String> {
        let t = raw.trim();
        if t.len() < MIN_TOKEN_LEN {
            return Err(format!(
                "the token from {source} is {} characters long; use at least {MIN_TOKEN_LEN} \
                 (for example: openssl rand -hex 32)",
                t.len()
            ));
        }
        if let Some(bad) = t.chars().find(|c| !token_char(*c)) {
            let what = if bad.is_ascii_graphic() {
                format!("'{bad}'")
            } else {
                format!("U+{:04X}", bad as u32)
            };
            return Err(format!(
                "the token from {source} holds {what}; use letters, digits and - . _ ~ + / = only \
                 (for example: openssl rand -hex 32)"
            ));
        }
        Ok(Token(t.as_bytes().into()))
    }

    /// The token in `path`: its first line, surrounding whitespace removed.
    pub fn from_file(path: &Path) -> Result<Token, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
        let source = format!("the token file {}", path.display());
        let line = text.lines().next().unwrap_or("");
        let t = Token::new(line, &source)?;
        warn_if_readable_by_others(path);
        Ok(t)
    }

    /// Whether `given` is the token, in time that depends on the lengths only.
    pub fn matches(&self, given: &[u8]) -> bool {
        constant_time_eq(&self.0, given)
    }
}

/// The value of the page's cookie for one run of the server: HMAC-SHA256 of the
/// token under 32 random bytes drawn at start (and then forgotten), in hex. It
/// proves its holder once presented the token to this run, and is no token: it
/// cannot be turned back into one, `/mcp` never accepts it, and the next start
/// draws another key. Its `Debug` prints no part of it.
#[derive(Clone)]
pub struct PageCookie(String);

impl std::fmt::Debug for PageCookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageCookie(…)")
    }
}

impl PageCookie {
    /// The cookie for `token` under a fresh random key.
    pub fn new(token: &Token) -> Result<PageCookie, String> {
        PageCookie::keyed(&token.0, &fresh_key()?)
    }

    /// The cookie for `secret` (a token, or a named token's hash) under `key`.
    fn keyed(secret: &[u8], key: &[u8]) -> Result<PageCookie, String> {
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key)
            .map_err(|e| format!("cannot key the page's cookie: {e}"))?;
        mac.update(secret);
        let sum = mac.finalize().into_bytes();
        Ok(PageCookie(
            sum.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        ))
    }

    /// Whether `given` is this cookie, in time that depends on the lengths only.
    pub fn matches(&self, given: &[u8]) -> bool {
        constant_time_eq(self.0.as_bytes(), given)
    }

    /// The `Set-Cookie` value that hands the page its cookie.
    pub fn set_cookie(&self) -> String {
        format!(
            "{COOKIE_NAME}={}; HttpOnly; SameSite=Strict; Path=/",
            self.0
        )
    }
}

/// 32 random bytes: the key of one run's page cookies.
fn fresh_key() -> Result<[u8; 32], String> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)
        .map_err(|e| format!("cannot draw a random key for the page's cookie: {e}"))?;
    Ok(key)
}

/// Characters a token may hold: RFC 6750's `b64token` minus what a cookie value
/// cannot carry unquoted.
pub(super) fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/' | '=')
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path) {
        if m.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                file = %path.display(),
                "the token file can be read by other users; chmod 600 it"
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

/// Compares two byte strings without returning early on the first difference: the
/// time taken depends on the lengths alone, so a client cannot find the token a byte
/// at a time by timing the answers.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u64;
    let n = a.len().max(b.len());
    for i in 0..n {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= u64::from(x ^ y);
    }
    // Keeps the compiler from turning the loop into an early exit.
    std::hint::black_box(diff) == 0
}

/// Whether every address `addr` stands for is a loopback address.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v| v.is_loopback()),
    }
}

/// The tokens a server was started with.
#[derive(Debug, Clone)]
pub enum Secrets {
    /// One token (`--token-file`, `$CAIRN_TOKEN`): its calls have no agent.
    Single(Token),
    /// A tokens file's named agents.
    Named(Vec<NamedToken>),
}

/// What proves a key: the token itself, or its SHA-256.
#[derive(Clone)]
enum Proof {
    Token(Token),
    Hash([u8; 32]),
}

/// One token a server accepts: how it is proved, its page cookie, and the agent it
/// names (none for the single token). Its `Debug` prints the agent only.
#[derive(Clone)]
pub struct Key {
    proof: Proof,
    pub cookie: PageCookie,
    pub agent: Option<Arc<Agent>>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({:?})", self.agent)
    }
}

impl Key {
    fn new(proof: Proof, agent: Option<Arc<Agent>>, cookie_key: &[u8]) -> Result<Key, String> {
        let cookie = match &proof {
            Proof::Token(t) => PageCookie::keyed(&t.0, cookie_key)?,
            Proof::Hash(h) => PageCookie::keyed(h, cookie_key)?,
        };
        Ok(Key {
            proof,
            cookie,
            agent,
        })
    }

    /// Whether `bearer` (hashed once by the caller: `digest`) proves this key, in
    /// time that depends on the lengths only.
    fn proved_by(&self, bearer: &[u8], digest: &[u8; 32]) -> bool {
        match &self.proof {
            Proof::Token(t) => t.matches(bearer),
            Proof::Hash(h) => constant_time_eq(h, digest),
        }
    }
}

/// The keys `secrets` stand for, their cookies under one fresh key.
pub fn keys(secrets: Option<Secrets>) -> Result<Vec<Key>, String> {
    let cookie_key = fresh_key()?;
    match secrets {
        None => Ok(Vec::new()),
        Some(Secrets::Single(t)) => Ok(vec![Key::new(Proof::Token(t), None, &cookie_key)?]),
        Some(Secrets::Named(list)) => list
            .into_iter()
            .map(|n| Key::new(Proof::Hash(n.hash), Some(Arc::new(n.agent)), &cookie_key))
            .collect(),
    }
}

/// The access rules of one server.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The tokens accepted (none: no token is asked for).
    pub keys: Vec<Key>,
    /// Bound to a loopback address: `Host` must name the loopback, so a page of
    /// another site whose name was rebound to 127.0.0.1 is refused.
    pub loopback: bool,
    /// Origins allowed besides the server's own (`--allow-origin`), normalised.
    pub extra_origins: Vec<String>,
}

/// Why a request is refused, with its HTTP status.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 401: no token, or the wrong one.
    Unauthorized(&'static str),
    /// 403: a foreign `Origin`, or a `Host` that is not the loopback.
    Forbidden(String),
    /// 400: a `Host` header that cannot be read.
    BadRequest(&'static str),
}

/// How a request may prove it holds the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credentials {
    /// MCP: `Authorization: Bearer` only. A cookie is sent by a browser on its own
    /// accord, so it never authorises a tool call.
    BearerOnly,
    /// The page: the bearer header or the cookie.
    BearerOrCookie,
}

impl Policy {
    /// Whether a token is asked for.
    pub fn guarded(&self) -> bool {
        !self.keys.is_empty()
    }

    /// `Host` and `Origin` first (a refusal there is 403 whatever the token), then
    /// the token: the key it proved (none when no token is asked for).
    pub fn check(&self, headers: &HeaderMap, how: Credentials) -> Result<Option<&Key>, Refusal> {
        let host = headers
            .get(HOST)
            .map(|h| {
                h.to_str()
                    .map_err(|_| Refusal::BadRequest("the Host header is not text"))
            })
            .transpose()?
            .map(str::to_ascii_lowercase);
        if self.loopback {
            match host.as_deref() {
                Some(h) if loopback_host(h) => {}
                Some(h) => {
                    return Err(Refusal::Forbidden(format!(
                        "Host '{}' is not this server's loopback address (DNS rebinding?)",
                        clip(h)
                    )))
                }
                None => return Err(Refusal::BadRequest("a Host header is required")),
            }
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin
                .to_str()
                .map_err(|_| Refusal::Forbidden("the Origin header is not text".into()))?
                .trim()
                .to_ascii_lowercase();
            if !self.origin_allowed(&origin, host.as_deref()) {
                return Err(Refusal::Forbidden(format!(
                    "Origin '{}' is not this server's; requests from other sites are refused",
                    clip(&origin)
                )));
            }
        }
        if self.keys.is_empty() {
            return Ok(None);
        }
        let bearer = bearer(headers);
        let cookie = match how {
            Credentials::BearerOnly => None,
            Credentials::BearerOrCookie => cookie(headers, COOKIE_NAME),
        };
        if bearer.is_none() && cookie.is_none() {
            return Err(Refusal::Unauthorized("a token is required"));
        }
        let b = bearer.unwrap_or("").as_bytes();
        let digest = tokens::digest(b);
        // Every key is compared with both proofs, none skipped once one matched, so
        // the time taken tells neither which key nor which proof was right.
        let mut found = None;
        for (i, k) in self.keys.iter().enumerate() {
            let by_bearer = bearer.is_some() & k.proved_by(b, &digest);
            let by_cookie = cookie.is_some_and(|c| k.cookie.matches(c.as_bytes()));
            if (by_bearer | by_cookie) && found.is_none() {
                found = Some(i);
            }
        }
        match found {
            Some(i) => Ok(self.keys.get(i)),
            None => Err(Refusal::Unauthorized("the token is wrong")),
        }
    }

    /// The server's own origin (the scheme and the `Host` the request was sent to),
    /// or one named with `--allow-origin`. `null` (a sandboxed page, a file) never is.
    fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        if let Some(h) = host {
            if origin == format!("http://{h}") || origin == format!("https://{h}") {
                return true;
            }
        }
        self.extra_origins.iter().any(|o| o == origin)
    }
}

/// Normalises an origin named with `--allow-origin` (`scheme://host[:port]`).
pub fn parse_origin(raw: &str) -> Result<String, String> {
    let o = raw.trim().trim_end_matches('/').to_ascii_lowercase();
    let rest = o
        .strip_prefix("http://")
        .or_else(|| o.strip_prefix("https://"))
        .ok_or_else(|| format!("--allow-origin '{raw}' must start with http:// or https://"))?;
    if rest.is_empty() || rest.contains(['/', '?', '#', ' ', '@']) {
        return Err(format!(
            "--allow-origin '{raw}' must be scheme://host[:port], nothing after it"
        ));
    }
    Ok(o)
}

/// `localhost`, `127.x.x.x` or `[::1]`, with or without a port.
fn loopback_host(h: &str) -> bool {
    let name = if let Some(rest) = h.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, _)) => ip,
            None => return false,
        }
    } else {
        h.rsplit_once(':').map_or(h, |(n, _)| n)
    };
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(|ip| match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback(),
    })
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, rest) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// The value of cookie `name`, from any `Cookie` header.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim_matches('"'))
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn policy(token: Option<&str>, loopback: bool) -> Policy {
        let token = token.map(|t| Secrets::Single(Token::new(t, "test").unwrap()));
        Policy {
            keys: keys(token).unwrap(),
            loopback,
            extra_origins: vec!["http://tool.example:6274".into()],
        }
    }

    #[test]
    fn equal_only_when_every_byte_and_the_length_agree() {
        assert!(constant_time_eq(b"abcdef", b"abcdef"));
        assert!(!constant_time_eq(b"abcdef", b"abcdeg"));
        assert!(!constant_time_eq(b"abcdef", b"abcde"));
        assert!(!constant_time_eq(b"abc", b"abcdef"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn tokens_must_be_long_and_plain() {
        assert!(Token::new("short", "t").is_err());
        assert!(Token::new("0123456789abcdef0123", "t").is_ok());
        assert!(Token::new("0123456789abcdef;x=1", "t").is_err());
        assert!(Token::new("0123456789abcdef é", "t").is_err());
        // The message never repeats the token.
        let e = Token::new("secretsecretsecret;", "t").unwrap_err();
        assert!(!e.contains("secretsecret"), "{e}");
        assert_eq!(
            format!("{:?}", Token::new("0123456789abcdef", "t").unwrap()),
            "Token(…)"
        );
    }

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "127.1.2.3",
            "[::1]:9",
            "app.localhost:3",
        ] {
            assert!(loopback_host(h), "{h}");
        }
        for h in [
            "evil.example",
            "evil.example:80",
            "10.0.0.1:80",
            "[::2]:1",
            "localhost.evil.example",
        ] {
            assert!(!loopback_host(h), "{h}");
        }
    }

    #[test]
    fn host_origin_then_token() {
        let p = policy(Some("0123456789abcdef0123"), true);
        let ok = [
            ("host", "127.0.0.1:7"),
            ("authorization", "Bearer 0123456789abcdef0123"),
        ];
        assert!(p.check(&headers(&ok), Credentials::BearerOnly).is_ok());
        let no = [("host", "127.0.0.1:7")];
        assert!(matches!(
            p.check(&headers(&no), Credentials::BearerOnly),
            Err(Refusal::Unauthorized(_))
        ));
        let wrong = [
            ("host", "127.0.0.1:7"),
            ("authorization", "Bearer 0123456789abcdef0124"),
        ];
        assert!(matches!(
            p.check(&headers(&wrong), Credentials::BearerOnly),
            Err(Refusal::Unauthorized(_))
        ));
        let rebound = [
            ("host", "evil.example:7"),
            ("authorization", "Bearer 0123456789abcdef0123"),
        ];
        assert!(matches!(
            p.check(&headers(&rebound), Credentials::BearerOnly),
            Err(Refusal::Forbidden(_))
        ));
        let foreign = [
            ("host", "127.0.0.1:7"),
            ("origin", "http://evil.example"),
            ("authorization", "Bearer 0123456789abcdef0123"),
        ];
        assert!(matches!(
            p.check(&headers(&foreign), Credentials::BearerOnly),
            Err(Refusal::Forbidden(_))
        ));
        let own = [
            ("host", "127.0.0.1:7"),
            ("origin", "http://127.0.0.1:7"),
            ("authorization", "Bearer 0123456789abcdef0123"),
        ];
        assert!(p.check(&headers(&own), Credentials::BearerOnly).is_ok());
        let other_port = [
            ("host", "127.0.0.1:7"),
            ("origin", "http://127.0.0.1:8"),
            ("authorization", "Bearer 0123456789abcdef0123"),
        ];
        assert!(p
            .check(&headers(&other_port), Credentials::BearerOnly)
            .is_err());
        let allowed = [
            ("host", "127.0.0.1:7"),
            ("origin", "http://tool.example:6274"),
            ("authorization", "Bearer 0123456789abcdef0123"),
        ];
        assert!(p.check(&headers(&allowed), Credentials::BearerOnly).is_ok());
        let null = [("host", "127.0.0.1:7"), ("origin", "null")];
        assert!(matches!(
            p.check(&headers(&null), Credentials::BearerOnly),
            Err(Refusal::Forbidden(_))
        ));
    }

    #[test]
    fn the_cookie_opens_the_page_not_the_tools() {
        let p = policy(Some("0123456789abcdef0123"), false);
        let set = p.keys[0].cookie.set_cookie();
        let pair = set.split(';').next().unwrap();
        let value = pair.split_once('=').unwrap().1;
        assert!(!value.contains("0123456789abcdef0123"), "{set}");
        assert_eq!(value.len(), 64, "{set}");
        let c = [
            ("host", "team.example:80"),
            ("cookie", &format!("a=b; {pair}")),
        ];
        assert!(p.check(&headers(&c), Credentials::BearerOrCookie).is_ok());
        assert!(p.check(&headers(&c), Credentials::BearerOnly).is_err());
        // The token itself is no cookie, nor is the cookie a bearer token.
        for bad in [
            vec![("cookie", "cairn_page=0123456789abcdef0123")],
            vec![("cookie", "cairn_page=nope")],
            vec![("authorization", &format!("Bearer {value}"))],
        ] {
            let mut h = vec![("host", "team.example:80")];
            h.extend(bad.iter().map(|(k, v)| (*k, *v)));
            assert!(
                p.check(&headers(&h), Credentials::BearerOrCookie).is_err(),
                "{h:?}"
            );
        }
    }

    #[test]
    fn each_start_keys_the_cookie_anew() {
        let t = Token::new("0123456789abcdef0123", "test").unwrap();
        let (a, b) = (PageCookie::new(&t).unwrap(), PageCookie::new(&t).unwrap());
        assert_ne!(a.set_cookie(), b.set_cookie());
        assert!(!a.matches(b.0.as_bytes()));
        // HMAC-SHA256 as RFC 4231 computes it (test case 2: key "Jefe").
        assert_eq!(
            PageCookie::keyed(b"what do ya want for nothing?", b"Jefe")
                .unwrap()
                .0,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(format!("{a:?}"), "PageCookie(…)");
    }

    #[test]
    fn a_named_token_proves_its_agent_and_its_cookie_names_it_too() {
        use crate::service::agent::Role;
        let (ta, tb) = ("cairn_aaaaaaaaaaaaaaaaaaaa", "cairn_bbbbbbbbbbbbbbbbbbbb");
        let text = tokens::line("a", Role::Write, ta) + &tokens::line("b", Role::Read, tb);
        let p = Policy {
            keys: keys(Some(Secrets::Named(tokens::parse(&text, "t").unwrap()))).unwrap(),
            loopback: false,
            extra_origins: vec![],
        };
        let who = |h: &[(&'static str, &str)], how| {
            p.check(&headers(h), how).map(|k| {
                k.and_then(|k| k.agent.as_ref())
                    .map(|a| (a.name.to_string(), a.role))
            })
        };
        let bearer = format!("Bearer {tb}");
        assert_eq!(
            who(&[("authorization", &bearer)], Credentials::BearerOnly),
            Ok(Some(("b".into(), Role::Read)))
        );
        let set = p.keys[0].cookie.set_cookie();
        let pair = set.split(';').next().unwrap();
        assert_eq!(
            who(&[("cookie", pair)], Credentials::BearerOrCookie),
            Ok(Some(("a".into(), Role::Write)))
        );
        // The hash the file holds is no token.
        let hash = text
            .lines()
            .next()
            .unwrap()
            .split("sha256:")
            .nth(1)
            .unwrap();
        let hashed = format!("Bearer {hash}");
        assert!(who(&[("authorization", &hashed)], Credentials::BearerOnly).is_err());
        assert_eq!(
            format!("{:?}", p.keys[1]),
            "Key(Some(Agent { name: \"b\", role: Read }))"
        );
    }

    #[test]
    fn without_a_token_loopback_is_open() {
        let p = policy(None, true);
        assert!(matches!(
            p.check(
                &headers(&[("host", "localhost:1")]),
                Credentials::BearerOnly
            ),
            Ok(None)
        ));
    }

    #[test]
    fn origins_named_on_the_command_line() {
        assert_eq!(
            parse_origin("HTTP://Tool.Example:6274/").unwrap(),
            "http://tool.example:6274"
        );
        assert!(parse_origin("tool.example").is_err());
        assert!(parse_origin("http://a/b").is_err());
    }
}
