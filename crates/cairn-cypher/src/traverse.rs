//! The neighbourhood of a node: every node within a number of hops, breadth first,
//! along relationships of chosen types and direction, with the relationships among
//! them, bounded in size. What `ontology_traverse` answers; knows nothing of text.

use std::collections::{HashMap, VecDeque};

use super::error::{ErrorKind, NameKind, NameProblem, QueryError};
use super::graph::{EdgeId, NodeId, PropertyGraph};
use super::schema::{Resolution, Schema};

/// Which relationships a traversal follows from a node it has reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraverseDirection {
    /// Those leaving it.
    Outgoing,
    /// Those entering it.
    Incoming,
    /// Both.
    Both,
}

/// What to traverse.
#[derive(Clone, Debug)]
pub struct TraverseOptions {
    /// Hops from the start; 0 answers the start alone.
    pub depth: usize,
    /// Relationship types to follow (resolved through the schema); `None` follows all.
    pub rel_types: Option<Vec<String>>,
    /// Direction to follow them in.
    pub direction: TraverseDirection,
    /// The most nodes returned, the start included.
    pub max_nodes: usize,
}

/// A node reached and its distance from the start in hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The node.
    pub node: NodeId,
    /// Hops from the start.
    pub depth: usize,
}

/// The subgraph around a start node.
#[derive(Clone, Debug, PartialEq)]
pub struct Subgraph {
    /// The nodes reached, the start first, then in breadth-first order.
    pub nodes: Vec<Reached>,
    /// Every relationship of a followed type between two reached nodes, by the
    /// order their start nodes were reached.
    pub edges: Vec<EdgeId>,
    /// True when `max_nodes` stopped the traversal before `depth` was explored.
    pub truncated: bool,
    /// Relationship-type names read as other names (aliases, repaired spellings).
    pub notes: Vec<String>,
}

/// Traverses `graph` from `start`. An unknown relationship type is an error
/// naming the nearest known types, unless one is clearly meant (then it is used
/// and a note says so).
pub fn traverse(
    graph: &PropertyGraph,
    schema: &Schema,
    start: NodeId,
    opts: &TraverseOptions,
) -> Result<Subgraph, QueryError> {
    if graph.node_at(start.index()).is_none() {
        return Err(QueryError::new(
            ErrorKind::Semantic,
            format!("the graph has no node {}", start.index()),
        ));
    }
    let mut notes = Vec::new();
    let types: Option<Vec<Option<u32>>> = match &opts.rel_types {
        None => None,
        Some(names) => {
            let mut ids = Vec::with_capacity(names.len());
            let mut problems = Vec::new();
            for name in names {
                let resolved = match schema.resolve(NameKind::RelationshipType, name) {
                    Resolution::Known => Some(name.clone()),
                    Resolution::Alias(to) => Some(to),
                    Resolution::Unknown(n) if n.repair.is_some() => n.repair,
                    Resolution::Ambiguous(all) => {
                        problems.push(problem(name, true, all));
                        None
                    }
                    Resolution::Unknown(n) => {
                        problems.push(problem(name, false, n.suggestions));
                        None
                    }
                };
                if let Some(r) = resolved {
                    if r != *name {
                        notes.push(format!("relationship type `{name}` read as `{r}`"));
                    }
                    ids.push(graph.type_id(&r));
                }
            }
            if !problems.is_empty() {
                let mut e = QueryError::new(
                    ErrorKind::UnknownName,
                    // Said of the types given: the caller names the option.
                    "names types the ontology does not have",
                );
                e.details.problems = problems;
                return Err(e);
            }
            Some(ids)
        }
    };
    let follows = |e: EdgeId| match &types {
        None => true,
        Some(ids) => {
            let t = graph.edge_type_id(e);
            ids.iter().any(|id| id.is_some() && *id == t)
        }
    };

    let mut depth_of: HashMap<NodeId, usize> = HashMap::new();
    let mut nodes = vec![Reached {
        node: start,
        depth: 0,
    }];
    depth_of.insert(start, 0);
    let mut queue = VecDeque::from([start]);
    let mut truncated = false;
    let limit = opts.max_nodes.max(1);
    'bfs: while let Some(n) = queue.pop_front() {
        let d = depth_of.get(&n).copied().unwrap_or(0);
        if d >= opts.depth {
            continue;
        }
        let out = match opts.direction {
            TraverseDirection::Incoming => &[][..],
            _ => graph.out_edges(n),
        };
        let inc = match opts.direction {
            TraverseDirection::Outgoing => &[][..],
            _ => graph.in_edges(n),
        };
        let next = out
            .iter()
            .filter_map(|&e| graph.endpoints(e).map(|(_, to)| (e, to)))
            .chain(
                inc.iter()
                    .filter_map(|&e| graph.endpoints(e).map(|(from, _)| (e, from))),
            );
        for (e, other) in next {
            if !follows(e) || depth_of.contains_key(&other) {
                continue;
            }
            if nodes.len() >= limit {
                truncated = true;
                break 'bfs;
            }
            depth_of.insert(other, d + 1);
            nodes.push(Reached {
                node: other,
                depth: d + 1,
            });
            queue.push_back(other);
        }
    }
    let mut edges = Vec::new();
    for r in &nodes {
        for &e in graph.out_edges(r.node) {
            let reached = graph
                .endpoints(e)
                .is_some_and(|(_, to)| depth_of.contains_key(&to));
            if reached && follows(e) {
                edges.push(e);
            }
        }
    }
    Ok(Subgraph {
        nodes,
        edges,
        truncated,
        notes,
    })
}

