//! An in-memory property graph: nodes with labels and properties, directed typed
//! edges with properties, and the indexes a query starts from (nodes by label,
//! edges by node). Knows nothing of ontologies or of the query language.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use super::value::Value;

/// A node's index in its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(usize);

impl NodeId {
    /// The node's position in insertion order, from 0.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A relationship's index in its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeId(usize);

impl EdgeId {
    /// The relationship's position in insertion order, from 0.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A relationship that names a node the graph does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError {
    /// The missing node's index.
    pub node: usize,
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no node with index {}", self.node)
    }
}

impl std::error::Error for GraphError {}

/// Names stored once and referred to by dense ids, so that the evaluator compares
/// integers rather than strings.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interner {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Interner {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        // More than four billion distinct names cannot be built in memory anyway.
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    pub(crate) fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

// Labels and properties of all nodes (and properties of all edges) sit in one
// array each, a node holding the range of its own: a query scanning nodes in order
// then reads memory in order, instead of chasing a pointer per node.
#[derive(Clone, Debug)]
struct NodeData {
    /// Range into `node_labels`: label ids in the order given, without repeats.
    labels: Range<usize>,
    /// Range into `node_props`: properties sorted by key id.
    props: Range<usize>,
    out: Vec<EdgeId>,
    inc: Vec<EdgeId>,
}

#[derive(Clone, Debug)]
struct EdgeData {
    from: NodeId,
    to: NodeId,
    rel_type: u32,
    /// Range into `edge_props`, sorted by key id.
    props: Range<usize>,
}

/// A directed multigraph whose nodes carry labels and properties and whose edges
/// carry one type and properties. Built by the caller, read by queries.
#[derive(Clone, Debug, Default)]
pub struct PropertyGraph {
    nodes: Vec<NodeData>,
    edges: Vec<EdgeData>,
    node_labels: Vec<u32>,
    node_props: Vec<(u32, Value)>,
    edge_props: Vec<(u32, Value)>,
    labels: Interner,
    types: Interner,
    keys: Interner,
    by_label: Vec<Vec<NodeId>>,
}

impl PropertyGraph {
    /// An empty graph.
    pub fn new() -> PropertyGraph {
        PropertyGraph::default()
    }

    /// Adds a node with its labels (repeats are dropped) and properties (a repeated
    /// key keeps its last value; a null value is not stored, as in Cypher).
    pub fn add_node<L, K>(
        &mut self,
        labels: impl IntoIterator<Item = L>,
        props: impl IntoIterator<Item = (K, Value)>,
    ) -> NodeId
    where
        L: AsRef<str>,
        K: AsRef<str>,
    {
        let id = NodeId(self.nodes.len());
        let mut ids: Vec<u32> = Vec::new();
        for l in labels {
            let lid = self.labels.intern(l.as_ref());
            if !ids.contains(&lid) {
                ids.push(lid);
            }
        }
        for &lid in &ids {
            let i = lid as usize;
            if self.by_label.len() <= i {
                self.by_label.resize_with(i + 1, Vec::new);
            }
            if let Some(list) = self.by_label.get_mut(i) {
                list.push(id);
            }
        }
        let props = self.intern_props(props);
        let labels = self.node_labels.len()..self.node_labels.len() + ids.len();
        self.node_labels.extend(ids);
        let start = self.node_props.len();
        self.node_props.extend(props);
        self.nodes.push(NodeData {
            labels,
            props: start..self.node_props.len(),
            out: Vec::new(),
            inc: Vec::new(),
        });
        id
    }

