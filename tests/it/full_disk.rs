//! A full disk under the store, through MCP: writes answer `STORAGE_FULL` (never
//! `INTERNAL_ERROR`), reads go on, and once space is freed the next write on the same
//! server succeeds, with nothing acknowledged lost. Connections whose transaction
//! ended in an unknown state are closed by the store, not lent again; the PostgreSQL
//! tests kill a server backend under an open transaction and check the pool recovers.
//!
//! Which full disk runs: where the test may mount a file system (root, as in CI), a
//! real one: a small tmpfs holding the SQLite file and its WAL, or on PostgreSQL a
//! tablespace on a small tmpfs holding the test database's tables and indexes. Where
//! mounting is refused, SQLite's own limit (`max_db_mib`, SQLite's `max_page_count`)
//! stands in, and space is freed by deleting rows; each test prints which ran.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::{Cairn, TempDir};

/// A tmpfs of `mib` MiB mounted on `dir` (created), unmounted when dropped; `None`
/// when this process may not mount.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, mib: u32) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m,mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A file of `mib` MiB of zeros, the space a test frees later by deleting it.
fn filler(path: &Path, mib: usize) {
    std::fs::write(path, vec![0u8; mib << 20]).unwrap();
}

/// What the server acknowledged: the names of tasks, atoms and memory statements.
#[derive(Default)]
struct Acked {
    tasks: Vec<String>,
    atoms: Vec<String>,
    memories: Vec<String>,
}

/// The writes a test fills the disk with, in turn: a task with a long description,
/// a graph atom with long knowledge, a memory atom with a long statement. `big`
/// picks large texts (filling) or small ones (probing a full disk).
struct Writer<'a> {
    c: &'a Cairn,
    project: String,
    task: String,
    n: usize,
}

