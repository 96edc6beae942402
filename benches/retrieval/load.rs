//! Loads each held-out set into the toolset it fits, through the real binary over MCP
//! stdio (one fresh SQLite database per set, sequential calls), and measures every
//! search that set can be asked of: `search` in its three modes, `query_graph` search,
//! `query_container` search, `query_memory` recall; beside them the two single legs the
//! bench computes itself over the same texts (`corpus::Bm25`, and the model's cosine
//! over the very vectors the server stored).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use crate::client::{Server, BIN};
use crate::corpus::{cosine_rank, Bm25, Item, Scores, Set};

/// One measured leg: its label and its scores, and how many queries it answered with
/// no hit at all.
pub struct Leg {
    pub label: String,
    pub scores: Scores,
    pub empty: usize,
}

/// A set's results: its legs, and what loading and embedding it took.
pub struct Report {
    pub legs: Vec<Leg>,
    pub notes: Vec<String>,
}

/// The model and the database directory every set is measured with.
pub struct Env {
    pub model: PathBuf,
    pub dir: PathBuf,
    pub embedder: cairn::embed::minilm::MiniLm,
}

impl Env {
    /// A config file: no language server for `.py` (the code set's references give
    /// their lines), and no background embedding, so a set is embedded by `cairn
    /// reindex` once it is loaded, and a search never waits for vectors.
    fn config(&self) -> PathBuf {
        let p = self.dir.join("config.toml");
        std::fs::write(
            &p,
            "embed_wait_ms = 3600000\nembed_idle_ms = 3600000\n[lsp]\npy = \"\"\n",
        )
        .expect("config");
        p
    }

    pub fn server(&self, db: &Path) -> Server {
        let cfg = self.config();
        Server::start(
            db,
            &["--config", cfg.to_str().expect("UTF-8 path")],
            &[("CAIRN_MODEL_DIR", self.model.as_os_str())],
        )
    }

    /// `cairn reindex` on `db`: embeds every text still without a vector; answers a
    /// line for the report (texts, seconds, texts/s).
    pub fn reindex(&self, db: &Path) -> String {
        let cfg = self.config();
        let t = Instant::now();
        let out = Command::new(BIN)
            .arg("--db")
            .arg(db)
            .arg("--config")
            .arg(&cfg)
            .arg("reindex")
            .env("CAIRN_MODEL_DIR", &self.model)
            .env_remove("CAIRN_CONFIG")
            .output()
            .expect("run cairn reindex");
        let took = t.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cairn reindex failed: {text}");
        let n: f64 = text
            .split("reindex: ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        format!(
            "cairn reindex: {n:.0} texts in {took:.1} s ({:.0} texts/s, model load included)",
            n / took.max(1e-9)
        )
    }

