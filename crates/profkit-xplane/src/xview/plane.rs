//! The view of one XPlane: its lines, stats and metadata, walked without decoding the events.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use profkit_wire::{LEN, VARINT};

use crate::error::Result;
use crate::proto::XPlane;
use crate::wire::Msg;

use super::*;

/// A borrowed view of one XPlane. Its own scalar fields are decoded when the view is made; lines,
/// stats and metadata when they are asked for.
#[derive(Clone)]
pub struct XPlaneView<'a> {
    pub(super) root: Root<'a>,
    pub(super) body: &'a [u8],
    pub(super) index: usize,
    pub(super) id: i64,
    pub(super) name: &'a str,
    pub(super) lines: usize,
    pub(super) stats: usize,
    pub(super) metadata: OnceCell<PlaneMetadata<'a>>,
}

impl<'a> XPlaneView<'a> {
    /// A view of `bytes`, one encoded XPlane on its own (errors are located in `XPlane`).
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let root = Root {
            msg: Msg::Plane,
            body: bytes,
            base: 0,
            open: true,
            plane: None,
        };
        Self::parse(root, bytes, 0).map_err(|Bad| root.error())
    }

    /// A view of `bytes`, the `index`th plane of a space, read on its own from byte `offset` of
    /// the input (as the streaming reader does).
    pub(crate) fn streamed(bytes: &'a [u8], offset: u64, index: usize) -> Result<Self> {
        let root = Root {
            msg: Msg::Plane,
            body: bytes,
            base: offset,
            open: false,
            plane: Some(index),
        };
        Self::parse(root, bytes, index).map_err(|Bad| root.error())
    }

    pub(super) fn parse(root: Root<'a>, body: &'a [u8], index: usize) -> Walk<Self> {
        let mut plane = XPlaneView {
            root,
            body,
            index,
            id: 0,
            name: "",
            lines: 0,
            stats: 0,
            metadata: OnceCell::new(),
        };
        let mut f = Fields::new(body);
        while !f.at_end() {
            match f.tag()? {
                (1, VARINT) => plane.id = f.varint()? as i64,
                (2, LEN) => plane.name = f.str()?,
                (3, LEN) => {
                    f.bytes()?;
                    plane.lines += 1;
                }
                (6, LEN) => {
                    f.bytes()?;
                    plane.stats += 1;
                }
                (4 | 5, LEN) => {
                    f.bytes()?;
                }
                (number, wire_type) => f.other(Msg::Plane, number, wire_type)?,
            }
        }
        Ok(plane)
    }

    /// The encoded plane.
    pub fn bytes(&self) -> &'a [u8] {
        self.body
    }

    /// Its index in `XSpace.planes`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// `id`.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// `name`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// How many lines it holds.
    pub fn line_count(&self) -> usize {
        self.lines
    }

    /// How many plane stats it holds.
    pub fn stat_count(&self) -> usize {
        self.stats
    }

    /// The lines, in file order.
    pub fn lines(&self) -> Lines<'a> {
        Lines(Scan::new(self.root, self.body))
    }

    /// The plane's own stats, in file order.
    pub fn stats(&self) -> Stats<'a> {
        Stats {
            scan: Scan::new(self.root, self.body),
            msg: Msg::Plane,
            tag: T6_LEN,
        }
    }

    /// The metadata maps, indexed (and checked) the first time they are asked for.
    pub fn metadata(&self) -> Result<&PlaneMetadata<'a>> {
        if let Some(index) = self.metadata.get() {
            return Ok(index);
        }
        let index = PlaneMetadata::build(self.body).map_err(|Bad| self.root.error())?;
        Ok(self.metadata.get_or_init(|| index))
    }

    /// The plane with its metadata resolved: the API of [`crate::PlaneVisitor`] over this view.
    pub fn visitor(&self) -> Result<crate::PlaneViewVisitor<'_, 'a>> {
        crate::PlaneViewVisitor::new(self)
    }

    /// Walks every field of the plane.
    pub fn check(&self) -> Result<()> {
        self.metadata()?;
        for stat in self.stats() {
            stat?;
        }
        for line in self.lines() {
            for event in line?.events() {
                for stat in event?.stats() {
                    stat?;
                }
            }
        }
        Ok(())
    }

    /// The owned XPlane, as [`crate::decode_plane`] builds it.
    pub fn to_owned_plane(&self) -> Result<XPlane> {
        self.owned_with(None)
    }

    /// Whether decoding the lines on several threads pays: a pool of two threads or more, two
    /// lines or more but not many (each is a task), and enough events. `false` when a line's
    /// view does not read (the decode one line after the other then reports the first error).
    fn worth_parallel(&self) -> bool {
        if rayon::current_num_threads() < 2 {
            return false;
        }
        let (mut lines, mut events) = (0usize, 0usize);
        for line in self.lines() {
            let Ok(line) = line else {
                return false;
            };
            lines += 1;
            if lines > PARALLEL_MAX_LINES {
                return false;
            }
            events = events.saturating_add(line.event_count());
        }
        lines >= 2 && events >= PARALLEL_EVENTS
    }

    /// The owned XPlane, its byte fields sharing `owner` (the buffer this view is of).
    pub(crate) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XPlane> {
        self.owned_on(owner, false)
    }

    /// [`Self::owned_with`], a big plane's lines decoded on the threads of the current rayon
    /// pool when `parallel` (the same plane; the threads' allocations may raise the peak a
    /// little, so callers that count memory more than time leave it off).
    pub(crate) fn owned_on(&self, owner: Option<&bytes::Bytes>, parallel: bool) -> Result<XPlane> {
        let metadata = self.metadata()?;
        let mut plane = XPlane {
            id: self.id,
            name: self.name.to_owned(),
            lines: Vec::with_capacity(self.lines),
            event_metadata: metadata
                .events
                .iter()
                .map(|md| (md.key, md.to_owned_metadata(owner)))
                .collect::<BTreeMap<_, _>>(),
            stat_metadata: metadata
                .stats
                .iter()
                .map(|md| (md.key, md.to_owned_metadata()))
                .collect::<BTreeMap<_, _>>(),
            stats: Vec::with_capacity(self.stats),
        };
        for stat in self.stats() {
            plane.stats.push(stat?.owned_with(owner));
        }
        if !(parallel && self.worth_parallel()) {
            // One line after the other, as they come: no list of the lines' views (a plane of
            // millions of empty lines would hold it beside the decoded lines).
            for line in self.lines() {
                plane.lines.push(line?.owned_with(owner)?);
            }
            return Ok(plane);
        }
        // The lines on the pool's threads, taken in order: the same plane, and the same (first)
        // error, as one after the other (every line's view was read by `worth_parallel`).
        use rayon::prelude::*;
        let lines = self.lines().collect::<Result<Vec<_>>>()?;
        let owned: Vec<Result<_>> = lines.par_iter().map(|l| l.owned_with(owner)).collect();
        for line in owned {
            plane.lines.push(line?);
        }
        Ok(plane)
    }
}

