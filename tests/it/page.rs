//! The page at `/` of `cairn serve --http`: read as raw HTML (escaping, paging, the
//! token and its cookie, the views per toolset), and in a real headless Chromium
//! driven over WebDriver (Debian's `chromium` and `chromium-driver`, installed by
//! `scripts/test.sh`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::code::{Code, Repo};
use crate::harness::{id_of, Cairn, HttpServer, TempDir, Transport};

pub(crate) const TOKEN: &str = "b7e4c1d9a2f64e0c8d3a5b9f1e7c2a6d";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// GET `url` with `headers`: status, headers, body.
pub(crate) async fn get(
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut r = client().get(url);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = r.send().await.expect("GET");
    let status = resp.status().as_u16();
    let h = resp.headers().clone();
    (status, h, resp.text().await.unwrap())
}

pub(crate) fn base(c: &Cairn) -> String {
    c.http.as_ref().expect("an HTTP server").base.clone()
}

#[tokio::test]
async fn agent_text_is_shown_as_text_and_blocked_tasks_name_their_blockers() {
    let c = Cairn::start_on(Transport::Http).await;
    let p = c.project("Shop <b>bold</b>").await;
    let f = c.feature(&p, "Checkout").await;
    let evil = "<script>document.title='owned'</script><img src=x onerror=alert(1)>";
    let bad = c
        .task(json!({"title":evil,"projectId":p,"featureId":f,"priority":"HIGH"}))
        .await;
    let blocker = c
        .task(json!({"title":"Write the \"payments\" adapter","projectId":p}))
        .await;
    let blocked = c
        .task(json!({"title":"Ship checkout","projectId":p,"featureId":f}))
        .await;
    c.ok("block", json!({"containerType":"task","id":id_of(&blocked),"version":1,"blockedBy":[id_of(&blocker)]})).await;
    let (status, h, html) = get(&format!("{}/p/{p}/board", base(&c)), &[]).await;
    assert_eq!(status, 200, "{html}");
    // One script on the page, ours, allowed by the CSP's nonce; agent text is text.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(html.contains("&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("Shop &lt;b&gt;bold&lt;/b&gt;"));
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'nonce-") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap();
    assert!(html.contains(&format!("<script nonce=\"{nonce}\">")));
    // The blocked card says by what; the next task (HIGH, unblocked) is marked.
    let card = html
        .split("<article")
        .find(|a| a.contains("Ship checkout"))
        .expect("the blocked card");
    assert!(
        card.contains("blocked") && card.contains("Write the &quot;payments&quot; adapter"),
        "{card}"
    );
    let next = html
        .split("<article")
        .find(|a| a.contains("class=\"card task next\""))
        .expect("a next card");
    assert!(next.contains("&lt;script&gt;document.title"), "{next}");
    let _ = bad;
    c.stop().await;
}