impl<'a> Writer<'a> {
    async fn new(c: &'a Cairn) -> Writer<'a> {
        let project = c.project("Full").await;
        let task = crate::harness::id_of(&c.task(json!({"title":"t","projectId":project})).await);
        Writer {
            c,
            project,
            task,
            n: 0,
        }
    }

    /// One write of kind `n % 3`: its envelope, recorded in `acked` when it succeeded.
    async fn write(&mut self, big: bool, acked: &mut Acked) -> Value {
        self.n += 1;
        let n = self.n;
        let text = |len: usize| format!("{n} {}", "lorem ipsum dolor ".repeat(len / 18));
        let (tool, args, name) = match n % 3 {
            0 => {
                let title = format!("task {n}");
                let args = json!({"operation":"create","containerType":"task","projectId":self.project,
                                  "title":title,"description":text(if big { 30_000 } else { 40 })});
                ("manage_container", args, title)
            }
            1 => {
                let name = format!("atom{n}");
                let args = json!({"operation":"create","entityType":"atom","projectId":self.project,
                                  "createdByTaskId":self.task,"name":name,"paths":format!("[\"src/m{n}/**\"]"),
                                  "knowledge":text(if big { 30_000 } else { 40 })});
                ("manage_graph", args, name)
            }
            _ => {
                let statement = text(if big { 4_000 } else { 40 });
                let args = json!({"operation":"remember","atom":{"type":"Fact","statement":statement,
                                  "predicate":format!("filler_{n}"),"value":"x","about":"Lib:filler",
                                  "factKind":"observed"},"sources":[]});
                ("manage_memory", args, statement)
            }
        };
        let env = self.c.call(tool, args).await;
        if env["success"] == json!(true) {
            match n % 3 {
                0 => acked.tasks.push(name),
                1 => acked.atoms.push(name),
                _ => acked.memories.push(name),
            }
        }
        env
    }
}

/// The error of a failed write, which must be `STORAGE_FULL`: an agent reads that
/// nothing was written and that space must be freed.
fn full(env: &Value) {
    assert_eq!(env["error"]["code"], "STORAGE_FULL", "{env:#}");
    assert_eq!(env["error"]["details"]["retryable"], json!(false), "{env}");
}

/// Fills the store until a write answers `STORAGE_FULL`, then probes the full store
/// with writes large and small: each succeeds or answers `STORAGE_FULL`, never
/// anything else (an `INTERNAL_ERROR` here was a connection lent again inside the
/// transaction a failed write left).
async fn fill_up(w: &mut Writer<'_>, acked: &mut Acked) {
    let mut filled = false;
    for _ in 0..5_000 {
        let env = w.write(true, acked).await;
        if env["success"] != json!(true) {
            full(&env);
            filled = true;
            break;
        }
    }
    assert!(filled, "the store never filled up");
    let mut refused = 0;
    for i in 0..30 {
        let env = w.write(i % 2 == 0, acked).await;
        if env["success"] != json!(true) {
            full(&env);
            refused += 1;
        }
    }
    assert!(refused > 0, "a full store took 30 more writes");
}

/// After space was freed: the next write of each kind succeeds at once, and more.
async fn recovers(w: &mut Writer<'_>, acked: &mut Acked) {
    for i in 0..9 {
        let env = w.write(i >= 3, acked).await;
        assert_eq!(
            env["success"],
            json!(true),
            "write {i} after freeing space: {env:#}"
        );
    }
}

/// Every acknowledged write is there.
async fn nothing_lost(c: &Cairn, project: &str, acked: &Acked) {
    eprintln!(
        "acknowledged: {} tasks, {} atoms, {} memory atoms",
        acked.tasks.len(),
        acked.atoms.len(),
        acked.memories.len()
    );
    let tasks = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":project,"limit":500}),
        )
        .await;
    let titles: Vec<&str> = tasks["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["title"].as_str())
        .collect();
    for t in &acked.tasks {
        assert!(
            titles.contains(&t.as_str()),
            "task {t} was acknowledged and is gone"
        );
    }
    let atoms = c
        .ok(
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":project,"limit":500}),
        )
        .await;
    assert_eq!(
        atoms["total"],
        json!(acked.atoms.len()),
        "acknowledged atoms: {atoms:#}"
    );
    let mem = c
        .ok(
            "query_memory",
            json!({"operation":"list","status":"DRAFT","about":"Lib:filler","limit":500}),
        )
        .await;
    let statements: Vec<&str> = mem["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["statement"].as_str())
        .collect();
    // A listing shortens long statements: each begins with its write's number.
    let head = |s: &str| s.split(' ').next().unwrap_or("").to_string();
    for m in &acked.memories {
        assert!(
            statements.iter().any(|s| head(s) == head(m)),
            "memory atom {} was acknowledged and is gone",
            &m[..20]
        );
    }
}

/// `PRAGMA integrity_check` of the SQLite file `db`, with no server on it.
async fn integrity_ok(db: &Path) {
    let mut c = crate::harness::sql(db).await;
    let rows: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(rows, ["ok"], "integrity_check");
}

#[tokio::test]
async fn a_full_disk_is_recovered_without_a_restart() {
    if !crate::harness::sqlite_only(
        "a full disk under the SQLite file (see the PostgreSQL test below)",
    ) {
        return;
    }
    let dir = TempDir::new();
    let mnt = dir.path().join("tiny");
    let Some(_fs) = Tmpfs::mount(&mnt, 6) else {
        eprintln!("a_full_disk_is_recovered_without_a_restart: cannot mount a tmpfs here; running on SQLite's max_page_count instead");
        return a_full_database_is_recovered_by_deleting_rows(&dir).await;
    };
    eprintln!("a_full_disk_is_recovered_without_a_restart: on a 6 MiB tmpfs");
    filler(&mnt.join("filler"), 1);
    let db = mnt.join("cairn.db");
    let c = Cairn::on(&db, &[]).await;
    let mut acked = Acked::default();
    let mut w = Writer::new(&c).await;
    fill_up(&mut w, &mut acked).await;
    std::fs::remove_file(mnt.join("filler")).unwrap();
    recovers(&mut w, &mut acked).await;
    nothing_lost(&c, &w.project.clone(), &acked).await;
    c.stop().await;
    integrity_ok(&db).await;
}

/// Where no file system can be mounted: SQLite's page limit, freed by deleting rows.
async fn a_full_database_is_recovered_by_deleting_rows(dir: &TempDir) {
    let db = dir.path().join("full.db");
    let cfg = dir.path().join("cairn.toml");
    std::fs::write(
        &cfg,
        format!("{}max_db_mib = 3\n", crate::harness::TEST_CONFIG),
    )
    .unwrap();
    let c = Cairn::on(&db, &["--config", &cfg.to_string_lossy()]).await;
    let mut acked = Acked::default();
    let mut w = Writer::new(&c).await;
    fill_up(&mut w, &mut acked).await;
    // Deleting a third of the atoms frees pages the next writes reuse.
    let gone: Vec<String> = acked.atoms.drain(..acked.atoms.len() / 3).collect();
    let listed = c
        .ok(
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":w.project,"limit":500}),
        )
        .await;
    for a in listed["items"].as_array().unwrap() {
        if gone.iter().any(|g| a["name"] == json!(g)) {
            c.ok(
                "manage_graph",
                json!({"operation":"delete","entityType":"atom","id":a["id"],"version":a["version"]}),
            )
            .await;
        }
    }
    recovers(&mut w, &mut acked).await;
    nothing_lost(&c, &w.project.clone(), &acked).await;
    c.stop().await;
    integrity_ok(&db).await;
}
