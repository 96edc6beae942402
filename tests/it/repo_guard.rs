//! What Cairn hands to git and curl, and what it keeps of GitHub's answers, against
//! hostile input: `pagesDir` values that would add index entries, proposal fields
//! that would smuggle properties or axioms into a page, a repository and a home
//! directory full of hooks and config that run programs, a `.curlrc`, a GitHub that
//! answers `javascript:` URLs. Every check is made through MCP (stdio and HTTP) and
//! then with git on the repository itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, TempDir, Transport};
use crate::ontology::{fixture_pages, swin, FakeGitHub};

/// The fixture ontology committed on `main`.
fn fixture_repo() -> Repo {
    let repo = Repo::new();
    for (f, t) in fixture_pages() {
        repo.write(&format!("pages/{f}"), &t);
    }
    repo.write("README.md", "The ontology.\n");
    repo.commit("the fixture ontology");
    repo
}

/// git on `repo` as the tests' own eye: no hook, no config but the repository's, no
/// fsmonitor, so looking changes nothing and runs nothing.
fn look(repo: &Repo, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(repo.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The proposal branches of `repo`.
fn proposal_branches(repo: &Repo) -> Vec<String> {
    look(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/heads/ontology/",
        ],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

struct Onto {
    c: Cairn,
    repo: Repo,
    project: String,
    _dir: TempDir,
}

impl Onto {
    /// A server over `t` (with `extra` arguments and `env`) on a fresh database, a
    /// project with `repo` attached and synced.
    async fn on(t: Transport, repo: Repo, extra: &[&str], env: &[(&str, &str)]) -> Onto {
        let dir = TempDir::new();
        let c = Cairn::on_via_env(t, &dir.path().join("cairn.db"), extra, env).await;
        let project = c.project("Ontology").await;
        c.ok(
            "manage_ontology",
            json!({"projectId": project, "operation": "attach", "repoPath": repo.root()}),
        )
        .await;
        let s = c
            .ok(
                "manage_ontology",
                json!({"projectId": project, "operation": "sync"}),
            )
            .await;
        assert_eq!(s["problemCount"], json!(0), "{s:#}");
        Onto {
            c,
            repo,
            project,
            _dir: dir,
        }
    }

    async fn call(&self, tool: &str, mut args: Value) -> Value {
        args["projectId"] = json!(self.project);
        self.c.call(tool, args).await
    }

    async fn ok(&self, tool: &str, mut args: Value) -> Value {
        args["projectId"] = json!(self.project);
        self.c.ok(tool, args).await
    }

    /// A call that must fail with VALIDATION_ERROR naming `parameter`.
    async fn refused(&self, tool: &str, mut args: Value, parameter: &str) -> Value {
        args["projectId"] = json!(self.project);
        let e = self.c.err(tool, args.clone(), "VALIDATION_ERROR").await;
        assert_eq!(
            e["details"]["parameter"],
            json!(parameter),
            "{tool} {args}: {e:#}"
        );
        e
    }
}

/// The id of the Domain category `core` an `init_project` answer seeded.
fn core_category(init: &Value) -> Value {
    init["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "core")
        .unwrap()["id"]
        .clone()
}

/// `swin()` with `field` set to `value`.
fn swin_with(field: &str, value: Value) -> Value {
    let mut p = swin();
    p[field] = value;
    p
}

// ---- Nothing reaches git plumbing unchecked ----

async fn hostile_pages_dirs_are_refused_and_a_commit_holds_exactly_its_page(t: Transport) {
    let repo = fixture_repo();
    let blob = look(&repo, &["rev-parse", "main:README.md"])
        .trim()
        .to_string();
    let dir = TempDir::new();
    let c = Cairn::on_via(t, &dir.path().join("cairn.db"), &[]).await;
    let project = c.project("Ontology").await;
    let hostile = [
        // What `update-index --index-info` would read as extra entries: a CI
        // workflow, an executable, a symbolic link.
        format!("pages\n100644 {blob}\t.github/workflows/evil.yml"),
        format!("pages\n100755 {blob}\tpages/run.sh"),
        format!("pages\r\n120000 {blob}\tpages/link.md"),
        "../outside".into(),
        "pages/../../outside".into(),
        ".git/hooks".into(),
        "pages/.GIT/config".into(),
        ".git".into(),
        "-x".into(),
        "--output=/tmp/x".into(),
        "pages\u{2028}x".into(),
        "pages\u{2029}x".into(),
        "pa\tges".into(),
        "pa\rges".into(),
        "pages\u{85}x".into(),
        "pages\0".into(),
        "/etc".into(),
    ];
    for bad in &hostile {
        let e = c
            .err(
                "manage_ontology",
                json!({"projectId": project, "operation": "attach", "repoPath": repo.root(), "pagesDir": bad}),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(
            e["details"]["parameter"],
            json!("pagesDir"),
            "{bad:?}: {e:#}"
        );
    }
    // Nothing was attached.
    c.err(
        "manage_ontology",
        json!({"projectId": project, "operation": "status"}),
        "INVALID_OPERATION",
    )
    .await;
    // Branch names go through git's own rules first.
    for bad in [
        "main..x", "-main", "ma in", "main\nx", "HEAD", "a/.b", "x.lock",
    ] {
        let e = c
            .err(
                "manage_ontology",
                json!({"projectId": project, "operation": "attach", "repoPath": repo.root(), "baseBranch": bad}),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], json!("baseBranch"), "{bad:?}");
    }
    c.ok(
        "manage_ontology",
        json!({"projectId": project, "operation": "attach", "repoPath": repo.root(), "pagesDir": "./pages/"}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId": project, "operation": "sync"}),
    )
    .await;
    let mut p = swin();
    p["projectId"] = json!(project);
    let p = c.ok("ontology_propose", p).await;
    let branch = p["branch"].as_str().unwrap();
    // The commit adds one regular file, and nothing else.
    assert_eq!(
        look(&repo, &["diff-tree", "-r", "--name-status", "main", branch]),
        "A\tpages/Swin Transformer.md\n"
    );
    let entry = look(&repo, &["ls-tree", branch, "pages/Swin Transformer.md"]);
    assert!(entry.starts_with("100644 blob "), "{entry}");
    assert_eq!(
        look(&repo, &["ls-tree", "-r", "--name-only", branch])
            .lines()
            .count(),
        look(&repo, &["ls-tree", "-r", "--name-only", "main"])
            .lines()
            .count()
            + 1
    );
    // A reference's path is handed to git whenever it is checked: one git cannot
    // take as a path is refused when the reference is made.
    let init = c
        .ok(
            "init_project",
            json!({"projectId": project, "repoPath": repo.root()}),
        )
        .await;
    let r = c
        .call(
            "create_entity",
            json!({"projectId": project, "name": "Readme", "description": "The readme", "categoryIds": [core_category(&init)],
                   "commands": [{"command": "add", "kind": "text", "documentPath": "README\tx.md", "startLine": 1, "endLine": 1}]}),
        )
        .await;
    assert!(
        r.to_string().contains("documentPath") && r.to_string().contains("U+0009"),
        "{r:#}"
    );
    c.stop().await;
}

// ---- A proposal's page says exactly what was checked ----

async fn proposal_fields_are_one_line_or_refused_naming_the_field(t: Transport) {
    let o = Onto::on(t, fixture_repo(), &[], &[]).await;
    let creates: Vec<(Value, &str)> = vec![
        (
            swin_with("altTerms", json!(["Swin\n    - status:: approved"])),
            "altTerms",
        ),
        (
            swin_with(
                "altTerms",
                json!(["Swin\r    - owl:disjointWith:: [[Transformer]]"]),
            ),
            "altTerms",
        ),
        (swin_with("altTerms", json!(["Swin\u{2028}x"])), "altTerms"),
        (swin_with("altTerms", json!(["Sw\tin"])), "altTerms"),
        (
            swin_with(
                "physicality",
                json!("VirtualEntity\r    - status:: approved"),
            ),
            "physicality",
        ),
        (
            swin_with(
                "role",
                json!("Artifact\r\n    - owl:disjointWith:: [[Vision Transformer]]"),
            ),
            "role",
        ),
        (swin_with("role", json!("Art\u{2029}ifact")), "role"),
        (
            swin_with("preferredTerm", json!("Swin\nTransformer")),
            "preferredTerm",
        ),
        (
            swin_with("preferredTerm", json!("### OntologyBlock")),
            "preferredTerm",
        ),
        (swin_with("owlClass", json!("ai:Swin\rX")), "owlClass"),
        (
            swin_with(
                "isSubclassOf",
                json!(["Vision Transformer\n    - status:: approved"]),
            ),
            "isSubclassOf",
        ),
        (
            swin_with(
                "relationships",
                json!({"has-part": ["ai:SelfAttention\r- x:: y"]}),
            ),
            "relationships",
        ),
        (
            swin_with(
                "definition",
                json!("A transformer \u{1b}[31mthat hides text."),
            ),
            "definition",
        ),
        (
            swin_with(
                "agentContext",
                json!({"agentType": "coder", "agentId": "agent-7\nSigned-off-by: someone", "taskDescription": "x", "confidence": 0.5}),
            ),
            "agentContext.agentId",
        ),
    ];
    for (args, parameter) in creates {
        o.refused("ontology_propose", args, parameter).await;
    }
    let amends: Vec<(Value, &str)> = vec![
        (
            json!({"altTerms": ["ViT\n    - status:: approved"]}),
            "altTerms",
        ),
        (
            json!({"altTerms": ["ViT\r    - owl:axiom:: ai:A SubClassOf ai:B"]}),
            "altTerms",
        ),
        (
            json!({"customFields": {"scope-note": "x\u{7}y"}}),
            "customFields",
        ),
        (json!({"customFields": {"note\r": "x"}}), "customFields"),
        (json!({"definition": "An image model\u{1b}."}), "definition"),
        (
            json!({"addRelationships": {"has-part": ["ai:Patch\nx"]}}),
            "addRelationships",
        ),
        (
            json!({"removeRelationships": {"is-subclass-of": ["Trans\rformer"]}}),
            "removeRelationships",
        ),
    ];
    for (mut args, parameter) in amends {
        args["operation"] = json!("amend");
        args["agentContext"] = swin()["agentContext"].clone();
        args["targetIri"] = json!("ai:VisionTransformer");
        o.refused("ontology_propose", args, parameter).await;
    }
    o.refused(
        "ontology_validate",
        json!({"axioms": [{"axiomType": "SubClassOf", "subject": "ai:Transformer\r    - owl:disjointWith:: ai:Transformer", "object": "ai:NeuralNetwork"}]}),
        "axioms[0].subject",
    )
    .await;
    assert!(
        proposal_branches(&o.repo).is_empty(),
        "a refused proposal made a branch"
    );
    // Prose is folded to one line; the term id is the first, none was used up.
    let p = o
        .ok(
            "ontology_propose",
            swin_with(
                "definition",
                json!("A hierarchical vision transformer\nthat computes\rself-attention\r\nwithin\u{2028}shifted windows."),
            ),
        )
        .await;
    assert_eq!(p["termId"], json!("AI-0031"));
    let page = look(
        &o.repo,
        &[
            "show",
            &format!(
                "{}:pages/Swin Transformer.md",
                p["branch"].as_str().unwrap()
            ),
        ],
    );
    assert!(
        page.contains(
            "    - definition:: A hierarchical vision transformer that computes self-attention within shifted windows.\n"
        ),
        "{page}"
    );
    assert!(!page.contains('\r') && !page.contains("approved"), "{page}");
    let a = o
        .ok(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": swin()["agentContext"], "targetIri": "ai:VisionTransformer",
                   "customFields": {"scope-note": "line one\nline two"}}),
        )
        .await;
    let page = look(
        &o.repo,
        &[
            "show",
            &format!(
                "{}:pages/Vision Transformer.md",
                a["branch"].as_str().unwrap()
            ),
        ],
    );
    assert!(
        page.contains("    - scope-note:: line one line two\n"),
        "{page}"
    );
    assert_eq!(proposal_branches(&o.repo).len(), 2);
    o.c.stop().await;
}

/// A page committed with lone CRs (and one mixing endings) reads as CommonMark reads
/// it: every CR ends a line, so the axiom after one is an axiom.
#[tokio::test]
async fn a_committed_page_with_lone_cr_lines_reads_as_commonmark_reads_it() {
    let repo = fixture_repo();
    repo.write(
        "pages/Carriage.md",
        "- Carriage\r  - ### OntologyBlock\r    - ontology:: true\r    - term-id:: AI-0900\r    - preferred-term:: Carriage\r    - source-domain:: ai\r    - status:: draft\r    - definition:: A page whose lines end with lone carriage returns.\r    - owl:class:: ai:Carriage\r    - is-subclass-of:: [[Transformer]]\r",
    );
    repo.write(
        "pages/Mixed.md",
        "- Mixed\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0901\n    - owl:class:: ai:Mixed\r    - is-subclass-of:: [[Vision Transformer]]\r\n    - definition:: A page mixing its line endings.\n",
    );
    repo.commit("pages with lone CRs");
    let o = Onto::on(Transport::Stdio, repo, &[], &[]).await;
    let rows = |d: Value| -> Vec<String> {
        d["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[0].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let q = |iri: &str| json!({"cypher": format!("MATCH ({{iri: '{iri}'}})-[:SUBCLASS_OF]->(p) WHERE NOT p.iri = '{iri}' RETURN p.iri ORDER BY p.iri")});
    let carriage = rows(o.ok("ontology_query", q("ai:Carriage")).await);
    assert!(
        carriage.contains(&"ai:Transformer".to_string()),
        "{carriage:?}"
    );
    let mixed = rows(o.ok("ontology_query", q("ai:Mixed")).await);
    assert!(
        mixed.contains(&"ai:VisionTransformer".to_string()),
        "{mixed:?}"
    );
    let n = o.ok("ontology_read", json!({"iri": "ai:Mixed"})).await;
    assert!(
        n.to_string().contains("A page mixing its line endings."),
        "{n:#}"
    );
    // An amendment of such a page writes it with one line ending, and it reads back.
    let a = o
        .ok(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": swin()["agentContext"], "targetIri": "ai:Carriage",
                   "altTerms": ["CR page"]}),
        )
        .await;
    let page = look(
        &o.repo,
        &[
            "show",
            &format!("{}:pages/Carriage.md", a["branch"].as_str().unwrap()),
        ],
    );
    assert!(!page.contains('\r'), "{page:?}");
    assert!(
        page.contains("    - is-subclass-of:: [[Transformer]]\n    - alt-terms:: CR page\n"),
        "{page}"
    );
    o.c.stop().await;
}

// ---- Processes leave the async workers and the write transaction ----

/// A `git` first on `PATH` that holds every `update-ref` (a proposal's branch) until
/// `go` exists in `dir`, after writing `waiting` there; then runs the real git. After
/// a minute it gives up waiting and writes `gave-up`.
fn gated_git(dir: &Path) -> PathBuf {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" update-ref \"*)\n  touch '{d}/waiting'\n  n=0\n  while [ ! -e '{d}/go' ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\n  [ -e '{d}/go' ] || touch '{d}/gave-up';;\nesac\nexec '{real}' \"$@\"\n",
        d = dir.display()
    );
    let git = bin.join("git");
    std::fs::write(&git, script).unwrap();
    make_executable(&git);
    bin
}

fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Polls until `p` exists (at most a minute).
async fn appears(p: &Path) {
    for _ in 0..3000 {
        if p.exists() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("{} never appeared", p.display());
}

async fn a_proposal_commits_while_other_calls_read_and_write(t: Transport) {
    let gate = TempDir::new();
    let bin = gated_git(gate.path());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // A write waiting for another's write lock gives up quickly, so a lock held
    // while git runs would fail the write below instead of passing late.
    let cfg = gate.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!("{}busy_timeout_ms = 300\n", crate::harness::TEST_CONFIG),
    )
    .unwrap();
    let o = Arc::new(
        Onto::on(
            t,
            fixture_repo(),
            &["--config", cfg.to_str().unwrap()],
            &[("PATH", &path)],
        )
        .await,
    );
    let proposing = {
        let o = o.clone();
        tokio::spawn(async move { o.ok("ontology_propose", swin()).await })
    };
    appears(&gate.path().join("waiting")).await;
    // The proposal's git is running (held at its update-ref): other calls are
    // answered, and a write gets the write lock.
    let d = o
        .ok("ontology_discover", json!({"query": "transformer"}))
        .await;
    assert!(!d["results"].as_array().unwrap().is_empty());
    let made =
        o.c.ok(
            "manage_container",
            json!({"operation": "create", "containerType": "project", "name": "Written meanwhile"}),
        )
        .await;
    assert!(made["project"]["id"].is_string(), "{made:#}");
    assert!(
        !gate.path().join("gave-up").exists(),
        "the calls were answered only once git stopped waiting"
    );
    std::fs::write(gate.path().join("go"), "").unwrap();
    let p = proposing.await.unwrap();
    assert_eq!(p["state"], json!("staged"));
    assert_eq!(proposal_branches(&o.repo).len(), 1);
}

/// A proposal whose row cannot be staged leaves no branch behind, and the next one
/// is staged with its branch (on either backend: the database refuses the row).
#[tokio::test]
async fn a_proposal_whose_row_is_refused_leaves_no_branch() {
    let o = Onto::on(Transport::Stdio, fixture_repo(), &[], &[]).await;
    let pg = crate::harness::postgres().is_some();
    let mut db = crate::harness::sql(&o.c.db).await;
    let refuse = if pg {
        "CREATE FUNCTION refuse_proposal() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql; \
         CREATE TRIGGER refuse_proposal BEFORE INSERT ON ontology_proposals FOR EACH ROW EXECUTE FUNCTION refuse_proposal();"
    } else {
        "CREATE TRIGGER refuse_proposal BEFORE INSERT ON ontology_proposals BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
    };
    sqlx::raw_sql(refuse).execute(&mut db).await.unwrap();
    let r = o.call("ontology_propose", swin()).await;
    assert_eq!(r["success"], json!(false), "{r:#}");
    assert!(
        proposal_branches(&o.repo).is_empty(),
        "the branch outlived its row"
    );
    sqlx::raw_sql("DROP TRIGGER refuse_proposal ON ontology_proposals")
        .execute(&mut db)
        .await
        .or(sqlx::raw_sql("DROP TRIGGER refuse_proposal")
            .execute(&mut db)
            .await)
        .unwrap();
    let p = o.ok("ontology_propose", swin()).await;
    // The refused proposal's term id stays used, as a rejected proposal's does.
    assert_eq!(p["termId"], json!("AI-0032"));
    let branches = proposal_branches(&o.repo);
    assert_eq!(
        branches,
        vec![format!("refs/heads/{}", p["branch"].as_str().unwrap())]
    );
    let list = o
        .ok("manage_ontology", json!({"operation": "proposals"}))
        .await;
    assert_eq!(list["total"], json!(1));
    o.c.stop().await;
}

// ---- No user hook and no user config runs ----

/// A program that records that it ran (and passes its input through).
fn spy(dir: &Path) -> String {
    let p = dir.join("spy");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}/ran'\ncat\n",
            dir.display()
        ),
    )
    .unwrap();
    make_executable(&p);
    p.display().to_string()
}