    /// The vectors the server stored for `source`, by row id.
    pub fn stored_vectors(&self, db: &Path, source: &str) -> HashMap<String, Vec<f32>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let pool = sqlx::SqlitePool::connect_with(
                sqlx::sqlite::SqliteConnectOptions::new()
                    .filename(db)
                    .read_only(true),
            )
            .await
            .expect("open the bench database");
            let rows: Vec<(String, Vec<u8>)> =
                sqlx::query_as("SELECT row_id, vector FROM embeddings WHERE source = ?")
                    .bind(source)
                    .fetch_all(&pool)
                    .await
                    .expect("read vectors");
            pool.close().await;
            rows.into_iter()
                .filter_map(|(id, b)| cairn::embed::vector::from_blob(&b, 384).map(|v| (id, v)))
                .collect()
        })
    }

    fn embed(&self, q: &str) -> Vec<f32> {
        use cairn::embed::Embedder;
        self.embedder.embed_one(q).expect("embed a query").vector
    }

    /// The bench's own legs over `set`: BM25 over `lexical_text` of each item, and the
    /// model's cosine over the vectors the server stored for its rows (`rows`: our id
    /// to the server's row id).
    pub fn bench_legs(
        &self,
        set: &Set,
        lexical_text: &dyn Fn(&Item) -> String,
        vectors: &HashMap<String, Vec<f32>>,
        rows: &HashMap<String, String>,
    ) -> Vec<Leg> {
        let texts: Vec<String> = set.items.iter().map(lexical_text).collect();
        let bm = Bm25::new(texts.iter().map(String::as_str));
        let mut ids = Vec::new();
        let mut vecs = Vec::new();
        for it in &set.items {
            if let Some(v) = rows.get(&it.id).and_then(|r| vectors.get(r)) {
                ids.push(it.id.clone());
                vecs.push(v.clone());
            }
        }
        let mut lex = Leg::new("bench: BM25 alone (OR of words, no stemming)");
        let mut cos = Leg::new(&format!(
            "bench: the model's cosine alone ({} of {} stored vectors)",
            vecs.len(),
            set.items.len()
        ));
        let mut dump = Vec::new();
        for q in &set.queries {
            let scored = bm.rank_scored(&q.text, DUMP_POOL);
            let r: Vec<String> = scored
                .iter()
                .take(10)
                .map(|&(i, _)| set.items[i].id.clone())
                .collect();
            lex.add(q, r);
            let qv = self.embed(&q.text);
            let ranked = cosine_rank(&vecs, &qv, DUMP_POOL);
            let r: Vec<String> = ranked.iter().take(10).map(|&i| ids[i].clone()).collect();
            cos.add(q, r);
            if dump_dir().is_some() {
                // Every candidate of either list with both of its scores.
                let pos: HashMap<&str, usize> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (x.as_str(), i))
                    .collect();
                let mut cands: HashMap<String, (f64, f64)> = HashMap::new();
                let cos_of = |id: &str| {
                    pos.get(id).map_or(0.0, |&i| {
                        f64::from(vecs[i].iter().zip(&qv).map(|(a, b)| a * b).sum::<f32>())
                    })
                };
                for &(i, b) in &scored {
                    let id = &set.items[i].id;
                    cands.insert(id.clone(), (cos_of(id), b));
                }
                for &i in &ranked {
                    cands
                        .entry(ids[i].clone())
                        .or_insert_with(|| (cos_of(&ids[i]), 0.0));
                }
                let text_of: HashMap<&str, &String> = set
                    .items
                    .iter()
                    .zip(&texts)
                    .map(|(it, t)| (it.id.as_str(), t))
                    .collect();
                let cands: Vec<Value> = cands
                    .into_iter()
                    .map(|(id, (c, b))| {
                        let all = text_of
                            .get(id.as_str())
                            .is_some_and(|t| all_words(&q.text, t));
                        json!([id, c, b, false, all])
                    })
                    .collect();
                dump.push(json!({"kind":q.kind.label(),"text":q.text,"relevant":q.relevant,"cands":cands}));
            }
        }
        write_dump(&format!("bench {}", set.name), &dump);
        vec![lex, cos]
    }
}

impl Leg {
    pub fn new(label: &str) -> Leg {
        Leg {
            label: label.to_string(),
            scores: Scores::default(),
            empty: 0,
        }
    }

    pub fn add(&mut self, q: &crate::corpus::Query, ranked: Vec<String>) {
        if ranked.is_empty() {
            self.empty += 1;
        }
        self.scores.add(q, &ranked);
    }
}

/// How many candidates of each list the dump for choosing a fusion keeps (the
/// server fuses its best 100 of each).
const DUMP_POOL: usize = 100;

/// `$CAIRN_BENCH_DUMP`: a directory where each set's candidates with their cosine and
/// BM25 are written (one JSON line per query), to compare fusions offline.
fn dump_dir() -> Option<PathBuf> {
    std::env::var_os("CAIRN_BENCH_DUMP").map(PathBuf::from)
}

/// Whether `text` holds every word of `query` that the server's lexical side keeps
/// (its stop words dropped): the dump's guess at an AND match.
fn all_words(query: &str, text: &str) -> bool {
    let have: std::collections::HashSet<String> = crate::corpus::words(text).into_iter().collect();
    let toks = cairn::service::semantic::fts_tokens(query, false);
    !toks.is_empty()
        && toks
            .iter()
            .all(|t| crate::corpus::words(t).iter().all(|w| have.contains(w)))
}

fn write_dump(name: &str, lines: &[Value]) {
    let Some(d) = dump_dir() else { return };
    std::fs::create_dir_all(&d).expect("dump dir");
    let file: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(d.join(format!("{file}.jsonl")), text).expect("write the dump");
}

