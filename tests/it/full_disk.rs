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

/// About `len` bytes of words that do not compress (PostgreSQL compresses long
/// values; a repeated phrase would never fill its disk), the same for the same seed.
fn words(seed: u64, len: usize) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = String::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for i in 0..(3 + x % 6) {
            out.push((b'a' + ((x >> (8 + 5 * i)) % 26) as u8) as char);
        }
        out.push(' ');
    }
    out
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
        let text = |len: usize| format!("{n} {}", words(n as u64, len));
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
    let project = w.project.clone();
    nothing_lost(&c, &project, &acked).await;
    // Full again, the server stops: closing its last connection cannot fold the
    // WAL into the file (that checkpoint fails for want of space) and leaves it to
    // the next start, which finds everything.
    fill_up(&mut w, &mut acked).await;
    c.stop().await;
    integrity_ok(&db).await;
    let c = Cairn::on(&db, &[]).await;
    nothing_lost(&c, &project, &acked).await;
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

/// The test database's name on the PostgreSQL server, from its URL.
fn pg_database(db: &Path) -> String {
    let url = crate::harness::db_arg(db).into_string().unwrap();
    let head = url.split('?').next().unwrap();
    head[head.rfind('/').unwrap() + 1..].to_string()
}

async fn pg_exec(c: &mut sqlx::AnyConnection, sql: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(c)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test]
async fn a_full_disk_under_postgres_is_recovered_without_a_restart() {
    use sqlx::Connection;
    let Some(base) = crate::harness::postgres() else {
        eprintln!("skipped on SQLite: a full disk under PostgreSQL's tables (the SQLite file's is tested above)");
        return;
    };
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    // Cairn creates and migrates the database on the server's own disk.
    crate::harness::cli_ok(&db, "list_tags", "{}");
    let mnt = dir.path().join("tiny");
    let Some(_fs) = Tmpfs::mount(&mnt, 8) else {
        eprintln!("a_full_disk_under_postgres_is_recovered_without_a_restart: cannot mount a tmpfs here; skipped");
        return;
    };
    eprintln!(
        "a_full_disk_under_postgres_is_recovered_without_a_restart: tables on an 8 MiB tmpfs"
    );
    // A tablespace there, owned by the server's user, takes the database's tables
    // and indexes (the system catalogs stay where they are).
    sqlx::any::install_default_drivers();
    let mut admin = sqlx::AnyConnection::connect(&base).await.unwrap();
    let data: String = sqlx::query_scalar("SELECT current_setting('data_directory')")
        .fetch_one(&mut admin)
        .await
        .unwrap();
    let owner = {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&data).unwrap();
        (m.uid(), m.gid())
    };
    let ts_dir = mnt.join("ts");
    std::fs::create_dir(&ts_dir).unwrap();
    std::os::unix::fs::chown(&ts_dir, Some(owner.0), Some(owner.1)).unwrap();
    let name = pg_database(&db);
    let ts = format!("ts_{}", &name[name.len() - 20..]);
    pg_exec(
        &mut admin,
        &format!("CREATE TABLESPACE {ts} LOCATION '{}'", ts_dir.display()),
    )
    .await;
    let mut own = crate::harness::sql(&db).await;
    pg_exec(
        &mut own,
        &format!("ALTER TABLE ALL IN TABLESPACE pg_default SET TABLESPACE {ts}"),
    )
    .await;
    pg_exec(
        &mut own,
        &format!("ALTER INDEX ALL IN TABLESPACE pg_default SET TABLESPACE {ts}"),
    )
    .await;
    drop(own);
    filler(&mnt.join("filler"), 1);

    // The body runs as a task of its own: whatever its outcome, the database and
    // its tablespace are dropped before the file system goes (PostgreSQL's
    // checkpoints would fail on the buffers of a vanished tablespace from then on).
    let (db2, spare) = (db.clone(), mnt.join("filler"));
    let body = tokio::spawn(async move {
        let c = Cairn::on(&db2, &[]).await;
        let mut acked = Acked::default();
        let mut w = Writer::new(&c).await;
        fill_up(&mut w, &mut acked).await;
        std::fs::remove_file(spare).unwrap();
        recovers(&mut w, &mut acked).await;
        nothing_lost(&c, &w.project.clone(), &acked).await;
        c.stop().await;
    })
    .await;
    pg_exec(
        &mut admin,
        &format!("DROP DATABASE \"{name}\" WITH (FORCE)"),
    )
    .await;
    pg_exec(&mut admin, &format!("DROP TABLESPACE {ts}")).await;
    if let Err(e) = body {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// PostgreSQL ends the backend of a write waiting inside its transaction (as an
/// administrator, a failover or a crash would): that call fails with an id, the
/// connection is not lent again, and the next calls succeed; so do they after
/// every idle connection of the pool was ended too.
#[tokio::test]
async fn a_backend_ended_under_an_open_transaction_leaves_the_pool_working() {
    use sqlx::Connection;
    if crate::harness::postgres().is_none() {
        eprintln!("skipped on SQLite: a PostgreSQL backend ended by the server");
        return;
    }
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let c = Cairn::on(&db, &[]).await;
    let p = c.project("Ended").await;
    let mut holder = crate::harness::sql(&db).await;
    let mut watcher = crate::harness::sql(&db).await;
    for round in 0..3 {
        // The write lock every write transaction takes first (see Store::write).
        let mut held = holder.begin().await.unwrap();
        sqlx::query("SELECT pg_advisory_xact_lock(426836062830)")
            .execute(&mut *held)
            .await
            .unwrap();
        let write = c.call(
            "manage_container",
            json!({"operation":"create","containerType":"task","projectId":p,"title":format!("lost {round}")}),
        );
        let end = async {
            loop {
                let ended: Vec<bool> = sqlx::query_scalar(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                      WHERE datname = current_database() AND pid <> pg_backend_pid() \
                        AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
                )
                .fetch_all(&mut watcher)
                .await
                .unwrap();
                if ended.contains(&true) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        };
        let (env, ()) = tokio::join!(write, end);
        assert_eq!(env["error"]["code"], "INTERNAL_ERROR", "{env:#}");
        assert!(env["error"]["details"]["errorId"].is_string(), "{env:#}");
        held.rollback().await.unwrap();
        for i in 0..5 {
            c.task(json!({"projectId":p,"title":format!("kept {round} {i}")}))
                .await;
        }
    }
    // Every connection of the pool ended while idle.
    let ended: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
          WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_all(&mut watcher)
    .await
    .unwrap();
    assert!(ended.contains(&true), "the server had no idle connection");
    c.task(json!({"projectId":p,"title":"after"})).await;
    let tasks = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":p,"limit":100}),
        )
        .await;
    let titles: Vec<&str> = tasks["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["title"].as_str())
        .collect();
    assert_eq!(titles.len(), 16, "{titles:?}");
    assert!(!titles.iter().any(|t| t.starts_with("lost")), "{titles:?}");
    c.stop().await;
}