/// Every hook git knows, as copies of the spy, in `hooks`.
fn hooks(hooks: &Path, spy: &str) {
    std::fs::create_dir_all(hooks).unwrap();
    for h in [
        "reference-transaction",
        "post-index-change",
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "post-merge",
        "post-rewrite",
        "pre-auto-gc",
        "pre-push",
        "fsmonitor-watchman",
        "push-to-checkout",
        "pre-merge-commit",
    ] {
        let p = hooks.join(h);
        std::fs::copy(spy, &p).unwrap();
        make_executable(&p);
    }
}

async fn no_hook_and_no_user_config_runs(t: Transport) {
    let repo = fixture_repo();
    let marks = TempDir::new();
    let spy = spy(marks.path());
    // The repository: hooks in .git/hooks, config naming programs, attributes that
    // send every file through a filter and a textconv.
    hooks(&repo.path().join(".git/hooks"), &spy);
    for (k, v) in [
        ("core.fsmonitor", spy.clone()),
        ("diff.external", spy.clone()),
        ("filter.evil.clean", format!("{spy} clean")),
        ("filter.evil.smudge", format!("{spy} smudge")),
        ("diff.evil.textconv", spy.clone()),
        ("core.sshCommand", spy.clone()),
        ("core.pager", spy.clone()),
        ("core.askPass", spy.clone()),
        ("credential.helper", format!("!{spy}")),
        ("gpg.program", spy.clone()),
        ("commit.gpgSign", "true".into()),
        ("core.alternateRefsCommand", spy.clone()),
    ] {
        look(&repo, &["config", k, &v]);
    }
    std::fs::write(
        repo.path().join(".git/info/attributes"),
        "* filter=evil diff=evil\n",
    )
    .unwrap();
    // The server user's home: global config with its own hooks and monitor.
    let home = TempDir::new();
    hooks(&home.path().join("hooks"), &spy);
    std::fs::write(
        home.path().join(".gitconfig"),
        format!(
            "[core]\n\thooksPath = {}\n\tfsmonitor = {spy}\n\tpager = {spy}\n[diff]\n\texternal = {spy}\n",
            home.path().join("hooks").display()
        ),
    )
    .unwrap();
    let trace = marks.path().join("trace");
    let env = [
        ("HOME", home.path().to_str().unwrap().to_string()),
        // What the server's environment could tell git: none of it may reach it.
        ("GIT_DIR", "/nonexistent/.git".to_string()),
        (
            "GIT_INDEX_FILE",
            marks.path().join("index").display().to_string(),
        ),
        ("GIT_TRACE", trace.display().to_string()),
        ("GIT_CONFIG_COUNT", "1".into()),
        ("GIT_CONFIG_KEY_0", "core.hooksPath".into()),
        (
            "GIT_CONFIG_VALUE_0",
            home.path().join("hooks").display().to_string(),
        ),
        ("GIT_EXTERNAL_DIFF", spy.clone()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let o = Onto::on(t, repo, &[], &env).await;
    let p = o.ok("ontology_propose", swin()).await;
    o.ok(
        "ontology_propose",
        json!({"operation": "amend", "agentContext": swin()["agentContext"], "targetIri": "ai:VisionTransformer",
               "altTerms": ["Image Transformer"]}),
    )
    .await;
    o.ok("manage_ontology", json!({"operation": "status"}))
        .await;
    // The code toolset on the same repository: a reference, its staleness after an
    // edit, the changed files, the graph's checks.
    let init = o
        .ok("init_project", json!({"repoPath": o.repo.root()}))
        .await;
    let core = core_category(&init);
    o.ok(
        "create_entity",
        json!({"name": "Readme", "description": "The readme", "categoryIds": [core],
               "commands": [{"command": "add", "kind": "text", "documentPath": "README.md", "startLine": 1, "endLine": 1}]}),
    )
    .await;
    o.repo
        .write("README.md", "The ontology, edited.\nA second line.\n");
    let a = o
        .ok("analyze_document", json!({"documentPath": "README.md"}))
        .await;
    assert_eq!(
        a["tracked"][0]["staleReason"],
        json!("lines_changed"),
        "{a:#}"
    );
    let ch = o.ok("analyze_document", json!({})).await;
    assert_eq!(ch["files"].as_array().unwrap().len(), 1, "{ch:#}");
    o.ok("validate_graph", json!({})).await;
    o.ok("manage_ontology", json!({"operation": "sync"})).await;
    let ran = std::fs::read_to_string(marks.path().join("ran")).unwrap_or_default();
    assert!(ran.is_empty(), "user programs ran:\n{ran}");
    assert!(!trace.exists(), "GIT_TRACE reached git");
    // The commit is unsigned (gpg.program never ran) and made by Cairn.
    let commit = look(
        &o.repo,
        &["cat-file", "commit", p["branch"].as_str().unwrap()],
    );
    assert!(
        !commit.contains("gpgsig") && commit.contains("author Cairn (coder)"),
        "{commit}"
    );
    o.c.stop().await;
}

/// curl reads no `.curlrc` (which could add headers, or trace the token to a file).
#[tokio::test]
async fn curl_reads_no_user_config() {
    let gh = FakeGitHub::start();
    let home = TempDir::new();
    let trace = home.path().join("trace.txt");
    let rc = format!(
        "header = \"X-Curlrc: read\"\ntrace-ascii = \"{}\"\n",
        trace.display()
    );
    std::fs::write(home.path().join(".curlrc"), &rc).unwrap();
    std::fs::create_dir_all(home.path().join(".config")).unwrap();
    std::fs::write(home.path().join(".config/.curlrc"), &rc).unwrap();
    let cfg = home.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[ontology]\ngithub_api_url = \"{}\"\ngithub_token_env = \"CAIRN_TEST_GITHUB\"\n",
            gh.url
        ),
    )
    .unwrap();
    let h = home.path().to_str().unwrap();
    let keys = home.path().join("keys.log");
    let o = Onto::on(
        Transport::Stdio,
        fixture_repo(),
        &["--config", cfg.to_str().unwrap()],
        &[
            ("CAIRN_TEST_GITHUB", "ghp_curlrc-test"),
            ("HOME", h),
            ("CURL_HOME", h),
            ("XDG_CONFIG_HOME", &format!("{h}/.config")),
            ("SSLKEYLOGFILE", keys.to_str().unwrap()),
        ],
    )
    .await;
    let v = o
        .ok("manage_ontology", json!({"operation": "status"}))
        .await["version"]
        .clone();
    o.ok(
        "manage_ontology",
        json!({"operation": "attach", "repoPath": o.repo.root(), "githubOwner": "acme", "githubName": "onto", "version": v}),
    )
    .await;
    let p = o.ok("ontology_propose", swin()).await;
    assert_eq!(p["state"], json!("pushed"), "{p:#}");
    let reqs = gh.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 7);
    for (_, path, headers, _) in &reqs {
        assert!(!headers.contains_key("x-curlrc"), "{path}: {headers:?}");
        assert_eq!(
            headers.get("authorization").map(String::as_str),
            Some("Bearer ghp_curlrc-test")
        );
    }
    assert!(
        !trace.exists(),
        "curl traced the token to {}",
        trace.display()
    );
    assert!(!keys.exists());
    o.c.stop().await;
}

