//! The saturation: completion rules in the manner of ELK over dense ids, driven by a
//! work queue. A context per concept holds its subsumers (`S(C)`), the links into it
//! (`E ⊑ ∃r.C`, "backward links") and, for roles that start chains, the links out of
//! it. Each derived fact is processed once, when it is first inserted.
//!
//! The engine is generic over a tracer: the classification runs with [`NoTrace`]
//! (nothing recorded, nothing paid), an explanation re-runs the few contexts it needs
//! with [`Trace`], which keeps the first reason for every fact.
//!
//! Knows ids and normal forms only; no names, no text.

use super::idset::{FxMap, IdSet};
use super::normalize::{Kind, Symbols, Tbox, BOTTOM, TOP};
use std::sync::Arc;

/// Why a fact was derived: the rule, the normal form it used, and its premises (facts
/// derived before it). `s → t` role pairs stand for told role inclusions on a path.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Why {
    /// `C ∈ S(C)`, `⊤ ∈ S(C)`, or a range filler's root.
    Init,
    /// `X ∈ S(c)`, `X ⊑ Y` (nf).
    Told { nf: u32, c: u32, x: u32 },
    /// `X, Z ∈ S(c)`, `X ⊓ Z ⊑ Y`.
    Conj { nf: u32, c: u32, x: u32, z: u32 },
    /// `X ∈ S(c)`, `X ⊑ ∃r.Y`: a link from `c`.
    ExR { nf: u32, c: u32, x: u32 },
    /// A range filler context's range: `range(s) ⊑ D`, `r ⊑* s`.
    Range { nf: u32, r: u32, s: u32 },
    /// Link `(e, s, c)`, `X ∈ S(c)`, `∃t.X ⊑ Y`, `s ⊑* t`.
    ExL {
        nf: u32,
        e: u32,
        s: u32,
        c: u32,
        x: u32,
        t: u32,
    },
    /// Link `(e, s, c)` and `⊥ ∈ S(c)`.
    Bottom { e: u32, s: u32, c: u32 },
    /// Links `(e, s, c)`, `(c, u, d)`, chain `s1 ∘ u1 ⊑ v` with `s ⊑* s1`, `u ⊑* u1`.
    Chain {
        nf: u32,
        e: u32,
        s: u32,
        c: u32,
        u: u32,
        d: u32,
        s1: u32,
        u1: u32,
    },
    /// A reflexive role's self link.
    Reflexive { nf: u32 },
    /// Reflexive `r ⊑* s` with `range(s) ⊑ D`: everything is a `D`.
    ReflexiveRange {
        refl: u32,
        range: u32,
        r: u32,
        s: u32,
    },
    /// `r(a, b)` with `range(s) ⊑ D`, `r ⊑* s`: `{b} ⊑ D`.
    OpaRange {
        opa: u32,
        range: u32,
        r: u32,
        s: u32,
    },
    /// A top filler `f` held in `a`, which has an instance: it holds everywhere.
    Global { a: u32, f: u32 },
    /// The link `(e, r, c)` through an empty role (`r ⊑* b`, `b` empty by `nf`).
    EmptyRole {
        e: u32,
        r: u32,
        c: u32,
        b: u32,
        nf: u32,
    },
}

/// A derived fact: `x ∈ S(c)` or the link `e ⊑ ∃r.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Fact {
    Sub(u32, u32),
    Link(u32, u32, u32),
}

/// Records (or not) why facts were derived.
pub(crate) trait Tracer: Clone + Default {
    /// What a queued job carries: `()` when not tracing.
    type W: Copy;
    fn why(f: impl FnOnce() -> Why) -> Self::W;
    fn record(&mut self, fact: Fact, w: Self::W);
}

/// The classification's tracer: records nothing.
#[derive(Clone, Default, Debug)]
pub(crate) struct NoTrace;

impl Tracer for NoTrace {
    type W = ();
    #[inline(always)]
    fn why(_: impl FnOnce() -> Why) {}
    #[inline(always)]
    fn record(&mut self, _: Fact, _: ()) {}
}

/// An explanation's tracer: the first reason of every fact.
#[derive(Clone, Default, Debug)]
pub(crate) struct Trace {
    pub reasons: FxMap<Fact, Why>,
}

