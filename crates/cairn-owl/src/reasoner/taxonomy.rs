//! The taxonomy read off a saturated state: classes grouped into equivalence nodes,
//! each node's direct parents and children (the transitive reduction of the
//! subsumption order), and the unsatisfiable classes apart.
//!
//! Knows ids only.

use super::engine::{Engine, NoTrace};
use super::idset::IdSet;
use super::normalize::{Symbols, TOP};

/// The node of `owl:Thing` (and the classes equivalent to it).
pub(crate) const TOP_NODE: u32 = 0;
/// The node of `owl:Nothing` (the unsatisfiable classes).
pub(crate) const BOTTOM_NODE: u32 = 1;

#[derive(Clone, Debug, Default)]
pub(crate) struct Node {
    /// Class indices (positions in `Symbols::class_ids`).
    pub members: Vec<u32>,
    pub parents: Vec<u32>,
    pub children: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Taxonomy {
    /// Node of each class index.
    pub node_of: Vec<u32>,
    pub nodes: Vec<Node>,
    /// Class index of each concept id (`u32::MAX` for other concepts).
    pub class_of: Vec<u32>,
    /// Concept id of each node's first member, and how many subsumers it has (a
    /// node below another has strictly more).
    lead: Vec<u32>,
    size: Vec<u32>,
}

/// Stamped marks over nodes, reused across calls: `seen` dedups candidates,
/// `covered` marks what a chosen parent already lies below.
pub(crate) struct Marks {
    seen: Vec<u32>,
    covered: Vec<u32>,
    stamp: u32,
}

impl Marks {
    pub(crate) fn new(n: usize) -> Marks {
        Marks {
            seen: vec![0; n],
            covered: vec![0; n],
            stamp: 0,
        }
    }
}

impl Taxonomy {
    pub(crate) fn build(eng: &Engine<NoTrace>, sym: &Symbols) -> Taxonomy {
        let n = sym.class_ids.len();
        let mut class_of = vec![u32::MAX; sym.kind.len().max(eng.ctx.len())];
        for (i, &c) in sym.class_ids.iter().enumerate() {
            class_of[c as usize] = i as u32;
        }
        let mut nodes = vec![Node::default(), Node::default()];
        let mut node_of = vec![u32::MAX; n];
        let top_unsat = eng.unsat(TOP);
        for (i, &c) in sym.class_ids.iter().enumerate() {
            if top_unsat || eng.unsat(c) {
                node_of[i] = BOTTOM_NODE;
                nodes[BOTTOM_NODE as usize].members.push(i as u32);
            } else if eng.has(TOP, c) {
                node_of[i] = TOP_NODE;
                nodes[TOP_NODE as usize].members.push(i as u32);
            }
        }
        // Equivalence nodes: the smallest class index among mutual subsumers leads.
        for i in 0..n {
            if node_of[i] != u32::MAX {
                continue;
            }
            let c = sym.class_ids[i];
            let id = nodes.len() as u32;
            let mut members = vec![i as u32];
            node_of[i] = id;
            if let Some(k) = eng.ctx.get(c as usize) {
                for x in k.subs.iter() {
                    let j = class_of.get(x as usize).copied().unwrap_or(u32::MAX);
                    if j != u32::MAX
                        && j as usize != i
                        && node_of[j as usize] == u32::MAX
                        && eng.has(x, c)
                    {
                        node_of[j as usize] = id;
                        members.push(j);
                    }
                }
            }
            members.sort_unstable();
            nodes.push(Node {
                members,
                parents: Vec::new(),
                children: Vec::new(),
            });
        }
        let lead: Vec<u32> = nodes
            .iter()
            .map(|n| {
                n.members
                    .first()
                    .and_then(|&m| sym.class_ids.get(m as usize))
                    .copied()
                    .unwrap_or(TOP)
            })
            .collect();
        let size = lead
            .iter()
            .map(|&c| {
                eng.ctx
                    .get(c as usize)
                    .map(|k| k.subs.len() as u32)
                    .unwrap_or(0)
            })
            .collect();
        let mut tax = Taxonomy {
            node_of,
            nodes,
            class_of,
            lead,
            size,
        };
        let mut marks = Marks::new(tax.nodes.len());
        for id in 2..tax.nodes.len() as u32 {
            let c = tax.lead[id as usize];
            let Some(k) = eng.ctx.get(c as usize) else {
                continue;
            };
            let parents = tax.reduce(eng, &k.subs, id, &mut marks);
            tax.nodes[id as usize].parents = parents;
        }
        for id in 0..tax.nodes.len() {
            let ps = tax.nodes[id].parents.clone();
            for p in ps {
                tax.nodes[p as usize].children.push(id as u32);
            }
        }
        tax
    }

    /// The node of a concept when it is a satisfiable named class other than `own`
    /// and the top node.
    #[inline]
    fn sup_node(&self, x: u32, own: u32) -> Option<u32> {
        let j = *self.class_of.get(x as usize)?;
        let nd = *self.node_of.get(j as usize)?;
        (nd != own && nd != TOP_NODE && nd != BOTTOM_NODE).then_some(nd)
    }

    /// The direct parents among the subsumers `subs` (of node `own`, or of an
    /// individual when `own` is `u32::MAX`): candidates are visited from the most
    /// specific (most subsumers) down; one not below an already chosen parent is
    /// direct.
    pub(crate) fn reduce(
        &self,
        eng: &Engine<NoTrace>,
        subs: &IdSet<u32>,
        own: u32,
        m: &mut Marks,
    ) -> Vec<u32> {
        m.stamp += 1;
        let stamp = m.stamp;
        if m.seen.len() < self.nodes.len() {
            m.seen.resize(self.nodes.len(), 0);
            m.covered.resize(self.nodes.len(), 0);
        }
        let mut cands: Vec<u32> = Vec::new();
        for x in subs.iter() {
            if let Some(nd) = self.sup_node(x, own) {
                if m.seen[nd as usize] != stamp {
                    m.seen[nd as usize] = stamp;
                    cands.push(nd);
                }
            }
        }
        cands.sort_unstable_by_key(|&nd| std::cmp::Reverse((self.size[nd as usize], nd)));
        let mut direct = Vec::new();
        for p in cands {
            if m.covered[p as usize] == stamp {
                continue;
            }
            direct.push(p);
            if let Some(k) = eng.ctx.get(self.lead[p as usize] as usize) {
                for x in k.subs.iter() {
                    if let Some(nd) = self.sup_node(x, p) {
                        m.covered[nd as usize] = stamp;
                    }
                }
            }
        }
        if direct.is_empty() {
            direct.push(TOP_NODE);
        }
        direct.sort_unstable();
        direct
    }
}