#[tokio::test]
async fn the_page_wants_the_token_and_keeps_it_in_a_cookie() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let tf = dir.path().join("token");
    std::fs::write(&tf, TOKEN).unwrap();
    let s = HttpServer::start(&db, &[], &["--token-file", tf.to_str().unwrap()], &[]).await;
    let (status, h, body) = get(&format!("{}/", s.base), &[]).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("/?token="), "{body}");
    assert!(h["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Bearer"));
    let (status, _, _) = get(&format!("{}/?token=not-the-token-at-all", s.base), &[]).await;
    assert_eq!(status, 401);
    let (status, h, _) = get(&format!("{}/?token={TOKEN}&offset=0", s.base), &[]).await;
    assert_eq!(status, 303);
    assert_eq!(
        h["location"].to_str().unwrap(),
        "/?offset=0",
        "the token leaves the address"
    );
    let cookie = h["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    let (status, _, html) = get(&format!("{}/", s.base), &[("cookie", pair)]).await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Projects</h1>"));
    // The cookie is not the token: the token is nowhere in it, the token as the
    // cookie's value opens nothing, and the cookie is no key to the tools.
    let value = pair.split_once('=').unwrap().1;
    assert!(!cookie.contains(TOKEN) && value.len() >= 32, "{cookie}");
    let (status, _, _) = get(
        &format!("{}/", s.base),
        &[("cookie", &format!("cairn_page={TOKEN}"))],
    )
    .await;
    assert_eq!(status, 401, "the token as the cookie");
    for (k, v) in [
        ("authorization", format!("Bearer {value}")),
        ("cookie", pair.to_string()),
    ] {
        let r = client()
            .post(format!("{}/mcp", s.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(k, v.as_str())
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401, "{k} on /mcp");
    }
    let (status, _, _) = get(
        &format!("{}/", s.base),
        &[("authorization", &format!("Bearer {TOKEN}"))],
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = get(
        &format!("{}/", s.base),
        &[("cookie", "cairn_token=b7e4c1d9a2f64e0c8d3a5b9f1e7c2a6e")],
    )
    .await;
    assert_eq!(status, 401);
    // Liveness needs no token; a write verb is not served on the page.
    let (status, _, _) = get(&format!("{}/health", s.base), &[]).await;
    assert_eq!(status, 200);
    let r = client()
        .post(format!("{}/", s.base))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    // The next start of the server (same token, same database) keys its cookie
    // anew: the old one opens nothing, a fresh visit gets another.
    drop(s);
    let s = HttpServer::start(&db, &[], &["--token-file", tf.to_str().unwrap()], &[]).await;
    let (status, _, _) = get(&format!("{}/", s.base), &[("cookie", pair)]).await;
    assert_eq!(status, 401, "a cookie from the previous start");
    let (status, h, _) = get(&format!("{}/?token={TOKEN}", s.base), &[]).await;
    assert_eq!(status, 303);
    let again = h["set-cookie"].to_str().unwrap().split(';').next().unwrap();
    assert_ne!(again, pair);
    let (status, _, _) = get(&format!("{}/", s.base), &[("cookie", again)]).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn views_follow_the_served_toolsets_and_lists_come_a_page_at_a_time() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let c = Cairn::on_via(Transport::Http, &db, &["--toolsets", "tasks"]).await;
    let p = c.project("Paged").await;
    for i in 0..60 {
        c.task(json!({"title":format!("task number {i:03}"),"projectId":p}))
            .await;
    }
    let b = base(&c);
    let (status, _, html) = get(&format!("{b}/p/{p}/board"), &[]).await;
    assert_eq!(status, 200);
    assert!(
        html.contains(">Board</a>")
            && !html.contains(">Knowledge</a>")
            && !html.contains(">Code</a>")
    );
    assert_eq!(
        html.matches("<article").count(),
        50,
        "a column shows one page"
    );
    assert!(
        html.contains("1–50 of 60") && html.contains("NEW=50"),
        "{html}"
    );
    let (_, _, html) = get(&format!("{b}/p/{p}/board?NEW=50"), &[]).await;
    assert_eq!(html.matches("<article").count(), 10);
    let (status, _, _) = get(&format!("{b}/p/{p}/knowledge"), &[]).await;
    assert_eq!(status, 404, "the graph toolset is not served");
    let (status, _, _) = get(&format!("{b}/p/not-an-id/board"), &[]).await;
    assert_eq!(status, 400);
    let (status, _, _) = get(
        &format!("{b}/p/0192f0c1-0000-7000-8000-000000000000/board"),
        &[],
    )
    .await;
    assert_eq!(status, 404);
    let (status, h, _) = get(&format!("{b}/p/{p}"), &[]).await;
    assert_eq!(status, 303);
    assert!(h["location"].to_str().unwrap().ends_with("/board"));
    c.stop().await;
}

/// A project's graph: a molecule of two atoms, and an atom in no molecule.
pub(crate) async fn knowledge_fixture(c: &Cairn, p: &str) {
    let t = id_of(
        &c.task(json!({"title":"Record what we learned","projectId":p}))
            .await,
    );
    let m = c
        .ok("manage_graph", json!({"operation":"create","entityType":"molecule","projectId":p,"name":"Payments","knowledge":"Money moves through the ledger only.","createdByTaskId":t}))
        .await["molecule"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":p,"moleculeId":m,"name":"API handlers","paths":["src/api/**/*.rs"],"knowledge":"Handlers validate <input> first; never trust the client.","createdByTaskId":t})).await;
    c.ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":p,"moleculeId":m,"name":"Ledger","paths":["src/ledger/*.rs","docs/ledger.md"],"knowledge":"Entries are append-only.","createdByTaskId":t})).await;
    c.ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":p,"name":"Build","paths":["Cargo.toml","build.rs"],"knowledge":"Release builds use thin LTO.","createdByTaskId":t})).await;
}

#[tokio::test]
async fn the_knowledge_view_answers_context_for_pasted_paths() {
    let c = Cairn::start_on(Transport::Http).await;
    let p = c.project("Graph").await;
    knowledge_fixture(&c, &p).await;
    let b = base(&c);
    let (status, _, html) = get(&format!("{b}/p/{p}/knowledge"), &[]).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("Payments") && html.contains("2 atoms"),
        "{html}"
    );
    assert!(html.contains("<span class=\"glob\">src/api/**/*.rs</span>"));
    let paths = "src/api/v1/orders.rs\nsrc/nowhere.txt";
    let url = format!(
        "{b}/p/{p}/knowledge?paths={}",
        paths.replace('/', "%2F").replace('\n', "%0A")
    );
    let (status, _, html) = get(&url, &[]).await;
    assert_eq!(status, 200);
    let answer = html
        .split("id=\"context-answer\"")
        .nth(1)
        .expect("a context answer");
    assert!(
        answer.contains("API handlers") && answer.contains("Handlers validate &lt;input&gt; first"),
        "{answer}"
    );
    assert!(
        answer.contains("Money moves through the ledger only."),
        "the molecule's knowledge: {answer}"
    );
    assert!(
        !answer
            .split("Matched by no atom")
            .next()
            .unwrap()
            .contains("Entries are append-only"),
        "{answer}"
    );
    assert!(
        answer.contains("Matched by no atom: <code>src/nowhere.txt</code>"),
        "{answer}"
    );
    // The orphans, a page of them.
    let (_, _, html) = get(&format!("{b}/p/{p}/knowledge?molecule=none"), &[]).await;
    let atoms = html.split("id=\"atoms\"").nth(1).unwrap();
    assert!(
        atoms.contains("Build") && !atoms.contains("Ledger"),
        "{atoms}"
    );
    c.stop().await;
}

#[tokio::test]
async fn the_code_view_shows_the_tree_and_analyzes_on_demand() {
    let repo = Repo::new();
    repo.write(
        "docs/design.md",
        "# Shop\n\nThe shop sells.\n\n## Pricing\n\nPrices are computed.\nTaxes apply.\nDone.\n",
    );
    repo.commit("init");
    let code = Code::bind(Cairn::start_on(Transport::Http).await, repo).await;
    let text = |a: i64, b: i64| json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":a,"endLine":b}]);
    let d = code.entity("Shop", "core", &[], text(1, 3)).await;
    code.entity("Pricing", "capability", &[&id_of(&d)], text(5, 8))
        .await;
    let b = base(&code.c);
    let pid = &code.pid;
    let (status, _, html) = get(&format!("{b}/p/{pid}/code"), &[]).await;
    assert_eq!(status, 200, "{html}");
    let tree = html.split("Entity tree").nth(1).unwrap();
    let (shop, pricing) = (
        tree.find(">Shop</a>").unwrap(),
        tree.find(">Pricing</a>").unwrap(),
    );
    assert!(shop < pricing, "Pricing sits under Shop: {tree}");
    let (_, _, html) = get(&format!("{b}/p/{pid}/code?analyze=docs%2Fdesign.md"), &[]).await;
    let a = html.split("id=\"analysis\"").nth(1).unwrap();
    assert_eq!(a.matches("b-fresh").count(), 2, "{a}");
    code.repo
        .splice("docs/design.md", 6, 1, &["Prices are computed twice."]);
    let (_, _, html) = get(&format!("{b}/p/{pid}/code?analyze=docs%2Fdesign.md"), &[]).await;
    let a = html.split("id=\"analysis\"").nth(1).unwrap();
    assert!(a.contains("b-stale") && a.contains("lines_changed"), "{a}");
    let (_, _, html) = get(&format!("{b}/p/{pid}/code?changes=1"), &[]).await;
    let ch = html.split("id=\"changes\"").nth(1).unwrap();
    assert!(ch.contains("docs/design.md"), "{ch}");
    code.c.stop().await;
}

#[tokio::test]
async fn the_ontology_view_lists_classes_explains_inferences_and_shows_open_proposals() {
    let repo = Repo::new();
    for (f, t) in crate::ontology::fixture_pages() {
        repo.write(&format!("pages/{f}"), &t);
    }
    repo.commit("the fixture ontology");
    let c = Cairn::start_on(Transport::Http).await;
    let p = c.project("Models").await;
    let b = base(&c);
    let (status, _, html) = get(&format!("{b}/p/{p}/ontology"), &[]).await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("No ontology repository") && html.contains(">Ontology</a>"),
        "{html}"
    );
    c.ok(
        "manage_ontology",
        json!({"projectId":p,"operation":"attach","repoPath":repo.root()}),
    )
    .await;
    c.ok("manage_ontology", json!({"projectId":p,"operation":"sync"}))
        .await;
    let (_, _, html) = get(&format!("{b}/p/{p}/ontology"), &[]).await;
    let classes = html.split("id=\"classes\"").nth(1).expect("the class list");
    assert_eq!(
        classes.matches("<tr data-filter class=\"class\">").count(),
        50,
        "a page of classes"
    );
    assert!(
        classes.contains("ai:AcceleratedModel") && classes.contains("offset=50"),
        "{classes}"
    );
    // The filter, then one class: Image Classifier is a Vision Model only by inference.
    let (_, _, html) = get(&format!("{b}/p/{p}/ontology?q=image"), &[]).await;
    let classes = html.split("id=\"classes\"").nth(1).unwrap();
    assert!(
        classes.contains("ai:ImageClassifier") && !classes.contains("ai:AcceleratedModel"),
        "{classes}"
    );
    // An alternative term finds its class, and the box keeps what was typed.
    let (_, _, html) = get(&format!("{b}/p/{p}/ontology?q=ViT"), &[]).await;
    let classes = html.split("id=\"classes\"").nth(1).unwrap();
    assert!(
        classes.contains("ai:VisionTransformer") && classes.contains("value=\"ViT\""),
        "{classes}"
    );
    let (_, _, html) = get(&format!("{b}/p/{p}/ontology?iri=ai%3AImageClassifier"), &[]).await;
    let class = html
        .split("id=\"class\"")
        .nth(1)
        .expect("the class")
        .split("</section>")
        .next()
        .unwrap();
    let inferred = class
        .split("<tr class=\"axiom inferred\">")
        .skip(1)
        .find(|r| r.contains("ai:VisionModel"))
        .unwrap_or_else(|| panic!("no inferred Vision Model parent: {class}"));
    assert!(inferred.contains("inferred from <code>"), "{inferred}");
    let (_, _, html) = get(&format!("{b}/p/{p}/ontology?iri=ai%3ANoSuchThing"), &[]).await;
    assert!(
        html.contains("class=\"err\""),
        "an unknown class is said so: {html}"
    );
    // A proposal waits for review with its branch.
    let mut swin = crate::ontology::swin();
    swin["projectId"] = json!(p);
    c.ok("ontology_propose", swin).await;
    let (_, _, html) = get(&format!("{b}/p/{p}/ontology"), &[]).await;
    let open = html.split("id=\"proposals\"").nth(1).unwrap();
    assert!(
        open.contains("<code>ontology/coder-") && open.contains("The task needs a class for Swin."),
        "{open}"
    );
    c.stop().await;
}

#[tokio::test]
async fn the_memory_view_shows_what_a_project_recalls_and_each_atoms_history() {
    let c = Cairn::start_on(Transport::Http).await;
    let p = c.project("Checkout").await;
    c.ok("manage_subject", json!({"operation":"create","subject":{"kind":"Project","name":"checkout","orchestratorProject":p}})).await;
    let remember = |value: &str, from: &str| {
        json!({"operation":"remember","now":"2025-10-01T00:00:00Z",
               "atom":{"type":"Assumption","statement":format!("Zod's latest <b>version</b> is {value}"),
                       "predicate":"latest_version","value":value,"about":"Lib:zod","confidence":0.7,
                       "validationMethod":"npm view zod version","validFrom":from},
               "sources":[{"refType":"release_notes","uri":format!("https://github.com/colinhacks/zod/releases/tag/v{value}")}]})
    };
    let old = c.ok("manage_memory", remember("4.2", "2025-09-01")).await;
    let new = c.ok("manage_memory", remember("4.3", "2025-09-20")).await;
    let (old_id, new_id) = (
        old["atom"]["id"].as_str().unwrap(),
        new["atom"]["id"].as_str().unwrap(),
    );
    let b = base(&c);
    let (status, _, html) = get(&format!("{b}/p/{p}/memory"), &[]).await;
    assert_eq!(status, 200, "{html}");
    let recalled = html.split("id=\"recall\"").nth(1).expect("the recall");
    assert!(
        recalled.contains("Zod&#39;s latest &lt;b&gt;version&lt;/b&gt; is 4.3"),
        "{recalled}"
    );
    assert!(
        !recalled.contains("is 4.2"),
        "a superseded atom only on request: {recalled}"
    );
    let (_, _, html) = get(&format!("{b}/p/{p}/memory?history=1"), &[]).await;
    assert!(
        html.split("id=\"recall\"")
            .nth(1)
            .unwrap()
            .contains("is 4.2"),
        "{html}"
    );
    let (_, _, html) = get(&format!("{b}/p/{p}/memory?atom={new_id}"), &[]).await;
    let atom = html
        .split("id=\"atom\"")
        .nth(1)
        .expect("the atom")
        .split("</section>")
        .next()
        .unwrap();
    let history = atom
        .split("class=\"history\"")
        .nth(1)
        .expect("a history chain");
    let (at_old, at_new) = (history.find(old_id).unwrap(), history.find(new_id).unwrap());
    assert!(at_old < at_new, "oldest first: {history}");
    assert!(
        history.contains("SUPERSEDED") && atom.contains("release_notes"),
        "{atom}"
    );
    let (_, _, html) = get(&format!("{b}/p/{p}/memory?atom=not-an-id"), &[]).await;
    assert!(html.contains("class=\"err\""), "{html}");
    c.stop().await;
}

// --- a real browser -------------------------------------------------------------

/// chromedriver on a free port, and one headless Chromium session through it.
pub(crate) struct Browser {
    driver: tokio::process::Child,
    url: String,
    session: String,
    http: reqwest::Client,
    _profile: TempDir,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    pub(crate) async fn start() -> Browser {
        let driver_bin = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .expect("chromedriver is missing: run scripts/test.sh, which installs Debian's chromium and chromium-driver");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = tokio::process::Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        for _ in 0..200 {
            if let Ok(r) = http.get(format!("{url}/status")).send().await {
                if r.json::<Value>()
                    .await
                    .map(|v| v["value"]["ready"] == json!(true))
                    .unwrap_or(false)
                {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = TempDir::new();
        let caps = json!({"capabilities":{"alwaysMatch":{
            "browserName":"chrome",
            "goog:chromeOptions":{"binary":"/usr/bin/chromium","args":[
                "--headless","--no-sandbox","--disable-gpu","--disable-quic","--no-first-run",
                "--disable-background-networking","--disable-component-update","--disable-sync",
                "--disable-dev-shm-usage","--window-size=1280,900","--hide-scrollbars",
                format!("--user-data-dir={}", profile.path().display())
            ]}
        }}});
        let v: Value = http
            .post(format!("{url}/session"))
            .json(&caps)
            .send()
            .await
            .expect("new session")
            .json()
            .await
            .unwrap();
        let session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {v}"))
            .to_string();
        Browser {
            driver,
            url,
            session,
            http,
            _profile: profile,
        }
    }

    pub(crate) async fn cmd(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let u = format!("{}/session/{}{path}", self.url, self.session);
        let mut r = self.http.request(method, u);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let v: Value = r.send().await.expect("WebDriver").json().await.unwrap();
        if v["value"].get("error").is_some() {
            panic!("WebDriver {path}: {v}");
        }
        v["value"].clone()
    }

    pub(crate) async fn go(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    pub(crate) async fn find(&self, css: &str) -> String {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using":"css selector","value":css})),
            )
            .await;
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    pub(crate) async fn text(&self, css: &str) -> String {
        let e = self.find(css).await;
        self.cmd(reqwest::Method::GET, &format!("/element/{e}/text"), None)
            .await
            .as_str()
            .unwrap()
            .to_string()
    }

    pub(crate) async fn title(&self) -> String {
        self.cmd(reqwest::Method::GET, "/title", None)
            .await
            .as_str()
            .unwrap()
            .to_string()
    }

    pub(crate) async fn current_url(&self) -> String {
        self.cmd(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap()
            .to_string()
    }

    pub(crate) async fn screenshot(&self) -> Vec<u8> {
        let b64 = self.cmd(reqwest::Method::GET, "/screenshot", None).await;
        base64_decode(b64.as_str().unwrap())
    }

    pub(crate) async fn quit(self) {
        let _ = self
            .http
            .delete(format!("{}/session/{}", self.url, self.session))
            .send()
            .await;
    }
}

impl Drop for Browser {
    /// Chromium outlives chromedriver when a test fails before `quit`: its processes
    /// are found by this session's own profile directory and stopped, and then the
    /// directory goes.
    fn drop(&mut self) {
        let _ = self.driver.start_kill();
        let marker = format!("--user-data-dir={}", self._profile.path().display());
        for _ in 0..3 {
            let mut any = false;
            for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
                let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                let ours = cmdline
                    .split(|b| *b == 0)
                    .any(|arg| arg == marker.as_bytes());
                if ours && pid != std::process::id() {
                    any = true;
                    let _ = std::process::Command::new("kill")
                        .args(["-9", &pid.to_string()])
                        .status();
                }
            }
            if !any {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let v: Vec<u32> = chunk.iter().map(|c| val(*c) as u32).collect();
        let n = v
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, x)| acc | (x << (18 - 6 * i)));
        out.push((n >> 16) as u8);
        if v.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if v.len() > 3 {
            out.push(n as u8);
        }
    }
    out
}

#[tokio::test]
async fn in_a_real_browser_the_board_shows_tasks_blockers_and_a_context_answer() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let tf = dir.path().join("token");
    std::fs::write(&tf, TOKEN).unwrap();
    let s = HttpServer::start(&db, &[], &["--token-file", tf.to_str().unwrap()], &[]).await;
    let c = s.client(Some(TOKEN)).await;
    let w = Cairn::from_client(c, &db);
    // A project a person would recognise.
    let p = w.project("Checkout service").await;
    let f1 = w.feature(&p, "Card payments").await;
    let f2 = w.feature(&p, "Order history").await;
    let adapter = w.task(json!({"title":"Payment provider adapter","projectId":p,"featureId":f1,"priority":"HIGH","complexity":5,"summary":"Wrap the provider's API behind one trait."})).await;
    let ship = w.task(json!({"title":"Ship card checkout behind a flag","projectId":p,"featureId":f1,"priority":"HIGH","complexity":3})).await;
    w.ok(
        "block",
        json!({"containerType":"task","id":id_of(&ship),"version":1,"blockedBy":[id_of(&adapter)]}),
    )
    .await;
    let retry = w.task(json!({"title":"Retry failed captures","projectId":p,"featureId":f1,"priority":"MEDIUM","complexity":4})).await;
    w.advance("task", &id_of(&retry)).await;
    let list = w.task(json!({"title":"List past orders <paged>","projectId":p,"featureId":f2,"priority":"MEDIUM","complexity":2})).await;
    let done = w.task(json!({"title":"Order table migration","projectId":p,"featureId":f2,"priority":"LOW","complexity":2})).await;
    w.advance("task", &id_of(&done)).await;
    w.advance("task", &id_of(&done)).await;
    w.task(json!({"title":"Receipt e-mails","projectId":p,"priority":"LOW","complexity":3}))
        .await;
    let _ = list;
    knowledge_fixture(&w, &p).await;

    let b = Browser::start().await;
    // Without the token the page says how to get in; /?token= sets the cookie once.
    b.go(&format!("{}/p/{p}/board", s.base)).await;
    assert!(b.text("body").await.contains("/?token="));
    b.go(&format!("{}/?token={TOKEN}", s.base)).await;
    assert!(
        !b.current_url().await.contains("token="),
        "the token left the address bar"
    );
    b.go(&format!("{}/p/{p}/board", s.base)).await;
    assert!(
        b.title().await.starts_with("Board — Checkout service"),
        "{}",
        b.title().await
    );
    let new_col = b.text("section.col[data-status=NEW]").await;
    assert!(new_col.contains("Payment provider adapter"), "{new_col}");
    assert!(
        new_col.contains("List past orders <paged>"),
        "escaped text reads as typed: {new_col}"
    );
    let blocked = b.text("article.blocked").await;
    assert!(
        blocked.contains("Ship card checkout behind a flag"),
        "{blocked}"
    );
    assert!(
        blocked.contains("Blocked") && blocked.contains("by Payment provider adapter"),
        "{blocked}"
    );
    let next = b.text("article.next").await;
    assert!(
        next.contains("Next") && next.contains("Payment provider adapter"),
        "{next}"
    );
    assert!(b
        .text("section.col[data-status=ACTIVE]")
        .await
        .contains("Retry failed captures"));
    let png = b.screenshot().await;
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/board.png");
    std::fs::write(&out, &png).unwrap();
    // The README's picture: written when asked (CAIRN_UPDATE_SCREENSHOT=1).
    if std::env::var_os("CAIRN_UPDATE_SCREENSHOT").is_some() {
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("board.png"), &png).unwrap();
    }

    // The context box: type paths, submit, read the answer.
    b.go(&format!("{}/p/{p}/knowledge", s.base)).await;
    let area = b.find("#paths").await;
    b.cmd(
        reqwest::Method::POST,
        &format!("/element/{area}/value"),
        Some(json!({"text":"src/api/v2/refunds.rs\ndocs/ledger.md"})),
    )
    .await;
    let button = b.find("#context-form button").await;
    b.cmd(
        reqwest::Method::POST,
        &format!("/element/{button}/click"),
        Some(json!({})),
    )
    .await;
    let mut answer = String::new();
    for _ in 0..100 {
        if b.current_url().await.contains("paths=") {
            answer = b.text("#context-answer").await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        answer.contains("API handlers") && answer.contains("Ledger"),
        "{answer}"
    );
    assert!(
        answer.contains("src/api/v2/refunds.rs matched by src/api/**/*.rs"),
        "{answer}"
    );
    assert!(
        answer.contains("Handlers validate <input> first"),
        "{answer}"
    );
    assert!(
        !answer.contains("Release builds use thin LTO"),
        "Build matched neither path: {answer}"
    );
    b.quit().await;
    w.stop().await;
    drop(s);
}

/// A reference whose lines moved (lines added above) is shown where its text is now,
/// on the entity and in the analysis, and fresh.
#[tokio::test]
async fn the_code_view_shows_moved_references_at_their_new_lines() {
    let repo = Repo::new();
    repo.write(
        "docs/design.md",
        "# Shop\n\nThe shop sells.\n\n## Pricing\n\nPrices are computed.\nTaxes apply.\nDone.\n",
    );
    repo.commit("init");
    let code = Code::bind(Cairn::start_on(Transport::Http).await, repo).await;
    let text = |a: i64, b: i64| json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":a,"endLine":b}]);
    let d = code.entity("Shop", "core", &[], text(1, 3)).await;
    let p = code
        .entity("Pricing", "capability", &[&id_of(&d)], text(5, 8))
        .await;
    code.repo
        .splice("docs/design.md", 4, 0, &["More intro.", "And more."]);
    let (b, pid) = (base(&code.c), &code.pid);
    let (_, _, html) = get(&format!("{b}/p/{pid}/code?entity={}", id_of(&p)), &[]).await;
    let e = html.split("id=\"entity\"").nth(1).unwrap();
    assert!(e.contains("<td>7–10</td>"), "{e}");
    let (_, _, html) = get(&format!("{b}/p/{pid}/code?analyze=docs%2Fdesign.md"), &[]).await;
    let a = html.split("id=\"analysis\"").nth(1).unwrap();
    assert!(!a.contains("b-stale"), "{a}");
    assert!(
        a.contains("<td>7–10</td>") && a.contains("moved from lines 5–8"),
        "{a}"
    );
    code.c.stop().await;
}