    /// Adds a directed edge of type `rel_type` from `from` to `to`.
    pub fn add_edge<K: AsRef<str>>(
        &mut self,
        from: NodeId,
        to: NodeId,
        rel_type: &str,
        props: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<EdgeId, GraphError> {
        for n in [from, to] {
            if n.0 >= self.nodes.len() {
                return Err(GraphError { node: n.0 });
            }
        }
        let id = EdgeId(self.edges.len());
        let rel_type = self.types.intern(rel_type);
        let props = self.intern_props(props);
        let start = self.edge_props.len();
        self.edge_props.extend(props);
        self.edges.push(EdgeData {
            from,
            to,
            rel_type,
            props: start..self.edge_props.len(),
        });
        if let Some(n) = self.nodes.get_mut(from.0) {
            n.out.push(id);
        }
        if let Some(n) = self.nodes.get_mut(to.0) {
            n.inc.push(id);
        }
        Ok(id)
    }

    fn intern_props<K: AsRef<str>>(
        &mut self,
        props: impl IntoIterator<Item = (K, Value)>,
    ) -> Vec<(u32, Value)> {
        let mut out: Vec<(u32, Value)> = Vec::new();
        for (k, v) in props {
            let kid = self.keys.intern(k.as_ref());
            out.retain(|(x, _)| *x != kid);
            if !v.is_null() {
                out.push((kid, v));
            }
        }
        out.sort_by_key(|(k, _)| *k);
        out
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of relationships.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Every node id, in insertion order.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len()).map(NodeId)
    }

    /// The node with index `i`, if there is one.
    pub fn node_at(&self, i: usize) -> Option<NodeId> {
        (i < self.nodes.len()).then_some(NodeId(i))
    }

    /// A node's labels, in the order they were given.
    pub fn labels(&self, node: NodeId) -> impl Iterator<Item = &str> {
        self.node_label_ids(node)
            .iter()
            .map(|&l| self.labels.name(l))
    }

    /// True when the node carries `label`.
    pub fn has_label(&self, node: NodeId, label: &str) -> bool {
        self.labels
            .get(label)
            .is_some_and(|l| self.has_label_id(node, l))
    }

    /// A node's property, if set.
    pub fn property(&self, node: NodeId, key: &str) -> Option<&Value> {
        let k = self.keys.get(key)?;
        self.node_property_id(node, k)
    }

    /// A node's properties, by key id order.
    pub fn properties(&self, node: NodeId) -> impl Iterator<Item = (&str, &Value)> {
        self.node_prop_ids(node)
            .iter()
            .map(|(k, v)| (self.keys.name(*k), v))
    }

    /// The first node (in insertion order) whose property `key` equals `value`.
    pub fn find_node(&self, key: &str, value: &Value) -> Option<NodeId> {
        let k = self.keys.get(key)?;
        self.node_ids()
            .find(|&n| self.node_property_id(n, k) == Some(value))
    }

    /// A relationship's start and end nodes.
    pub fn endpoints(&self, edge: EdgeId) -> Option<(NodeId, NodeId)> {
        self.edges.get(edge.0).map(|e| (e.from, e.to))
    }

    /// A relationship's type.
    pub fn rel_type(&self, edge: EdgeId) -> Option<&str> {
        self.edges.get(edge.0).map(|e| self.types.name(e.rel_type))
    }

    /// A relationship's property, if set.
    pub fn edge_property(&self, edge: EdgeId, key: &str) -> Option<&Value> {
        let k = self.keys.get(key)?;
        self.edge_property_id(edge, k)
    }

    /// A relationship's properties, by key id order.
    pub fn edge_properties(&self, edge: EdgeId) -> impl Iterator<Item = (&str, &Value)> {
        self.edge_prop_ids(edge)
            .iter()
            .map(|(k, v)| (self.keys.name(*k), v))
    }

    /// Relationships leaving a node, in insertion order.
    pub fn out_edges(&self, node: NodeId) -> &[EdgeId] {
        self.nodes.get(node.0).map_or(&[], |n| &n.out)
    }

    /// Relationships entering a node, in insertion order.
    pub fn in_edges(&self, node: NodeId) -> &[EdgeId] {
        self.nodes.get(node.0).map_or(&[], |n| &n.inc)
    }