// ---- What GitHub answers is checked before it is kept or shown ----

async fn pull_request_urls_are_kept_only_over_https_on_the_configured_host(t: Transport) {
    let gh = FakeGitHub::start();
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "{}[ontology]\ngithub_api_url = \"{}\"\ngithub_token_env = \"CAIRN_TEST_GITHUB\"\n",
            crate::harness::TEST_CONFIG,
            gh.url
        ),
    )
    .unwrap();
    let o = Onto::on(
        t,
        fixture_repo(),
        &["--config", cfg.to_str().unwrap()],
        &[("CAIRN_TEST_GITHUB", "ghp_x")],
    )
    .await;
    let v = o
        .ok("manage_ontology", json!({"operation": "status"}))
        .await["version"]
        .clone();
    o.ok(
        "manage_ontology",
        json!({"operation": "attach", "repoPath": o.repo.root(), "githubOwner": "acme", "githubName": "onto", "version": v}),
    )
    .await;
    let cases = [
        ("javascript:alert(document.cookie)", "not an https URL"),
        ("http://evil.example/acme/onto/pull/7", "not an https URL"),
        (
            "https://evil.example/acme/onto/pull/7",
            "on evil.example rather than github.com",
        ),
        (
            "https://github.com@evil.example/acme/onto/pull/7",
            "not an https URL",
        ),
        (
            "https://github.com/acme/onto/pull/7\"><script>alert(1)</script>",
            "not an https URL",
        ),
    ];
    let terms = ["Swin A", "Swin B", "Swin C", "Swin D", "Swin E"];
    let mut ids = Vec::new();
    for ((url, why), term) in cases.iter().zip(terms) {
        *gh.pull_url.lock().unwrap() = url.to_string();
        let p = o
            .ok("ontology_propose", swin_with("preferredTerm", json!(term)))
            .await;
        assert_eq!(p["state"], json!("pushed"), "{p:#}");
        assert_eq!(p["pullRequest"], json!({"number": 7, "url": null}), "{url}");
        let e = p["pushError"].as_str().unwrap_or_default();
        assert!(e.contains(why), "{url}: {e}");
        ids.push(p["proposalId"].as_str().unwrap().to_string());
    }
    *gh.pull_url.lock().unwrap() = "https://github.com/acme/onto/pull/7".into();
    let good = o
        .ok(
            "ontology_propose",
            swin_with("preferredTerm", json!("Swin F")),
        )
        .await;
    assert_eq!(
        good["pullRequest"]["url"],
        json!("https://github.com/acme/onto/pull/7")
    );
    assert!(good.get("pushError").is_none_or(Value::is_null), "{good:#}");
    let listed = o
        .ok("manage_ontology", json!({"operation": "proposals"}))
        .await;
    let urls: Vec<&Value> = listed["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["pullRequest"]["url"])
        .collect();
    assert_eq!(
        urls.iter().filter(|u| u.is_string()).count(),
        1,
        "{listed:#}"
    );
    // The page: a URL an earlier Cairn kept unchecked is shown as text, never as a
    // link; an https one is a link.
    if let Some(http) = &o.c.http {
        let mut db = crate::harness::sql(&o.c.db).await;
        sqlx::query("UPDATE ontology_proposals SET pr_url = 'javascript:alert(1)' WHERE id = $1")
            .bind(&ids[0])
            .execute(&mut db)
            .await
            .unwrap();
        sqlx::query("UPDATE ontology_proposals SET pr_url = ' JAVASCRIPT:alert(2)' WHERE id = $1")
            .bind(&ids[1])
            .execute(&mut db)
            .await
            .unwrap();
        let html = reqwest::Client::new()
            .get(format!("{}/p/{}/ontology", http.base, o.project))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(html.contains("pull request javascript:alert(1)"), "{html}");
        let lower = html.to_lowercase();
        assert!(
            !lower.contains("href=\"javascript") && !lower.contains("href=\" javascript"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"https://github.com/acme/onto/pull/7\">pull request https://github.com/acme/onto/pull/7</a>"),
            "{html}"
        );
    }
    o.c.stop().await;
}

over_both_transports!(
    hostile_pages_dirs_are_refused_and_a_commit_holds_exactly_its_page,
    proposal_fields_are_one_line_or_refused_naming_the_field,
    a_proposal_commits_while_other_calls_read_and_write,
    no_hook_and_no_user_config_runs,
    pull_request_urls_are_kept_only_over_https_on_the_configured_host,
);