fn problem(name: &str, ambiguous: bool, suggestions: Vec<String>) -> NameProblem {
    NameProblem {
        kind: NameKind::RelationshipType,
        name: name.to_string(),
        position: None,
        span: (0, 0),
        ambiguous,
        suggestions,
        repair: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::value::Value;
    use super::*;

    fn chain() -> (PropertyGraph, Vec<NodeId>) {
        // a -R-> b -R-> c -R-> a (a cycle), b -S-> d, e -R-> a
        let mut g = PropertyGraph::new();
        let none: [(&str, Value); 0] = [];
        let ids: Vec<NodeId> = (0..5).map(|_| g.add_node(["N"], none.clone())).collect();
        let e = |i: usize| ids[i];
        for (f, t, ty) in [
            (0, 1, "R"),
            (1, 2, "R"),
            (2, 0, "R"),
            (1, 3, "S"),
            (4, 0, "R"),
        ] {
            g.add_edge(e(f), e(t), ty, none.clone()).unwrap();
        }
        (g, ids)
    }

    fn opts(depth: usize, types: Option<&[&str]>, direction: TraverseDirection) -> TraverseOptions {
        TraverseOptions {
            depth,
            rel_types: types.map(|t| t.iter().map(|s| s.to_string()).collect()),
            direction,
            max_nodes: 100,
        }
    }

    #[test]
    fn breadth_first_within_depth_along_chosen_types() {
        let (g, n) = chain();
        let s = Schema::from_graph(&g);
        let sub = traverse(&g, &s, n[0], &opts(1, None, TraverseDirection::Outgoing)).unwrap();
        assert_eq!(
            sub.nodes
                .iter()
                .map(|r| (r.node, r.depth))
                .collect::<Vec<_>>(),
            [(n[0], 0), (n[1], 1)]
        );
        let sub = traverse(
            &g,
            &s,
            n[0],
            &opts(5, Some(&["R"]), TraverseDirection::Outgoing),
        )
        .unwrap();
        assert_eq!(
            sub.nodes.len(),
            3,
            "the cycle ends the walk; S is not followed"
        );
        assert_eq!(sub.edges.len(), 3);
        let sub = traverse(&g, &s, n[0], &opts(1, None, TraverseDirection::Incoming)).unwrap();
        assert_eq!(
            sub.nodes.iter().map(|r| r.node).collect::<Vec<_>>(),
            [n[0], n[2], n[4]]
        );
        let sub = traverse(&g, &s, n[0], &opts(9, None, TraverseDirection::Both)).unwrap();
        assert_eq!(sub.nodes.len(), 5);
        assert!(!sub.truncated);
    }

    #[test]
    fn bounded_node_count_is_flagged() {
        let (g, n) = chain();
        let s = Schema::from_graph(&g);
        let mut o = opts(9, None, TraverseDirection::Both);
        o.max_nodes = 2;
        let sub = traverse(&g, &s, n[0], &o).unwrap();
        assert_eq!(sub.nodes.len(), 2);
        assert!(sub.truncated);
    }

    #[test]
    fn relationship_types_are_validated() {
        let (g, n) = chain();
        let s = Schema::from_graph(&g);
        let sub = traverse(
            &g,
            &s,
            n[0],
            &opts(1, Some(&["r"]), TraverseDirection::Outgoing),
        )
        .unwrap();
        assert_eq!(sub.notes, ["relationship type `r` read as `R`"]);
        let e = traverse(
            &g,
            &s,
            n[0],
            &opts(1, Some(&["HAS_PART"]), TraverseDirection::Outgoing),
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnknownName);
        assert_eq!(e.details.problems[0].name, "HAS_PART");
    }
}
