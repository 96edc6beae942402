//! HTML for the page: escaping, query strings, and the layout every view shares.
//!
//! Everything the page shows that came from the database (agent-written text, most
//! of it) goes through [`esc`] (text and quoted attribute values) or [`enc`] (URL
//! query values); nothing is written raw. Every link is made by [`link`], which
//! links only to this server's own paths and to `http(s)` URLs (a `javascript:` or
//! `data:` URL a row holds is shown as text, never as a link). The layout's one style sheet and one
//! script are inline, with the response's CSP nonce, so the page fetches nothing from
//! the network and runs no script but its own.

use std::fmt::Write as _;

use crate::service::agent::Agent;

/// Escapes text for an HTML text node or a double-quoted attribute value.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `href` may be a link's target: a path of this server (`/…`, not the
/// scheme-relative `//…`), this page's query or fragment (`?…`, `#…`), or an
/// `http://` or `https://` URL; all of it printable ASCII (a browser drops tabs and
/// line breaks from a URL, so `java\tscript:` would run).
pub fn safe_href(href: &str) -> bool {
    if !href.bytes().all(|b| b.is_ascii_graphic()) {
        return false;
    }
    let scheme = |p: &str| {
        href.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
    };
    match href.as_bytes() {
        [b'/', b'/' | b'\\', ..] => false,
        [b'/' | b'?' | b'#', ..] => true,
        _ => ["https://", "http://"]
            .iter()
            .any(|p| scheme(p) && href.len() > p.len() && !href[p.len()..].starts_with('/')),
    }
}

/// `<a href="href" attrs>inner</a>`, or `inner` alone when `href` is not a safe link
/// target ([`safe_href`]). `inner` is HTML its caller escaped; `attrs` is written as
/// given (` aria-current="page"`). Every link of the page is made here.
pub fn link_with(href: &str, attrs: &str, inner: &str) -> String {
    if safe_href(href) {
        format!("<a href=\"{}\"{attrs}>{inner}</a>", esc(href))
    } else {
        inner.to_string()
    }
}

/// [`link_with`] without attributes.
pub fn link(href: &str, inner: &str) -> String {
    link_with(href, "", inner)
}

