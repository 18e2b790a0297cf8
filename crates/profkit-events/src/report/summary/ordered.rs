//! A map that iterates in insertion order, as Python's `dict` does: Paddle's summary lists its rows
//! in the order their keys first came.

use std::collections::HashMap;

/// A map that iterates in insertion order, as Python's `dict`.
#[derive(Clone, Debug)]
pub(super) struct Ordered<T> {
    pub(super) index: HashMap<String, usize>,
    pub(super) items: Vec<T>,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered {
            index: HashMap::new(),
            items: Vec::new(),
        }
    }
}

impl<T> Ordered<T> {
    pub(super) fn entry(&mut self, key: &str, make: impl FnOnce() -> T) -> &mut T {
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                // One item exactly at first: a map per thread often holds one, and the usual
                // first growth to four items made a trace of one event per thread take 70x
                // its size in memory.
                if self.items.capacity() == 0 {
                    self.items.reserve_exact(1);
                }
                self.items.push(make());
                self.index.insert(key.to_owned(), self.items.len() - 1);
                self.items.len() - 1
            }
        };
        let last = self.items.len() - 1;
        // `i` is always an index of `items`; the fallback is never taken.
        &mut self.items[i.min(last)]
    }
}
