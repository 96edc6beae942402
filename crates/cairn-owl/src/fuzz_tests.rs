//! The document readers under hostile input: 10,000 random and mutated OFN
//! documents and 10,000 pages (the fixture's, mangled; expressions of random
//! tokens), with nesting 100,000 levels deep among them. None may panic or exhaust
//! the stack; what cannot be read is a problem with its file and line, and what was
//! read survives the round trip an import makes (pages written, read back). Seeded,
//! so a failure replays.

use super::model::load_pages;
use super::ofn::{read_ofn, write_ofn};
use super::page::Page;
use super::reasoner::classify;

/// The tests' one seeded generator (fastrand's), so failures reproduce; the draws
/// these tests use on top of it.
struct Rng(fastrand::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.u64(..)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

fn fixture_pages() -> Vec<(String, String)> {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/ontology/pages");
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (
                format!("pages/{name}"),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// A random window of at most `max` characters of `chars`, then mutated a few times
/// with characters and words the syntaxes care about.
fn mutate(rng: &mut Rng, chars: &[char], max: usize, words: &[&str]) -> String {
    let start = rng.below(chars.len().saturating_sub(max) + 1);
    let mut out: Vec<char> = chars[start..(start + max).min(chars.len())].to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(out.len() + 1);
        match rng.below(4) {
            0 if at < out.len() => out.truncate(at),
            1 if at < out.len() => {
                out.remove(at);
            }
            2 => {
                // A slice of the text repeated: brackets opened twice, and so on.
                let end = (at + rng.below(12)).min(out.len());
                let piece: Vec<char> = out[at..end].to_vec();
                for _ in 0..rng.below(4) {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            _ => {
                let w: Vec<char> = rng.pick(words).chars().collect();
                out.splice(at..at, w);
            }
        }
    }
    out.into_iter().collect()
}

const DEEP: usize = 100_000;

/// A page's class expression nested 100,000 levels deep, in the shapes it has.
fn deep_expr(shape: usize) -> String {
    let n = DEEP;
    match shape % 4 {
        0 => format!("{}ai:A{}", "(".repeat(n), ")".repeat(n)),
        1 => format!("{}ai:A", "ai:p some ".repeat(n)),
        2 => "ai:p some (".repeat(n),
        _ => format!("{}ai:A", "(ai:B and ".repeat(n)),
    }
}

/// OFN nested 100,000 levels deep, closed or not.
fn deep_ofn(shape: usize) -> String {
    let n = DEEP;
    match shape % 4 {
        0 => format!(
            "{}ai:A{}",
            "ObjectSomeValuesFrom(ai:p ".repeat(n),
            ")".repeat(n)
        ),
        1 => format!("{}ai:A", "ObjectIntersectionOf(ai:B ".repeat(n)),
        2 => format!("{}ai:A ai:B", "Annotation(".repeat(n)),
        _ => "a(".repeat(n),
    }
}

const OFN_WORDS: &[&str] = &[
    "(",
    ")",
    "(",
    ")",
    "\"",
    "<",
    ">",
    "=",
    "#",
    "\n",
    " ",
    ":",
    "@en",
    "^^xsd:string",
    "_:b1",
    "Prefix(",
    "Ontology(",
    "Declaration(Class(",
    "SubClassOf(",
    "EquivalentClasses(",
    "DisjointClasses(",
    "ObjectIntersectionOf(",
    "ObjectSomeValuesFrom(",
    "ObjectUnionOf(",
    "SubObjectPropertyOf(",
    "ObjectPropertyChain(",
    "TransitiveObjectProperty(",
    "ClassAssertion(",
    "ObjectPropertyAssertion(",
    "AnnotationAssertion(",
    "Annotation(",
    "rdfs:label",
    "skos:altLabel",
    "cairn:pageProperty",
    "owl:Thing",
    "owl:Nothing",
    "ai:A",
    "ai:p",
    "<http://x.org/a#B>",
    "é",
    "🦀",
    "\\",
];

/// Names and keywords that fit where a name stands.
const NAMES: &[&str] = &[
    "ai:A",
    "ai:p",
    "owl:Thing",
    "owl:Nothing",
    "_:b1",
    "un:Known",
    "\"text\"",
    "<urn:x:y>",
    "ai:Transformer",
    "core:hasPart",
    "ObjectSomeValuesFrom(ai:p",
    "ai:Y@en",
    "rdfs:label",
    "ai:Ünï",
    "ai:a.b",
    "ai:-x",
    "ai:x.",
    "ai:1",
];

/// Every OFN document reads without panicking; what it read writes pages that
/// read back as it, and classifies.
#[test]
fn ten_thousand_hostile_ofn_documents() {
    let files = fixture_pages();
    let l = load_pages(files.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    let export = write_ofn(&l.ontology);
    // The prefixes and the ontology's opening, then its axioms to cut windows from.
    let at = export.find("Ontology(").unwrap();
    let at = at + export[at..].find('\n').unwrap() + 1;
    let (head, body) = export.split_at(at);
    let body: Vec<char> = body.chars().collect();
    // The declarations, so that the axioms of any window name declared entities.
    let (declared, lines): (Vec<&str>, Vec<&str>) = export[at..]
        .lines()
        .partition(|l| l.starts_with("Declaration("));
    let declared: String = declared.iter().map(|l| format!("{l}\n")).collect();
    let mut rng = Rng::new(0x0F0F_2027);
    let mut read_some = 0;
    for round in 0..10_000 {
        let text = match round % 50 {
            0 if round % 500 == 0 => {
                let x = deep_ofn(round / 500);
                format!("Prefix(ai:=<urn:ai:>)\nOntology(\nSubClassOf(ai:A\n{x}))\n")
            }
            1..=5 => (0..1 + rng.below(60))
                .map(|_| rng.pick(OFN_WORDS))
                .collect::<Vec<_>>()
                .join(if rng.below(2) == 0 { " " } else { "" }),
            6..=9 => mutate(&mut rng, &body, 600, OFN_WORDS),
            10..=19 => {
                let mut s = head.to_string();
                s.push_str(&mutate(&mut rng, &body, 1_500, OFN_WORDS));
                s.push_str("\n)\n");
                s
            }
            _ => {
                // Whole axiom lines with names swapped for other names and keywords:
                // documents whose trees hold, to read on into axioms and pages.
                let from = rng.below(lines.len());
                let mut s = head.to_string();
                s.push_str(&declared);
                for l in &lines[from..(from + 1 + rng.below(40)).min(lines.len())] {
                    let mut words: Vec<String> = l.split(' ').map(str::to_string).collect();
                    if rng.below(2) == 0 {
                        let i = rng.below(words.len());
                        let w = rng.pick(NAMES);
                        // Keep the closing brackets the word carried.
                        let closing: String =
                            words[i].chars().rev().take_while(|c| *c == ')').collect();
                        words[i] = format!("{w}{closing}");
                    }
                    s.push_str(&words.join(" "));
                    s.push('\n');
                }
                s.push_str(")\n");
                s
            }
        };
        let r = read_ofn(&text, "fuzz.ofn");
        for p in &r.problems {
            assert!(p.line <= text.lines().count() + 1, "{p:?}");
        }
        if round % 500 == 0 {
            assert!(
                r.problems
                    .iter()
                    .any(|p| p.line == 4 && p.message.contains("nest")),
                "{:?}",
                r.problems
            );
        }
        if r.ontology.entities.is_empty() {
            continue;
        }
        read_some += 1;
        let pages: Vec<(String, String)> = r
            .ontology
            .to_pages()
            .into_iter()
            .map(|(f, p)| (f, p.write()))
            .collect();
        let back = load_pages(pages.iter().map(|(f, t)| (f.as_str(), t.as_str())));
        assert!(back.problems.is_empty(), "{text}\n{:?}", back.problems);
        if !back.ontology.same_content(&r.ontology) {
            for (i, e) in &r.ontology.entities {
                let b = back.ontology.entities.get(i);
                if b.map(|b| (&b.kind, &b.meta)) != Some((&e.kind, &e.meta)) {
                    panic!("{i}: {:?} became {:?}", e.meta, b.map(|b| &b.meta));
                }
            }
            panic!("axioms differ: {:?}", r.ontology.axioms.len());
        }
        if round % 10 == 0 {
            let c = classify(&r.ontology);
            let _ = (c.is_consistent(), c.explain_inconsistency());
        }
    }
    assert!(read_some > 1_000, "{read_some} documents read something");
}

const EXPR_WORDS: &[&str] = &[
    "(",
    ")",
    "(",
    ")",
    "[[",
    "]]",
    ",",
    " and ",
    " some ",
    " or ",
    " o ",
    "owl:Thing",
    "owl:Nothing",
    "ai:A",
    "ai:p",
    "[[Transformer]]",
    "[[has part]]",
    "<urn:x:y>",
    "<",
    ">",
    "::",
    "\n",
    "\r",
    "\t",
    "  - ",
    "### OntologyBlock",
    "é",
];

/// Keys whose values are class expressions, as a page states them.
const EXPR_KEYS: &[&str] = &[
    "owl:subClassOf",
    "owl:equivalentClass",
    "owl:disjointWith",
    "owl:axiom",
    "is-subclass-of",
    "has-part",
];

/// Every page reads without panicking, alone and in the repository: a page that
/// cannot be read (one nested 100,000 deep included) is a problem with its file and
/// line, and the other pages are read.
#[test]
fn ten_thousand_hostile_pages() {
    let files = fixture_pages();
    let chars: Vec<Vec<char>> = files.iter().map(|(_, t)| t.chars().collect()).collect();
    let mut rng = Rng::new(0x9A6E_2027);
    for round in 0..10_000 {
        let (name, text) = match round % 4 {
            0 => {
                let value = if round % 400 == 0 {
                    deep_expr(round / 400)
                } else {
                    (0..1 + rng.below(20))
                        .map(|_| rng.pick(EXPR_WORDS))
                        .collect::<String>()
                };
                let key = if round % 400 == 0 {
                    EXPR_KEYS[(round / 400) % 3]
                } else {
                    rng.pick(EXPR_KEYS)
                };
                let text = format!(
                    "- Fuzz\n  - ### OntologyBlock\n    - ontology:: true\n    - owl:class:: ai:Fuzz\n    - {key}:: {value}\n"
                );
                ("pages/Fuzz.md".to_string(), text)
            }
            _ => {
                let i = rng.below(files.len());
                (
                    files[i].0.clone(),
                    mutate(&mut rng, &chars[i], 2_000, EXPR_WORDS),
                )
            }
        };
        if let Ok(p) = Page::parse(&text) {
            let _ = super::quality::assess(&p);
        }
        let l = load_pages([(name.as_str(), text.as_str())]);
        for p in &l.problems {
            assert!(p.line <= text.lines().count() + 1, "{p:?}");
        }
        if round % 400 == 0 {
            assert!(
                l.problems
                    .iter()
                    .any(|p| p.file == name && p.line == 5 && p.message.contains("nests")),
                "{:?}",
                l.problems
            );
        }
        let _ = l.ontology.to_pages();
        if round % 100 == 0 {
            // Among the others: the rest of the repository still reads.
            let mut all = files.clone();
            all.retain(|(f, _)| *f != name);
            all.push((name.clone(), text.clone()));
            let l = load_pages(all.iter().map(|(f, t)| (f.as_str(), t.as_str())));
            assert!(l.ontology.entities.len() >= 60, "{name}");
        }
    }
}