fn git(repo: &Path, args: &[&str]) {
    let st = Command::new("git")
        .current_dir(repo)
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
        ])
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("run git");
    assert!(st.success(), "git {args:?} failed");
}

/// The path of a code item's file: its module as directories, the rest of its name
/// as the file (`os.path.commonpath` → `os/path/commonpath.py`).
fn code_path(it: &Item) -> String {
    let rest = it
        .id
        .strip_prefix(&format!("{}.", it.group))
        .unwrap_or(&it.id);
    format!("{}/{rest}.py", it.group.replace('.', "/"))
}

/// The ids of the hits under `key`, in order; an answer without that list is a
/// mistake of the bench's, not an empty answer.
fn ids_of(answer: &Value, key: &str) -> Vec<String> {
    answer[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} list in {answer}"))
        .iter()
        .filter_map(|h| h["id"].as_str().map(str::to_string))
        .collect()
}

/// The code set as code entities: a git repository with one file per item (its
/// docstring under a stub), a Namespace entity per module and a Component or Unit per
/// item with a code reference to its file, searched with `search` in every mode.
pub fn code(env: &Env, set: &Set, limit: Option<usize>) -> Report {
    let items: Vec<&Item> = set.items.iter().take(limit.unwrap_or(usize::MAX)).collect();
    let repo = env.dir.join("code-repo");
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo).expect("repo dir");
    git(&repo, &["init", "-q"]);
    let mut lines_of: HashMap<String, usize> = HashMap::new();
    let mut modules: Vec<String> = items.iter().map(|i| i.group.clone()).collect();
    modules.sort();
    modules.dedup();
    for m in &modules {
        let p = repo.join(m.replace('.', "/")).join("__init__.py");
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("module dir");
        std::fs::write(&p, format!("# {m}\n")).expect("module file");
    }
    for it in &items {
        let short = it.id.rsplit('.').next().unwrap_or(&it.id);
        let head = if it.kind == "class" {
            format!("class {short}:")
        } else {
            format!("def {short}(*args, **kwargs):")
        };
        let body: String = it.text.lines().map(|l| format!("    {l}\n")).collect();
        let src = format!("{head}\n    \"\"\"\n{body}    \"\"\"\n");
        lines_of.insert(it.id.clone(), src.lines().count());
        let p = repo.join(code_path(it));
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("dir");
        std::fs::write(&p, src).expect("item file");
    }
    std::fs::write(
        repo.join("README.md"),
        "The Python standard library, one file per item.\n",
    )
    .expect("readme");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "corpus"]);

    let db = env.dir.join("code.db");
    let mut s = env.server(&db);
    let t = Instant::now();
    let d = s.call(
        "init_project",
        json!({"name":"stdlib","repoPath":repo.to_str().expect("UTF-8 path")}),
    );
    let pid = d["projectId"].as_str().expect("projectId").to_string();
    let cat = |n: &str| -> String {
        d["categories"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == n))
            .and_then(|c| c["id"].as_str())
            .unwrap_or_else(|| panic!("no category {n}"))
            .to_string()
    };
    let mut entity: HashMap<String, String> = HashMap::new();
    let create = |s: &mut Server,
                  name: &str,
                  cat: String,
                  parent: Option<&String>,
                  desc: &str,
                  path: String,
                  lines: usize| {
        let e = s.call(
            "create_entity",
            json!({"projectId":pid,"name":name,"description":desc,"categoryIds":[cat],
                   "parentIds":parent.into_iter().collect::<Vec<_>>(),
                   "commands":[{"command":"add","kind":"code","documentPath":path,
                                "startLine":1,"endLine":lines.max(1),"description":name}]}),
        );
        e["entity"]["id"].as_str().expect("entity id").to_string()
    };
    // Only a Domain stands alone: the modules hang under one.
    let domain = s.call(
        "create_entity",
        json!({"projectId":pid,"name":"Python standard library","description":"The standard library of CPython 3.11.",
               "categoryIds":[cat("core")],"commands":[{"command":"add","kind":"text","documentPath":"README.md",
               "startLine":1,"endLine":1,"description":"the library"}]}),
    )["entity"]["id"]
        .as_str()
        .expect("entity id")
        .to_string();
    for m in &modules {
        let id = create(
            &mut s,
            m,
            cat("module"),
            Some(&domain),
            &format!("The {m} module of the Python standard library."),
            format!("{}/__init__.py", m.replace('.', "/")),
            1,
        );
        entity.insert(m.clone(), id);
    }
    for it in &items {
        let parent_name = it
            .id
            .rsplit_once('.')
            .map(|x| x.0.to_string())
            .unwrap_or_default();
        let parent = entity
            .get(&parent_name)
            .or_else(|| entity.get(&it.group))
            .cloned();
        let c = match it.kind.as_str() {
            "class" => cat("class"),
            "method" => cat("method"),
            _ => cat("function"),
        };
        let id = create(
            &mut s,
            &it.id,
            c,
            parent.as_ref(),
            &it.text,
            code_path(it),
            lines_of[&it.id],
        );
        entity.insert(it.id.clone(), id);
    }
    let load = t.elapsed().as_secs_f64();
    drop(s);
    let mut notes = vec![format!(
        "loaded {} entities ({} modules) with create_entity in {load:.1} s",
        entity.len(),
        modules.len()
    )];
    notes.push(env.reindex(&db));

    let mut s = env.server(&db);
    let name_of: HashMap<&String, &String> = entity.iter().map(|(n, i)| (i, n)).collect();
    let mut legs = Vec::new();
    // The server's candidates per query, for the dump: name → (cosine, BM25, exact).
    let mut cands: Vec<HashMap<String, (f64, f64, bool)>> = vec![HashMap::new(); set.queries.len()];
    for (mode, floor) in [
        ("hybrid", None),
        ("lexical", None),
        ("vector", None),
        ("hybrid", Some(-1)),
        ("lexical", Some(-1)),
        ("vector", Some(-1)),
    ] {
        let label = match floor {
            None => format!("search mode: {mode}"),
            Some(_) => format!("search mode: {mode}, minScore -1"),
        };
        let mut leg = Leg::new(&label);
        // The single legs without a floor give the dump their best 100.
        let limit = if floor.is_some() && mode != "hybrid" && dump_dir().is_some() {
            100
        } else {
            10
        };
        for (qi, q) in set.queries.iter().enumerate() {
            let mut a = json!({"projectId":pid,"query":q.text,"target":"entities","limit":limit,"mode":mode});
            if let Some(f) = floor {
                a["minScore"] = json!(f);
            }
            let r = s.call("search", a);
            if floor.is_some() {
                for h in r["entities"].as_array().into_iter().flatten() {
                    let Some(n) = h["id"].as_str().and_then(|i| name_of.get(&i.to_string())) else {
                        continue;
                    };
                    let e = cands[qi].entry(n.to_string()).or_insert((0.0, 0.0, false));
                    e.0 = h["vectorScore"].as_f64().unwrap_or(0.0);
                    e.1 = e.1.max(h["lexicalScore"].as_f64().unwrap_or(0.0));
                    e.2 |= mode == "hybrid" && h["score"].as_f64() == Some(1.0);
                }
            }
            let ranked: Vec<String> = ids_of(&r, "entities")
                .iter()
                .filter_map(|i| name_of.get(i).map(|n| n.to_string()))
                .take(10)
                .collect();
            leg.add(q, ranked);
        }
        legs.push(leg);
    }
    let text_of: HashMap<&str, String> = set
        .items
        .iter()
        .map(|it| (it.id.as_str(), format!("{}\n{}", it.id, it.text)))
        .collect();
    let dump: Vec<Value> = set
        .queries
        .iter()
        .zip(&cands)
        .map(|(q, c)| {
            let c: Vec<Value> = c
                .iter()
                .map(|(n, (v, l, e))| {
                    let all = text_of
                        .get(n.as_str())
                        .is_some_and(|t| all_words(&q.text, t));
                    json!([n, v, l, e, all])
                })
                .collect();
            json!({"kind":q.kind.label(),"text":q.text,"relevant":q.relevant,"cands":c})
        })
        .collect();
    write_dump(&format!("server {}", set.name), &dump);
    drop(s);
    let vectors = env.stored_vectors(&db, "entity");
    let sub = Set {
        name: set.name,
        source: set.source.clone(),
        items: items.into_iter().cloned().collect(),
        queries: set.queries.clone(),
    };
    legs.extend(env.bench_legs(
        &sub,
        &|it: &Item| format!("{}\n{}", it.name, it.text),
        &vectors,
        &entity,
    ));
    Report { legs, notes }
}