/// Percent-encodes a URL query value (everything but unreserved characters).
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The pairs of a query string, `+` and percent escapes decoded (invalid UTF-8
/// replaced).
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first `n` characters of `s`, with an ellipsis when cut.
pub fn excerpt(s: &str, n: usize) -> String {
    let mut it = s.chars();
    let head: String = it.by_ref().take(n).collect();
    if it.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// One entry of the navigation: a view of a served toolset.
pub struct NavItem {
    pub label: &'static str,
    pub href: String,
    pub current: bool,
}

/// A whole page: `title`, the project's name and views in the header (when a project
/// is shown), and `body`.
pub fn layout(
    nonce: &str,
    title: &str,
    project: Option<(&str, &[NavItem])>,
    who: Option<&Agent>,
    body: &str,
) -> String {
    let mut nav = String::new();
    if let Some((name, items)) = project {
        let _ = write!(nav, "<span class=\"proj\">{}</span><nav>", esc(name));
        for i in items {
            let current = if i.current {
                " aria-current=\"page\""
            } else {
                ""
            };
            nav.push_str(&link_with(&i.href, current, &esc(i.label)));
        }
        nav.push_str("</nav>");
    }
    // Which named agent's token opened the page, so a person sees whose view it is.
    if let Some(a) = who {
        let _ = write!(
            nav,
            "<span class=\"who\" data-agent=\"{0}\">opened as {0} ({1})</span>",
            esc(&a.name),
            a.role
        );
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Cairn</title><style nonce=\"{nonce}\">{CSS}</style></head>\
         <body><header>{brand}{nav}</header>\
         <main>{body}</main><script nonce=\"{nonce}\">{JS}</script></body></html>\n",
        title = esc(title),
        brand = link_with("/", " class=\"brand\"", "Cairn"),
    )
}

/// "Previous / next" links for a paged list; `base` is the URL without `param`.
pub fn pager(base: &str, param: &str, offset: i64, limit: i64, shown: usize, total: i64) -> String {
    if total <= limit && offset == 0 {
        return String::new();
    }
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut s = format!(
        "<p class=\"pager\">{}–{} of {}",
        if shown == 0 { offset } else { offset + 1 },
        offset + shown as i64,
        total
    );
    if offset > 0 {
        let prev = (offset - limit).max(0);
        s.push(' ');
        s.push_str(&link(&format!("{base}{sep}{param}={prev}"), "previous"));
    }
    if offset + (shown as i64) < total {
        let next = offset + limit;
        s.push(' ');
        s.push_str(&link(&format!("{base}{sep}{param}={next}"), "next"));
    }
    s.push_str("</p>");
    s
}

const CSS: &str = r#"
:root{--fg:#1d2125;--mut:#626f86;--bd:#dcdfe4;--bg:#f7f8f9;--card:#fff;--acc:#0c66e4;--warn:#ae2e24;--ok:#216e4e;--next:#fff7d6}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;gap:1rem;align-items:center;padding:.6rem 1rem;background:#fff;border-bottom:1px solid var(--bd);flex-wrap:wrap}
header .brand{font-weight:700;color:var(--fg);text-decoration:none}header .proj{font-weight:600}header .who{margin-left:auto;color:var(--mut)}
nav a{margin-right:.8rem;color:var(--acc);text-decoration:none}nav a[aria-current]{font-weight:700;color:var(--fg);border-bottom:2px solid var(--acc)}
main{padding:1rem;max-width:1400px}h1{font-size:1.3rem;margin:.2rem 0 1rem}h2{font-size:1.05rem;margin:1.4rem 0 .5rem}
a{color:var(--acc)}code,pre,.glob{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid var(--bd);padding:.5rem;border-radius:4px;margin:.3rem 0}
.board{display:grid;grid-template-columns:repeat(auto-fit,minmax(210px,1fr));gap:.7rem;align-items:start}
.col{background:#eef0f3;border-radius:6px;padding:.5rem}.col h2{margin:.1rem 0 .5rem;font-size:.85rem;letter-spacing:.04em;color:var(--mut)}
.card{background:var(--card);border:1px solid var(--bd);border-radius:5px;padding:.45rem .55rem;margin:0 0 .45rem}
.card .t{font-weight:600;word-break:break-word}.card .m{color:var(--mut);font-size:12px}
.card.blocked{border-left:4px solid var(--warn)}.card.next{background:var(--next);border:2px solid #e2b203}
.badge{display:inline-block;font-size:11px;font-weight:600;padding:0 .35rem;border-radius:3px;margin-right:.3rem}
.b-blocked{background:#ffeceb;color:var(--warn)}.b-next{background:#e2b203;color:#000}.b-stale{background:#ffeceb;color:var(--warn)}.b-fresh{background:#dcfff1;color:var(--ok)}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid var(--bd);padding:.3rem .45rem;text-align:left;vertical-align:top}th{background:#f1f2f4;font-size:12px}
.glob{background:#f1f2f4;border-radius:3px;padding:0 .25rem;margin-right:.25rem;white-space:nowrap}
.mut{color:var(--mut)}.pager{color:var(--mut)}.pager a{margin-left:.5rem}.err{color:var(--warn);font-weight:600}
.box{background:#fff;border:1px solid var(--bd);border-radius:6px;padding:.7rem;margin:.5rem 0 1rem}.box>h2:first-child{margin-top:0}.section h3{margin:.6rem 0 .2rem;font-size:.95rem}dd{margin:0 0 .15rem 1rem}dt{font-weight:600;margin-top:.4rem}
textarea,input[type=text],select{font:inherit;padding:.3rem;border:1px solid var(--bd);border-radius:4px}textarea{width:100%;min-height:4.5rem}
button{font:inherit;padding:.3rem .8rem;border-radius:4px;border:1px solid var(--acc);background:var(--acc);color:#fff;cursor:pointer}
.tree ul{list-style:none;padding-left:1.1rem;margin:.1rem 0}.tree>ul{padding-left:0}.scope{font-size:11px;color:var(--mut);margin-right:.3rem}
.filter{margin:.2rem 0 .7rem;width:24rem;max-width:100%}.hidden{display:none}
.blockers{font-size:12px;margin-top:.25rem}.blockers .badge{margin-right:.2rem}
"#;

/// The page's one script: a filter over the cards and rows shown, and `/` to jump to
/// the first input.
const JS: &str = r#"
(function(){
  var f=document.getElementById('filter');
  if(f){f.addEventListener('input',function(){
    var q=f.value.toLowerCase();
    document.querySelectorAll('[data-filter]').forEach(function(el){
      el.classList.toggle('hidden', q!=='' && el.textContent.toLowerCase().indexOf(q)<0);
    });
  });}
  document.addEventListener('keydown',function(e){
    if(e.key==='/'&&!/INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName)){
      var i=document.querySelector('main input[type=text],main textarea');
      if(i){e.preventDefault();i.focus();}
    }
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn query_values_round_trip() {
        let v = "src/a b.rs\n&x=<y>é";
        let q = format!("paths={}&k", enc(v));
        assert_eq!(
            parse_query(&q),
            vec![("paths".into(), v.into()), ("k".into(), "".into())]
        );
        assert_eq!(parse_query("a=1+2%2"), vec![("a".into(), "1 2%2".into())]);
        assert_eq!(parse_query("a=%zz%4"), vec![("a".into(), "%zz%4".into())]);
    }

    #[test]
    fn links_go_only_to_this_server_and_to_http_urls() {
        for ok in [
            "/",
            "/p/x/ontology?iri=ai%3AA#class",
            "?poffset=50",
            "#atoms",
            "https://github.com/acme/onto/pull/7",
            "HTTP://example.com/x",
        ] {
            assert!(safe_href(ok), "{ok}");
            assert!(link(ok, "t").starts_with("<a href="), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:x",
            "//evil.example/x",
            "/\\evil.example",
            "https://",
            "https://a b",
            "",
            "pull/7",
        ] {
            assert!(!safe_href(bad), "{bad:?}");
            assert_eq!(link(bad, "pull request"), "pull request", "{bad:?}");
        }
        assert_eq!(
            link("/a?b=\"x\"", "t"),
            "<a href=\"/a?b=&quot;x&quot;\">t</a>"
        );
    }

    #[test]
    fn excerpts_cut_on_characters() {
        assert_eq!(excerpt("héllo", 2), "hé…");
        assert_eq!(excerpt("hé", 2), "hé");
    }
}