/// The events from which a plane's lines are decoded in parallel (below it, the threads cost more
/// than they save).
const PARALLEL_EVENTS: usize = 50_000;

/// The most lines a plane's lines are decoded in parallel for (their views are listed first).
const PARALLEL_MAX_LINES: usize = 4096;

/// A scan of one message body for the elements of a repeated message field.
#[derive(Clone)]
pub(super) struct Scan<'a> {
    pub(super) root: Root<'a>,
    pub(super) fields: Fields<'a>,
    pub(super) done: bool,
}

impl<'a> Scan<'a> {
    pub(super) fn new(root: Root<'a>, body: &'a [u8]) -> Self {
        Scan {
            root,
            fields: Fields::new(body),
            done: false,
        }
    }

    /// The next element of the field whose tag byte is `tag` in `msg`, decoded by `parse`.
    #[inline(always)]
    pub(super) fn next_with<T>(
        &mut self,
        msg: Msg,
        tag: u8,
        parse: impl Fn(Root<'a>, &'a [u8]) -> Walk<T>,
    ) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        let step = (|| {
            while !self.fields.at_end() {
                let key = self.fields.varint()?;
                if key_byte(key) == tag {
                    let body = self.fields.bytes()?;
                    return parse(self.root, body).map(Some);
                }
                let (number, wire_type) = checked_tag(key)?;
                self.fields.other(msg, number, wire_type)?;
            }
            Ok(None)
        })();
        match step {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(Bad) => {
                self.done = true;
                Some(Err(self.root.error()))
            }
        }
    }
}

/// The lines of a plane, each decoded as it is reached.
#[derive(Clone)]
pub struct Lines<'a>(Scan<'a>);

impl<'a> Iterator for Lines<'a> {
    type Item = Result<XLineView<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_with(Msg::Plane, T3_LEN, XLineView::parse)
    }
}

impl std::iter::FusedIterator for Lines<'_> {}

/// The stats of a plane or of an event, each decoded as it is reached.
#[derive(Clone)]
pub struct Stats<'a> {
    pub(super) scan: Scan<'a>,
    pub(super) msg: Msg,
    pub(super) tag: u8,
}

impl<'a> Iterator for Stats<'a> {
    type Item = Result<XStatView<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.scan
            .next_with(self.msg, self.tag, |_, body| XStatView::decode(body))
    }
}

impl std::iter::FusedIterator for Stats<'_> {}