/// The notes set as knowledge-graph atoms (name: the package; one glob; knowledge: its
/// description) searched with `query_graph` search, and the same notes as tasks (title:
/// the package, summary: the synopsis, description: the rest) searched with
/// `query_container` search.
pub fn notes(env: &Env, set: &Set) -> Report {
    let db = env.dir.join("notes.db");
    let mut s = env.server(&db);
    let t = Instant::now();
    let project = s.call(
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"Debian notes"}),
    )["project"]["id"]
        .as_str()
        .expect("project id")
        .to_string();
    let owner = s.call(
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"Bench owner"}),
    )["project"]["id"]
        .as_str()
        .expect("project id")
        .to_string();
    let task = s.call(
        "manage_container",
        json!({"operation":"create","containerType":"task","projectId":owner,"title":"Write the notes"}),
    )["task"]["id"]
        .as_str()
        .expect("task id")
        .to_string();
    let mut atom: HashMap<String, String> = HashMap::new();
    let mut task_of: HashMap<String, String> = HashMap::new();
    for it in &set.items {
        let a = s.call(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":project,"name":it.name,
                   "paths":[format!("debian/{}/**", it.name)],"knowledge":it.text,"createdByTaskId":task}),
        );
        atom.insert(
            it.id.clone(),
            a["atom"]["id"].as_str().expect("atom id").to_string(),
        );
        let (synopsis, rest) = it.text.split_once('\n').unwrap_or((&it.text, ""));
        let tk = s.call(
            "manage_container",
            json!({"operation":"create","containerType":"task","projectId":project,"title":it.name,
                   "summary":synopsis,"description":rest}),
        );
        task_of.insert(
            it.id.clone(),
            tk["task"]["id"].as_str().expect("task id").to_string(),
        );
    }
    let load = t.elapsed().as_secs_f64();
    drop(s);
    let mut notes = vec![format!(
        "loaded {} atoms and {} tasks in {load:.1} s",
        atom.len(),
        task_of.len()
    )];
    notes.push(env.reindex(&db));
    let mut s = env.server(&db);
    let by_atom: HashMap<&String, &String> = atom.iter().map(|(n, i)| (i, n)).collect();
    let by_task: HashMap<&String, &String> = task_of.iter().map(|(n, i)| (i, n)).collect();
    let mut g = Leg::new("query_graph search (atoms)");
    let mut tk = Leg::new("query_container search (tasks)");
    for q in &set.queries {
        let r = s.call(
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":project,"query":q.text,"limit":10,
                   "includeChangelog":false}),
        );
        let ranked = ids_of(&r, "items")
            .iter()
            .filter_map(|i| by_atom.get(i).map(|n| n.to_string()))
            .collect();
        g.add(q, ranked);
        let r = s.call(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":project,"query":q.text,"limit":10}),
        );
        let ranked = ids_of(&r, "items")
            .iter()
            .filter_map(|i| by_task.get(i).map(|n| n.to_string()))
            .collect();
        tk.add(q, ranked);
    }
    drop(s);
    let vectors = env.stored_vectors(&db, "atom");
    let mut legs = vec![g, tk];
    legs.extend(env.bench_legs(
        set,
        &|it: &Item| format!("{}\n{}", it.name, it.text),
        &vectors,
        &atom,
    ));
    Report { legs, notes }
}

