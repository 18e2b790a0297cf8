//! Strings kept once each: names, categories, arg keys and string values repeat over millions of
//! events.

use std::rc::Rc;

use rustc_hash::FxHashMap;

/// Strings kept once each (names, categories, arg keys and string values).
#[derive(Default)]
pub(crate) struct Interner {
    /// By their bytes, so that a string read as bytes is looked up before its UTF-8 is checked.
    pub(crate) ids: FxHashMap<SharedStr, u32>,
    /// The same strings as `ids` holds (one allocation each, shared).
    pub(crate) strings: Vec<SharedStr>,
    /// Whether each string was asked for more than once.
    pub(crate) repeated: Vec<bool>,
    /// A buffer for the JSON text of nested args.
    pub(crate) scratch: Vec<u8>,
    /// The id last found for strings of each [`quick_slot`]: names and categories come back
    /// over and over, and a check against the string found is cheaper than hashing it.
    pub(crate) recent: Vec<u32>,
}

/// An interned string, kept once for both the map and the list of [`Interner`].
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SharedStr(Rc<str>);

impl std::hash::Hash for SharedStr {
    /// As its bytes hash, which it is looked up by.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_bytes().hash(state);
    }
}

impl std::borrow::Borrow<[u8]> for SharedStr {
    fn borrow(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// The slot of a string in [`Interner::recent`], from its length and its first and last eight
/// bytes.
pub(crate) fn quick_slot(bytes: &[u8]) -> usize {
    let (head, tail) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        _ => {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(bytes) {
                *d = *s;
            }
            (u64::from_le_bytes(w), 0)
        }
    };
    let mixed =
        (head ^ tail.rotate_left(29) ^ bytes.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 54) as usize
}

/// How many slots [`Interner::recent`] has (`quick_slot` gives ten bits).
pub(crate) const RECENT_SLOTS: usize = 1 << 10;

impl Interner {
    pub(crate) fn id(&mut self, s: &str) -> u32 {
        match self.known(s.as_bytes()) {
            Some(id) => id,
            None => self.insert(s),
        }
    }

    /// The id of a string given as bytes; `None` when they are not UTF-8. Only a string not seen
    /// before is checked.
    pub(crate) fn id_bytes(&mut self, bytes: &[u8]) -> Option<u32> {
        match self.known(bytes) {
            Some(id) => Some(id),
            None => std::str::from_utf8(bytes).ok().map(|s| self.insert(s)),
        }
    }

    pub(crate) fn known(&mut self, bytes: &[u8]) -> Option<u32> {
        if self.recent.is_empty() {
            self.recent = vec![u32::MAX; RECENT_SLOTS];
        }
        let slot = quick_slot(bytes);
        let recent = self.recent.get(slot).copied().unwrap_or(u32::MAX);
        let id = match self.strings.get(recent as usize) {
            Some(s) if s.0.as_bytes() == bytes => recent,
            _ => {
                let id = *self.ids.get(bytes)?;
                if let Some(r) = self.recent.get_mut(slot) {
                    *r = id;
                }
                id
            }
        };
        if let Some(r) = self.repeated.get_mut(id as usize) {
            *r = true;
        }
        Some(id)
    }

    pub(crate) fn insert(&mut self, s: &str) -> u32 {
        let id = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        let shared = SharedStr(s.into());
        self.strings.push(shared.clone());
        self.repeated.push(false);
        self.ids.insert(shared, id);
        id
    }

    pub(crate) fn is_repeated(&self, id: u32) -> bool {
        self.repeated.get(id as usize).copied().unwrap_or(false)
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| &s.0)
    }
}