impl Tracer for Trace {
    type W = Why;
    #[inline]
    fn why(f: impl FnOnce() -> Why) -> Why {
        f()
    }
    fn record(&mut self, fact: Fact, w: Why) {
        self.reasons.entry(fact).or_insert(w);
    }
}

#[derive(Clone, Copy, Debug)]
enum Job<W> {
    Sub(u32, u32, W),
    /// A link `e ⊑ ∃r.c`; the flag says it was made by `r`'s transitivity.
    Link(u32, u32, u32, bool, W),
}

/// One concept's saturation state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ctx {
    pub init: bool,
    /// `⊥ ∈ subs`, kept apart so a link need not probe the set for it.
    unsat: bool,
    pub subs: IdSet<u32>,
    /// Subsumers that are fillers of some `∃r.X ⊑ Y` (the only ones a new link must
    /// look at).
    negx: Vec<u32>,
    /// Links into this context: `(source, role)`, each once.
    back: Vec<(u32, u32)>,
    /// Links out of this context, `(target, role)` packed by [`pack`]: a link is
    /// queued only when it is new here, at its source, where the rule that makes it
    /// usually runs (so the check finds the set in cache, and the target, often a
    /// popular filler elsewhere in memory, is touched once per link).
    out: IdSet<u64>,
    /// Links out of this context through roles that end chains: `(target, role)`
    /// packed by [`pack`]; those made by the role's transitivity apart (`fwd_trans`),
    /// as most compositions can skip them.
    fwd: IdSet<u64>,
    fwd_trans: IdSet<u64>,
}

#[inline]
fn pack(e: u32, r: u32) -> u64 {
    (u64::from(e) << 32) | u64::from(r)
}