/// An ISO 8601 instant `minutes` after 2025-03-10T09:00:00Z.
fn stamp(minutes: u64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(1_741_597_200 + minutes as i64 * 60)
        .expect("a time");
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A memory set as memory atoms: one Fact per item (reported, from a chat reference:
/// PROPOSED, all alike), scoped to one Project subject, `minutes` apart in time, then
/// each query through `query_memory` recall for that project.
pub fn memory(env: &Env, set: &Set, file: &str, minutes: u64) -> Report {
    let db = env.dir.join(file);
    let mut s = env.server(&db);
    let t = Instant::now();
    let subject = s.call(
        "manage_subject",
        json!({"operation":"create","subject":{"kind":"Project","name":"Bench memory"}}),
    )["subject"]["id"]
        .as_str()
        .expect("subject id")
        .to_string();
    let mut atom: HashMap<String, String> = HashMap::new();
    for (i, it) in set.items.iter().enumerate() {
        let a = s.call(
            "manage_memory",
            json!({"operation":"remember","now":stamp(i as u64 * minutes),
                   "atom":{"type":"Fact","factKind":"reported","statement":it.text,"context":subject},
                   "sources":[{"refType":"chat","title":format!("{} {}", set.name, it.id)}]}),
        );
        atom.insert(
            it.id.clone(),
            a["atom"]["id"].as_str().expect("atom id").to_string(),
        );
    }
    let load = t.elapsed().as_secs_f64();
    drop(s);
    let mut notes = vec![format!("remembered {} atoms in {load:.1} s", atom.len())];
    notes.push(env.reindex(&db));
    let mut s = env.server(&db);
    let now = stamp(set.items.len() as u64 * minutes + 60);
    let by_atom: HashMap<&String, &String> = atom.iter().map(|(n, i)| (i, n)).collect();
    let mut legs = Vec::new();
    // The product's recall also by half: the odd queries (1st, 3rd, …) are the ones a
    // ranking change may be tuned on, the even ones report it.
    let mut halves = [
        Leg::new("query_memory recall, odd queries (tuning)"),
        Leg::new("query_memory recall, even queries (held out)"),
    ];
    for floor in [None, Some(-1)] {
        let mut leg = Leg::new(match floor {
            None => "query_memory recall",
            Some(_) => "query_memory recall, minScore -1",
        });
        for (n, q) in set.queries.iter().enumerate() {
            let mut a = json!({"operation":"recall","projectId":subject,"query":q.text,"limit":10,"now":now});
            if let Some(f) = floor {
                a["minScore"] = json!(f);
            }
            let r = s.call("query_memory", a);
            let ranked: Vec<String> = ids_of(&r, "atoms")
                .iter()
                .filter_map(|i| by_atom.get(i).map(|n| n.to_string()))
                .collect();
            if floor.is_none() && std::env::var_os("XDBG").is_some() {
                let pos: Vec<String> = q
                    .relevant
                    .iter()
                    .map(|r| format!("{r}@{:?}", ranked.iter().position(|x| x == r)))
                    .collect();
                eprintln!("Q{n} {} :: {}", q.text, pos.join(" "));
            }
            if floor.is_none() {
                halves[n % 2].add(q, ranked.clone());
            }
            leg.add(q, ranked);
        }
        legs.push(leg);
    }
    legs.extend(halves);
    drop(s);
    let vectors = env.stored_vectors(&db, "memory_atom");
    legs.extend(env.bench_legs(set, &|it: &Item| it.text.clone(), &vectors, &atom));
    Report { legs, notes }
}

/// Embedding throughput through the server: `n` statements remembered on a fresh
/// database (no background embedding), then one recall with a query, which embeds
/// them all before it answers (the model loaded beforehand by a first recall).
/// Answers (texts/s, seconds).
pub fn throughput(env: &Env, statements: &[String]) -> (f64, f64) {
    let db = env.dir.join(format!("throughput-{}.db", statements.len()));
    let mut s = env.server(&db);
    s.call(
        "query_memory",
        json!({"operation":"recall","query":"load the model"}),
    );
    let calls: Vec<Value> = statements
        .iter()
        .map(|t| {
            json!({"operation":"remember","atom":{"type":"Fact","factKind":"observed","statement":t},
                   "sources":[{"refType":"chat","title":"throughput"}]})
        })
        .collect();
    s.call_pipelined("manage_memory", calls, 8);
    let t = Instant::now();
    let r = s.call(
        "query_memory",
        json!({"operation":"recall","query":"what is known","limit":1}),
    );
    let took = t.elapsed().as_secs_f64();
    assert_eq!(
        r["notEmbedded"].as_u64().unwrap_or(0),
        0,
        "the recall answered before every statement had a vector: {r}"
    );
    drop(s);
    let _ = std::fs::remove_file(&db);
    (statements.len() as f64 / took.max(1e-9), took)
}

/// `$CAIRN_MODEL_DIR`, else `target/test-model`.
pub fn model_dir() -> PathBuf {
    std::env::var_os("CAIRN_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(crate::corpus::MANIFEST).join("target/test-model"))
}
