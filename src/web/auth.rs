//! Who may talk to the HTTP server: the bearer token, the `Host` and `Origin` checks
//! against DNS rebinding and cross-site requests, and the page's cookie.
//!
//! The token lives in memory only: read once from `--token-file` or `$CAIRN_TOKEN`,
//! compared in constant time, never logged, never written anywhere (the database
//! included), never sent back. MCP clients send it as `Authorization: Bearer …`. A
//! browser that visits `/?token=…` once gets an HttpOnly, SameSite=Strict cookie
//! instead ([`PageCookie`]): an HMAC-SHA256 of the token under a key drawn at each
//! start, so a stolen cookie is not the token, opens the page only, and stops
//! working when the server restarts.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use http::HeaderMap;

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
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)
            .map_err(|e| format!("cannot draw a random key for the page's cookie: {e}"))?;
        PageCookie::keyed(token, &key)
    }

    fn keyed(token: &Token, key: &[u8]) -> Result<PageCookie, String> {
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key)
            .map_err(|e| format!("cannot key the page's cookie: {e}"))?;
        mac.update(&token.0);
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

/// Characters a token may hold: RFC 6750's `b64token` minus what a cookie value
/// cannot carry unquoted.
fn token_char(c: char) -> bool {
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

/// The access rules of one server.
#[derive(Debug, Clone)]
pub struct Policy {
    pub token: Option<Token>,
    /// The page's cookie, made from the token at start (none without a token).
    pub page_cookie: Option<PageCookie>,
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
    /// `Host` and `Origin` first (a refusal there is 403 whatever the token), then
    /// the token.
    pub fn check(&self, headers: &HeaderMap, how: Credentials) -> Result<(), Refusal> {
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
        let Some(token) = &self.token else {
            return Ok(());
        };
        let page = self.page_cookie.as_ref();
        let bearer = bearer(headers);
        let cookie = match how {
            Credentials::BearerOnly => None,
            Credentials::BearerOrCookie => cookie(headers, COOKIE_NAME),
        };
        match (bearer, cookie) {
            (None, None) => Err(Refusal::Unauthorized("a token is required")),
            (b, c) => {
                // Either proof will do; both are compared so that the time taken does
                // not tell which one was right.
                let by_bearer = b.is_some_and(|b| token.matches(b.as_bytes()));
                let by_cookie = c.is_some_and(|c| page.is_some_and(|p| p.matches(c.as_bytes())));
                if by_bearer | by_cookie {
                    Ok(())
                } else {
                    Err(Refusal::Unauthorized("the token is wrong"))
                }
            }
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
        let token = token.map(|t| Token::new(t, "test").unwrap());
        Policy {
            page_cookie: token.as_ref().map(|t| PageCookie::new(t).unwrap()),
            token,
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
        assert_eq!(p.check(&headers(&ok), Credentials::BearerOnly), Ok(()));
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
        assert_eq!(p.check(&headers(&own), Credentials::BearerOnly), Ok(()));
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
        assert_eq!(p.check(&headers(&allowed), Credentials::BearerOnly), Ok(()));
        let null = [("host", "127.0.0.1:7"), ("origin", "null")];
        assert!(matches!(
            p.check(&headers(&null), Credentials::BearerOnly),
            Err(Refusal::Forbidden(_))
        ));
    }

    #[test]
    fn the_cookie_opens_the_page_not_the_tools() {
        let p = policy(Some("0123456789abcdef0123"), false);
        let set = p.page_cookie.as_ref().unwrap().set_cookie();
        let pair = set.split(';').next().unwrap();
        let value = pair.split_once('=').unwrap().1;
        assert!(!value.contains("0123456789abcdef0123"), "{set}");
        assert_eq!(value.len(), 64, "{set}");
        let c = [
            ("host", "team.example:80"),
            ("cookie", &format!("a=b; {pair}")),
        ];
        assert_eq!(p.check(&headers(&c), Credentials::BearerOrCookie), Ok(()));
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
        let jefe = Token(b"what do ya want for nothing?".to_vec().into());
        assert_eq!(
            PageCookie::keyed(&jefe, b"Jefe").unwrap().0,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(format!("{a:?}"), "PageCookie(…)");
    }

    #[test]
    fn without_a_token_loopback_is_open() {
        let p = policy(None, true);
        assert_eq!(
            p.check(
                &headers(&[("host", "localhost:1")]),
                Credentials::BearerOnly
            ),
            Ok(())
        );
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