    /// Every label some node carries.
    pub fn label_names(&self) -> impl Iterator<Item = &str> {
        self.labels.names()
    }

    /// Every relationship type some edge has.
    pub fn rel_type_names(&self) -> impl Iterator<Item = &str> {
        self.types.names()
    }

    /// Every property key some node or edge has.
    pub fn property_keys(&self) -> impl Iterator<Item = &str> {
        self.keys.names()
    }

    // The evaluator's accessors, by interned id.

    pub(crate) fn label_id(&self, label: &str) -> Option<u32> {
        self.labels.get(label)
    }

    pub(crate) fn type_id(&self, rel_type: &str) -> Option<u32> {
        self.types.get(rel_type)
    }

    pub(crate) fn key_id(&self, key: &str) -> Option<u32> {
        self.keys.get(key)
    }

    pub(crate) fn has_label_id(&self, node: NodeId, label: u32) -> bool {
        self.node_label_ids(node).contains(&label)
    }

    pub(crate) fn nodes_with_label(&self, label: u32) -> &[NodeId] {
        self.by_label.get(label as usize).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn node_property_id(&self, node: NodeId, key: u32) -> Option<&Value> {
        find_key(self.node_prop_ids(node), key)
    }

    pub(crate) fn edge_property_id(&self, edge: EdgeId, key: u32) -> Option<&Value> {
        find_key(self.edge_prop_ids(edge), key)
    }

    pub(crate) fn edge_type_id(&self, edge: EdgeId) -> Option<u32> {
        self.edges.get(edge.0).map(|e| e.rel_type)
    }

    pub(crate) fn node_label_ids(&self, node: NodeId) -> &[u32] {
        self.nodes
            .get(node.0)
            .and_then(|n| self.node_labels.get(n.labels.clone()))
            .unwrap_or(&[])
    }

    pub(crate) fn node_prop_ids(&self, node: NodeId) -> &[(u32, Value)] {
        self.nodes
            .get(node.0)
            .and_then(|n| self.node_props.get(n.props.clone()))
            .unwrap_or(&[])
    }

    pub(crate) fn edge_prop_ids(&self, edge: EdgeId) -> &[(u32, Value)] {
        self.edges
            .get(edge.0)
            .and_then(|e| self.edge_props.get(e.props.clone()))
            .unwrap_or(&[])
    }

    pub(crate) fn key_name(&self, id: u32) -> &str {
        self.keys.name(id)
    }
}

/// The value of `key` in properties sorted by key id. Few keys: a linear scan
/// beats a binary search's branches.
fn find_key(props: &[(u32, Value)], key: u32) -> Option<&Value> {
    props.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_and_edges_are_indexed() {
        let mut g = PropertyGraph::new();
        let none: [(&str, Value); 0] = [];
        let a = g.add_node(
            ["A", "B", "A"],
            [("name", Value::from("a")), ("x", Value::Null)],
        );
        let b = g.add_node(["B"], none.clone());
        let e = g.add_edge(a, b, "R", [("w", Value::Int(2))]).unwrap();
        assert_eq!(g.labels(a).collect::<Vec<_>>(), ["A", "B"]);
        assert!(g.has_label(b, "B") && !g.has_label(b, "A") && !g.has_label(b, "Z"));
        assert_eq!(g.property(a, "name"), Some(&Value::from("a")));
        assert_eq!(g.property(a, "x"), None);
        assert_eq!(g.endpoints(e), Some((a, b)));
        assert_eq!(g.rel_type(e), Some("R"));
        assert_eq!(g.edge_property(e, "w"), Some(&Value::Int(2)));
        assert_eq!(g.out_edges(a), &[e]);
        assert_eq!(g.in_edges(b), &[e]);
        assert_eq!(g.nodes_with_label(g.label_id("B").unwrap()), &[a, b]);
        assert_eq!(g.find_node("name", &Value::from("a")), Some(a));
        assert!(g.add_edge(a, NodeId(7), "R", none).is_err());
    }
}
