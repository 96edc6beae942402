//! Benchmark of the memory's pure core: a curator pass over 100,000 atoms (the first
//! one with work to do, then one over the settled memory), replaying the plan, ranking
//! 100,000 recall candidates, deriving usage facts, and deciding new atoms against
//! their key. The store's part (loading rows, writing actions) is not measured here.
//! Prints a table.
//!
//!     cargo bench --bench memory

use std::hint::black_box;
use std::time::{Duration, Instant};

use cairn::domain::memory as mem;

use mem::claim::{ClaimKey, Predicate};
use mem::collision::{on_new, Contender};
use mem::curator::{apply, plan, summary, Snapshot};
use mem::evidence::Strength;
use mem::model::*;
use mem::recall::{rank, usage_facts, Asker, Candidate, RecallQuery};
use time::OffsetDateTime;

const ATOMS: usize = 100_000;
const SUBJECTS: usize = 2_000;
const REFERENCES: usize = 10_000;

/// The tests' and benches' one seeded generator: the same data every run.
fn seeded(seed: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed)
}

fn day(n: usize) -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000 + n as i64)
}

fn details(t: MemoryAtomType) -> AtomDetails {
    match t {
        MemoryAtomType::Assumption => AtomDetails::Assumption(AssumptionFields {
            validation_method: "check the registry".into(),
            risk_if_wrong: None,
            owner: None,
            deadline: None,
        }),
        MemoryAtomType::Rule => AtomDetails::Rule(RuleFields {
            severity: Severity::Should,
            enforcement: None,
            exceptions: None,
            owner: None,
        }),
        MemoryAtomType::BestPractice => AtomDetails::BestPractice(BestPracticeFields {
            goal: "fewer bugs".into(),
            applicability: None,
            tradeoffs: None,
            evidence_quality: None,
        }),
        _ => AtomDetails::Fact(FactFields {
            fact_kind: FactKind::Observed,
            observed_count: None,
            first_observed_at: None,
            last_observed_at: None,
        }),
    }
}

/// A memory shaped like a busy one: 2,000 subjects (a few named twice), 100,000 atoms
/// over 25 predicates, mostly ACTIVE with sources, a tenth of them new drafts, some
/// on keys already held.
fn memory(seed: u64) -> Snapshot {
    let mut r = seeded(seed);
    let mut s = Snapshot::default();
    for i in 0..SUBJECTS {
        let kind = match i % 10 {
            0 => SubjectKind::Org,
            1..=4 => SubjectKind::Project,
            _ => SubjectKind::Lib,
        };
        // Every 50th library repeats an earlier one's name in another spelling.
        let name = if kind == SubjectKind::Lib && i % 50 == 5 {
            format!("owner/lib-{}", i - 40)
        } else {
            format!("lib-{i}")
        };
        s.subjects.push(Subject {
            id: SubjectId(i as u128 + 1),
            kind,
            name,
            aliases: vec![],
            title: None,
            summary: None,
            tags: vec![],
            created_at: day(i % 300),
            updated_at: day(i % 300),
            merged_into: None,
            details: SubjectDetails::None,
        });
    }
    let ref_types = [
        RefType::ReleaseNotes,
        RefType::Doc,
        RefType::Url,
        RefType::Chat,
        RefType::Pr,
    ];
    for i in 0..REFERENCES {
        s.references.push(Reference {
            id: ReferenceId(i as u128 + 1),
            ref_type: ref_types[i % ref_types.len()],
            title: Some(format!("source {i}")),
            uri: None,
            authors: vec![],
            published_at: None,
            retrieved_at: day(0),
            snippet: None,
            hash: None,
        });
    }
    let predicates: Vec<Predicate> = (0..25)
        .filter_map(|i| Predicate::normalise(&format!("property {i}")).ok())
        .collect();
    let types = [
        MemoryAtomType::Assumption,
        MemoryAtomType::Fact,
        MemoryAtomType::Rule,
        MemoryAtomType::BestPractice,
    ];
    for i in 0..ATOMS {
        let t = types[i % types.len()];
        let about = SubjectId(r.usize(..SUBJECTS) as u128 + 1);
        let recorded = day(r.usize(..400));
        let status = if i % 10 == 0 {
            MemoryStatus::Draft
        } else {
            MemoryStatus::Active
        };
        let mut a = MemoryAtom {
            id: AtomId(1_000_000 + i as u128),
            details: details(t),
            statement: format!(
                "Subject {about} has property {} equal to value {}",
                i % 25,
                i % 7
            ),
            predicate: (i % 5 != 0).then(|| predicates[r.usize(..predicates.len())].clone()),
            value: Some(AtomValue::Text(format!("{}", r.usize(..4)))),
            about: Some(about),
            context: Context::Global,
            status,
            confidence: 0.7,
            validated_confidence: 0.7,
            importance: Level::Med,
            title: None,
            summary: None,
            notes: None,
            resolution: None,
            tags: vec![],
            author: None,
            confirmation: None,
            valid_from: None,
            valid_to: None,
            recorded_at: recorded,
            retired_at: None,
            last_validated_at: Some(recorded),
            next_review_at: None,
            review_interval_days: None,
            claim_key: None,
        };
        a.claim_key = ClaimKey::of(&a).map(|k| k.canonical());
        s.atoms.push(a);
        let r1 = ReferenceId(r.usize(..REFERENCES) as u128 + 1);
        s.edges.push(MemoryEdge::new(
            NodeRef::Atom(AtomId(1_000_000 + i as u128)),
            EdgeKind::FromSource,
            NodeRef::Reference(r1),
        ));
    }
    for i in 0..5_000 {
        let p = SubjectId((i % 400) as u128 * 10 + 2);
        let l = SubjectId(r.usize(..SUBJECTS) as u128 + 1);
        if p != l {
            s.edges.push(MemoryEdge::new(
                NodeRef::Subject(p),
                EdgeKind::Uses,
                NodeRef::Subject(l),
            ));
        }
    }
    s.edges.sort();
    s.edges.dedup();
    s
}