#[inline]
fn unpack(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// A link made by a rule, waiting to be checked against its source's `out` set.
type Made<W> = (u32, u32, u32, bool, W);

/// The saturation state, a value: cloning it and adding axioms continues from where
/// it stood.
#[derive(Clone, Debug)]
pub(crate) struct Engine<T: Tracer> {
    pub tbox: Arc<Tbox>,
    pub ctx: Vec<Ctx>,
    /// Range filler contexts: `(filler, role)` → context id.
    fillers: FxMap<(u32, u32), u32>,
    /// The root and role of each filler context.
    filler_of: FxMap<u32, (u32, u32)>,
    queue: Vec<Job<T::W>>,
    /// Reused buffer for the links one step makes.
    made: Vec<Made<T::W>>,
    /// Top fillers that hold everywhere, each with the context it was found in.
    global: Vec<(u32, u32)>,
    /// Whether the concepts known to have instances were started.
    seeded: bool,
    pub tracer: T,
}

impl<T: Tracer> Engine<T> {
    /// An engine over `tbox` with `n_concepts` concepts, nothing saturated yet.
    pub(crate) fn new(tbox: Arc<Tbox>, n_concepts: usize) -> Self {
        let mut ctx = Vec::with_capacity(n_concepts);
        ctx.resize_with(n_concepts, Ctx::default);
        Engine {
            tbox,
            ctx,
            fillers: FxMap::default(),
            filler_of: FxMap::default(),
            queue: Vec::new(),
            made: Vec::new(),
            global: Vec::new(),
            seeded: false,
            tracer: T::default(),
        }
    }

    /// Makes room for concepts added since (new classes, individuals, fresh names).
    pub(crate) fn grow(&mut self, n_concepts: usize) {
        if self.ctx.len() < n_concepts {
            self.ctx.resize_with(n_concepts, Ctx::default);
        }
    }

    /// True when `x ∈ S(c)`.
    pub(crate) fn has(&self, c: u32, x: u32) -> bool {
        self.ctx.get(c as usize).is_some_and(|k| k.subs.contains(x))
    }

    /// True when the context of `c` holds `⊥`.
    pub(crate) fn unsat(&self, c: u32) -> bool {
        self.ctx.get(c as usize).is_some_and(|k| k.unsat)
    }

    /// Starts the context of `c` (if not started); `run` saturates it.
    pub(crate) fn activate(&mut self, c: u32) {
        let Some(k) = self.ctx.get_mut(c as usize) else {
            return;
        };
        if k.init {
            return;
        }
        k.init = true;
        let init = T::why(|| Why::Init);
        self.queue.push(Job::Sub(c, c, init));
        self.queue.push(Job::Sub(c, TOP, init));
        for &(f, a) in &self.global {
            self.queue
                .push(Job::Sub(c, f, T::why(|| Why::Global { a, f })));
        }
        // A top filler found in an individual holds everywhere, so the individuals
        // are saturated whenever anything is (an explanation starts one context).
        if !self.seeded {
            self.seeded = true;
            let tbox = Arc::clone(&self.tbox);
            for &a in &tbox.nonempty {
                self.activate(a);
            }
        }
        if let Some(&(root, r)) = self.filler_of.get(&c) {
            self.queue.push(Job::Sub(c, root, init));
            for &(d, nf, s) in self.tbox.ranges(r) {
                self.queue
                    .push(Job::Sub(c, d, T::why(|| Why::Range { nf, r, s })));
            }
        }
        let tbox = Arc::clone(&self.tbox);
        for &(r, nf) in &tbox.reflexive {
            self.new_link(c, r, c, false, T::why(|| Why::Reflexive { nf }));
            for &(d, range, s) in tbox.ranges(r) {
                self.queue.push(Job::Sub(
                    c,
                    d,
                    T::why(|| Why::ReflexiveRange {
                        refl: nf,
                        range,
                        r,
                        s,
                    }),
                ));
            }
        }
        for &(r, opa) in tbox.opa_in(c) {
            for &(d, range, s) in tbox.ranges(r) {
                self.queue.push(Job::Sub(
                    c,
                    d,
                    T::why(|| Why::OpaRange { opa, range, r, s }),
                ));
            }
        }
    }

    /// The context a link `∃r.y` leads to: `y` itself, or (when `r` has ranges) a
    /// filler context for `y ⊓ ranges(r)`, made on first use.
    fn filler(&mut self, y: u32, r: u32) -> u32 {
        if self.tbox.ranges(r).is_empty() {
            return y;
        }
        if let Some(&f) = self.fillers.get(&(y, r)) {
            return f;
        }
        let f = self.ctx.len() as u32;
        self.ctx.push(Ctx::default());
        self.fillers.insert((y, r), f);
        self.filler_of.insert(f, (y, r));
        f
    }

    /// Runs the rules until nothing new is derived.
    pub(crate) fn run(&mut self) {
        let tbox = Arc::clone(&self.tbox);
        while let Some(job) = self.queue.pop() {
            match job {
                Job::Sub(c, x, w) => self.sub(&tbox, c, x, w, false),
                Job::Link(e, r, c, trans, w) => self.link(&tbox, e, r, c, trans, w),
            }
        }
    }

    /// Processes `x ∈ S(c)`; with `again`, re-applies the rules to a subsumer already
    /// there (after axioms were added).
    fn sub(&mut self, tbox: &Tbox, c: u32, x: u32, w: T::W, again: bool) {
        let Some(k) = self.ctx.get_mut(c as usize) else {
            return;
        };
        if !again {
            if !k.subs.insert(x) {
                return;
            }
            self.tracer.record(Fact::Sub(c, x), w);
        }
        if tbox.is_top_fill(x) && tbox.is_nonempty(c) && !self.global.iter().any(|g| g.0 == x) {
            self.global.push((x, c));
            for d in 0..self.ctx.len() {
                if self.ctx[d].init && d as u32 != c {
                    let d = d as u32;
                    self.queue
                        .push(Job::Sub(d, x, T::why(|| Why::Global { a: c, f: x })));
                }
            }
        }
        let Some(k) = self.ctx.get_mut(c as usize) else {
            return;
        };
        if x == BOTTOM {
            k.unsat = true;
            for &(e, s) in &k.back {
                self.queue
                    .push(Job::Sub(e, BOTTOM, T::why(|| Why::Bottom { e, s, c })));
            }
            return;
        }
        // Nothing more is needed from a context that is already unsatisfiable.
        if k.unsat {
            return;
        }
        let lhs = tbox.ex_lhs(x);
        if !lhs.is_empty() && (!again || !k.negx.contains(&x)) {
            k.negx.push(x);
        }
        // A subsumer already in this context (its set is in cache) is not queued again.
        for &(y, nf) in tbox.told(x) {
            if !k.subs.contains(y) {
                self.queue
                    .push(Job::Sub(c, y, T::why(|| Why::Told { nf, c, x })));
            }
        }
        for &(z, y, nf) in tbox.conj(x) {
            if k.subs.contains(z) && !k.subs.contains(y) {
                self.queue
                    .push(Job::Sub(c, y, T::why(|| Why::Conj { nf, c, x, z })));
            }
        }
        if !lhs.is_empty() {
            for &(e, s) in &k.back {
                for &(t, y, nf) in lhs {
                    if tbox.is_sub_role(s, t) {
                        self.queue
                            .push(Job::Sub(e, y, T::why(|| Why::ExL { nf, e, s, c, x, t })));
                    }
                }
            }
        }
        let rhs = tbox.ex_rhs(x);
        if !rhs.is_empty() {
            for &(r, y, nf) in rhs {
                let f = self.filler(y, r);
                self.new_link(c, r, f, false, T::why(|| Why::ExR { nf, c, x }));
            }
        }
    }

    /// Processes the link `e ⊑ ∃r.c` (`trans`: made by `r`'s transitivity).
    fn link(&mut self, tbox: &Tbox, e: u32, r: u32, c: u32, trans: bool, w: T::W) {
        {
            // New at its source, so new here too.
            let Some(k) = self.ctx.get_mut(c as usize) else {
                return;
            };
            k.back.push((e, r));
        }
        self.tracer.record(Fact::Link(e, r, c), w);
        self.activate(c);
        let Some(k) = self.ctx.get(c as usize) else {
            return;
        };
        if k.unsat {
            self.queue
                .push(Job::Sub(e, BOTTOM, T::why(|| Why::Bottom { e, s: r, c })));
        }
        for &x in &k.negx {
            for &(t, y, nf) in tbox.ex_lhs(x) {
                if tbox.is_sub_role(r, t) {
                    self.queue.push(Job::Sub(
                        e,
                        y,
                        T::why(|| Why::ExL {
                            nf,
                            e,
                            s: r,
                            c,
                            x,
                            t,
                        }),
                    ));
                }
            }
        }
        // Chains. A composed link already known at the target is not queued again.
        // A link made by its role's transitivity is composed with only where the
        // result does not absorb the role (see `Comps::absorbing`): elsewhere the
        // shorter links it was made of yield the same links, and skipping it keeps a
        // transitive property's closure from being rebuilt along every path.
        let mut made = std::mem::take(&mut self.made);
        if tbox.chain_left(r) {
            for (d, u) in k.fwd.iter().map(unpack) {
                if let Some(cs) = tbox.comps(r, u) {
                    for cp in &cs.list {
                        let (v, nf, s1, u1) = (cp.v, cp.nf, cp.s1, cp.u1);
                        made.push((
                            e,
                            v,
                            d,
                            cp.trans,
                            T::why(|| Why::Chain {
                                nf,
                                e,
                                s: r,
                                c,
                                u,
                                d,
                                s1,
                                u1,
                            }),
                        ));
                    }
                }
            }
            for (d, u) in k.fwd_trans.iter().map(unpack) {
                if let Some(cs) = tbox.comps(r, u).filter(|cs| !cs.absorbing) {
                    for cp in &cs.list {
                        let (v, nf, s1, u1) = (cp.v, cp.nf, cp.s1, cp.u1);
                        made.push((
                            e,
                            v,
                            d,
                            cp.trans,
                            T::why(|| Why::Chain {
                                nf,
                                e,
                                s: r,
                                c,
                                u,
                                d,
                                s1,
                                u1,
                            }),
                        ));
                    }
                }
            }
        }
        if tbox.chain_right(r) {
            if let Some(src) = self.ctx.get_mut(e as usize) {
                if trans {
                    src.fwd_trans.insert(pack(c, r));
                } else {
                    src.fwd.insert(pack(c, r));
                }
            }
            if let Some(src) = self.ctx.get(e as usize) {
                for &(f, q) in &src.back {
                    let Some(cs) = tbox.comps(q, r) else { continue };
                    if trans && cs.absorbing {
                        continue;
                    }
                    for cp in &cs.list {
                        let (v, nf, s1, u1) = (cp.v, cp.nf, cp.s1, cp.u1);
                        made.push((
                            f,
                            v,
                            c,
                            cp.trans,
                            T::why(|| Why::Chain {
                                nf,
                                e: f,
                                s: q,
                                c: e,
                                u: r,
                                d: c,
                                s1,
                                u1,
                            }),
                        ));
                    }
                }
            }
        }
        for (f, v, d, t, w) in made.drain(..) {
            self.new_link(f, v, d, t, w);
        }
        self.made = made;
    }

    /// Queues the link `e ⊑ ∃r.c` unless `e` already has it.
    #[inline]
    fn new_link(&mut self, e: u32, r: u32, c: u32, trans: bool, w: T::W) {
        // A link through an empty role cannot exist: its source is unsatisfiable.
        if let Some((b, nf)) = self.tbox.empty(r) {
            self.tracer.record(Fact::Link(e, r, c), w);
            self.queue.push(Job::Sub(
                e,
                BOTTOM,
                T::why(|| Why::EmptyRole { e, r, c, b, nf }),
            ));
            return;
        }
        if let Some(k) = self.ctx.get_mut(e as usize) {
            if k.out.insert(pack(c, r)) {
                self.queue.push(Job::Link(e, r, c, trans, w));
            }
        }
    }

    /// Starts every named class and individual, `⊤`, and saturates.
    pub(crate) fn saturate_all(&mut self, sym: &Symbols) {
        self.grow(sym.kind.len());
        self.activate(TOP);
        for (id, k) in sym.kind.iter().enumerate() {
            if matches!(k, Kind::Class | Kind::Individual) {
                self.activate(id as u32);
            }
        }
        self.run();
    }

    /// After normal forms were appended to the tbox (none about roles), re-applies
    /// the rules to every subsumer the new forms mention on their left-hand side, in
    /// every started context, then saturates: EL is monotone, so this continues from
    /// the saturated state instead of starting over.
    pub(crate) fn continue_with(&mut self, sym: &Symbols, first_new_nf: usize) {
        use super::normalize::Nf;
        self.grow(sym.kind.len());
        let tbox = Arc::clone(&self.tbox);
        let mut touched = vec![false; sym.kind.len()];
        let mut opa_new: Vec<(u32, u32, u32)> = Vec::new();
        for (i, nf) in tbox.nfs.iter().enumerate().skip(first_new_nf) {
            match *nf {
                Nf::Sub(a, _) | Nf::ExR(a, _, _) => touched[a as usize] = true,
                Nf::Conj(a, b, _) => {
                    touched[a as usize] = true;
                    touched[b as usize] = true;
                }
                Nf::ExL(_, a, _) => touched[a as usize] = true,
                Nf::OpaRange(b, r) => opa_new.push((b, r, i as u32)),
                Nf::RoleSub(..)
                | Nf::Chain(..)
                | Nf::Range(..)
                | Nf::Reflexive(_)
                | Nf::Universal(_)
                | Nf::Empty(_)
                | Nf::TopFill(_)
                | Nf::Nonempty(_) => {}
            }
        }
        for c in 0..self.ctx.len() {
            if !self.ctx[c].init || self.ctx[c].unsat {
                continue;
            }
            let xs: Vec<u32> = self.ctx[c]
                .subs
                .iter()
                .filter(|&x| touched.get(x as usize).copied().unwrap_or(false))
                .collect();
            for x in xs {
                self.sub(&tbox, c as u32, x, T::why(|| Why::Init), true);
            }
        }
        for (b, r, opa) in opa_new {
            if self.ctx.get(b as usize).is_some_and(|k| k.init) {
                for &(d, range, s) in tbox.ranges(r) {
                    self.queue.push(Job::Sub(
                        b,
                        d,
                        T::why(|| Why::OpaRange { opa, range, r, s }),
                    ));
                }
            }
        }
        for (id, k) in sym.kind.iter().enumerate() {
            if matches!(k, Kind::Class | Kind::Individual) {
                self.activate(id as u32);
            }
        }
        self.run();
    }
}
