//! A map keyed by node, for values only some nodes have: the nodes' entries in node order in one
//! vector, looked up by binary search. Nodes are numbered as they are taken in and their values
//! are set as they are, so an entry goes at the end (or replaces the last); a hash map cost twice
//! the memory (its control bytes and spare capacity) for lookups the grouping makes few of.

/// Values by node, kept in node order.
#[derive(Clone, Debug)]
pub(super) struct NodeMap<V> {
    entries: Vec<(u32, V)>,
}

impl<V> Default for NodeMap<V> {
    fn default() -> Self {
        NodeMap {
            entries: Vec::new(),
        }
    }
}

impl<V> NodeMap<V> {
    /// Sets the value of `node` (a later value for the same node replacing the earlier one).
    pub(super) fn insert(&mut self, node: u32, value: V) {
        match self.entries.last_mut() {
            None => self.entries.push((node, value)),
            Some(last) if last.0 < node => self.entries.push((node, value)),
            Some(last) if last.0 == node => last.1 = value,
            // Out of order: kept sorted (not a path the forest takes).
            Some(_) => match self.entries.binary_search_by_key(&node, |e| e.0) {
                Ok(at) => {
                    if let Some(entry) = self.entries.get_mut(at) {
                        entry.1 = value;
                    }
                }
                Err(at) => self.entries.insert(at, (node, value)),
            },
        }
    }

    /// Adds the entries of `other` (those of nodes after this map's, as a part's are: moved in
    /// at its end; else inserted one by one).
    pub(super) fn append(&mut self, other: NodeMap<V>) {
        let after = match (self.entries.last(), other.entries.first()) {
            (Some(last), Some(first)) => last.0 < first.0,
            _ => true,
        };
        if after {
            if self.entries.is_empty() {
                self.entries = other.entries;
            } else {
                self.entries.extend(other.entries);
            }
        } else {
            for (node, value) in other.entries {
                self.insert(node, value);
            }
        }
    }

    pub(super) fn get(&self, node: &u32) -> Option<&V> {
        let at = self.entries.binary_search_by_key(node, |e| e.0).ok()?;
        self.entries.get(at).map(|e| &e.1)
    }

    /// The entries in node order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, &V)> + '_ {
        self.entries.iter().map(|(node, value)| (*node, value))
    }

    /// A reader of values for nodes asked in increasing order (each lookup from where the last
    /// one ended: a walk of the map in all, not a search per node).
    pub(super) fn cursor(&self) -> Cursor<'_, V> {
        Cursor {
            entries: &self.entries,
        }
    }

    pub(super) fn contains_key(&self, node: &u32) -> bool {
        self.get(node).is_some()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// See [`NodeMap::cursor`].
pub(super) struct Cursor<'a, V> {
    entries: &'a [(u32, V)],
}

impl<'a, V> Cursor<'a, V> {
    /// The value of `node`, which must not be below the node of the previous call (a node below
    /// it reads as having none).
    pub(super) fn get(&mut self, node: u32) -> Option<&'a V> {
        while let Some(((first, value), rest)) = self.entries.split_first() {
            if *first >= node {
                return (*first == node).then_some(value);
            }
            self.entries = rest;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::NodeMap;

    #[test]
    fn a_node_map_reads_as_a_map_whatever_the_order_of_its_inserts() {
        let mut map = NodeMap::default();
        let mut reference = std::collections::BTreeMap::new();
        // In order, repeated, then out of order (before, between and on existing keys).
        for (node, value) in [
            (1, 10),
            (3, 30),
            (3, 31),
            (7, 70),
            (0, 5),
            (5, 50),
            (3, 32),
            (9, 90),
        ] {
            map.insert(node, value);
            reference.insert(node, value);
        }
        assert_eq!(map.len(), reference.len());
        // Appended after its last node, and over it.
        let mut after = NodeMap::default();
        after.insert(10, 100);
        after.insert(12, 120);
        let mut over = NodeMap::default();
        over.insert(3, 33);
        over.insert(11, 110);
        let mut appended = map.clone();
        appended.append(after);
        appended.append(over);
        let mut expected = reference.clone();
        expected.extend([(10, 100), (12, 120), (3, 33), (11, 110)]);
        assert!(
            appended
                .iter()
                .map(|(n, v)| (n, *v))
                .eq(expected.into_iter())
        );
        let mut cursor = map.cursor();
        for node in [0u32, 1, 1, 2, 3, 6, 7, 9, 11] {
            assert_eq!(cursor.get(node), reference.get(&node), "node {node}");
        }
        assert!(map.iter().map(|(n, _)| n).eq(reference.keys().copied()));
        for node in 0..12u32 {
            assert_eq!(map.get(&node), reference.get(&node), "node {node}");
            assert_eq!(map.contains_key(&node), reference.contains_key(&node));
        }
    }
}