/// CPU time this thread has used, from /proc (Linux; zero elsewhere). The machine
/// may be shared, so the table shows it beside the wall time.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return Duration::ZERO;
    };
    let Some(rest) = stat.rsplit(") ").next() else {
        return Duration::ZERO;
    };
    let f: Vec<u64> = rest.split(' ').map(|x| x.parse().unwrap_or(0)).collect();
    // utime and stime are the 14th and 15th fields, counted in 1/100 s.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// Median wall time and mean CPU time over `runs`, and the last result.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    let cpu0 = cpu_time();
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        times.push(t.elapsed());
        last = Some(v);
    }
    let cpu = (cpu_time() - cpu0) / runs as u32;
    times.sort();
    let median = times[times.len() / 2];
    (median, cpu, last.expect("at least one run"))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let now = day(420);
    let t = Instant::now();
    let snap = memory(7);
    println!(
        "built {} atoms, {} subjects, {} edges in {}",
        snap.atoms.len(),
        snap.subjects.len(),
        snap.edges.len(),
        ms(t.elapsed())
    );
    println!();
    println!("| measure | median wall | mean CPU | notes |");
    println!("|---|---|---|---|");

    let (d, c, first) = time(5, || plan(black_box(&snap), now));
    let kinds: Vec<String> = summary(&first)
        .iter()
        .map(|(k, n)| format!("{} {n}", k.as_str()))
        .collect();
    println!(
        "| curator plan, 100,000 atoms, first pass | {} | {} | {} actions: {} |",
        ms(d),
        ms(c),
        first.len(),
        kinds.join(", ")
    );

    let (d, c, settled) = time(5, || apply(black_box(&snap), &first));
    println!(
        "| apply that plan to the snapshot | {} | {} | |",
        ms(d),
        ms(c)
    );

    let (d, c, second) = time(5, || plan(black_box(&settled), now));
    println!(
        "| curator plan, 100,000 atoms, settled | {} | {} | {} actions |",
        ms(d),
        ms(c),
        second.len()
    );

    let strengths = [Strength::Strong, Strength::Documented, Strength::Anecdotal];
    let cands: Vec<Candidate<'_>> = settled
        .atoms
        .iter()
        .enumerate()
        .map(|(i, a)| Candidate {
            atom: a,
            relevance: (i % 97) as f64 / 97.0,
            strength: strengths[i % 3],
        })
        .collect();
    let asker = Asker {
        project: Some(SubjectId(2)),
        org: Some(SubjectId(1)),
        near: vec![],
    };
    let mut q = RecallQuery::new(asker, now);
    q.max_tokens = Some(2_000);
    let (d, c, r) = time(21, || rank(black_box(&cands), &q));
    println!("| recall rank, 100,000 candidates, 2,000-token budget | {} | {} | {} hits, {} left out, {} filtered |", ms(d), ms(c), r.hits.len(), r.left_out, r.filtered);
    q.include_history = true;
    let (d, c, r) = time(21, || rank(black_box(&cands), &q));
    println!(
        "| recall rank with history | {} | {} | {} hits, {} left out |",
        ms(d),
        ms(c),
        r.hits.len(),
        r.left_out
    );
    let few: Vec<Candidate<'_>> = cands.iter().take(1_000).copied().collect();
    let (d, c, _) = time(101, || rank(black_box(&few), &q));
    println!(
        "| recall rank, 1,000 candidates | {} | {} | |",
        ms(d),
        ms(c)
    );

    let (d, c, facts) = time(21, || {
        usage_facts(black_box(&settled.subjects), &settled.edges, 3)
    });
    println!(
        "| usage facts from {} edges | {} | {} | {} subjects used in ≥ 3 projects |",
        settled.edges.len(),
        ms(d),
        ms(c),
        facts.len()
    );

    // Deciding a new atom against its key's holders, as `remember` does per call.
    let holder = settled
        .atoms
        .iter()
        .find(|a| a.status == MemoryStatus::Active && a.predicate.is_some())
        .cloned();
    if let Some(h) = holder {
        let hc = Contender::of(&h, vec![(ReferenceId(1), RefType::ReleaseNotes)], vec![]);
        let mut new = h.clone();
        new.id = AtomId(9);
        new.value = Some(AtomValue::Text("other".into()));
        let nc = Contender::of(&new, vec![(ReferenceId(2), RefType::Pr)], vec![]);
        let n = 100_000;
        let t = Instant::now();
        let c0 = cpu_time();
        for _ in 0..n {
            black_box(on_new(
                black_box(std::slice::from_ref(&hc)),
                black_box(&nc),
                None,
                now,
            ));
        }
        let per = t.elapsed().as_secs_f64() / n as f64;
        let cpu = (cpu_time() - c0).as_secs_f64() / n as f64;
        println!(
            "| collision decision for a new atom | {:.2} µs | {:.2} µs | {:.0} per second |",
            per * 1e6,
            cpu * 1e6,
            1.0 / per
        );
    }
}
