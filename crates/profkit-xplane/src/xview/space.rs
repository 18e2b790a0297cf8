//! The view of a whole XSpace: its planes and other fields, in file order.

use profkit_wire::LEN;

use crate::error::Result;
use crate::options::{ReadOptions, check_size};
use crate::proto::XSpace;
use crate::wire::Msg;

use super::*;

/// A borrowed view of an encoded XSpace.
#[derive(Clone, Copy)]
pub struct XSpaceView<'a> {
    pub(super) root: Root<'a>,
}

/// One top-level item of a viewed XSpace, in file order.
// Items are handed out one at a time; boxing the plane would allocate per plane for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum SpaceItemView<'a> {
    /// An element of `XSpace.planes`.
    Plane(XPlaneView<'a>),
    /// An element of `XSpace.errors`.
    Error(&'a str),
    /// An element of `XSpace.warnings`.
    Warning(&'a str),
    /// An element of `XSpace.hostnames`.
    Hostname(&'a str),
}

impl<'a> XSpaceView<'a> {
    /// A view of `bytes`, an encoded XSpace, under the default size limit. Nothing is read yet.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        Self::with_options(bytes, ReadOptions::default())
    }

    /// A view of `bytes` under `options` (an input over `max_size` is refused).
    pub fn with_options(bytes: &'a [u8], options: ReadOptions) -> Result<Self> {
        check_size("XSpace", 0, bytes.len() as u64, options.max_size)?;
        Ok(XSpaceView {
            root: Root {
                msg: Msg::Space,
                body: bytes,
                base: 0,
                open: true,
                plane: None,
            },
        })
    }

    /// The encoded bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.root.body
    }

    /// Every top-level item in file order.
    pub fn items(&self) -> SpaceItems<'a> {
        SpaceItems {
            root: self.root,
            fields: Fields::new(self.root.body),
            planes: 0,
            done: false,
        }
    }

    /// The planes, in file order.
    pub fn planes(&self) -> impl Iterator<Item = Result<XPlaneView<'a>>> + 'a {
        self.items().filter_map(|item| match item {
            Ok(SpaceItemView::Plane(plane)) => Some(Ok(plane)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// The strings of `XSpace.hostnames`.
    pub fn hostnames(&self) -> impl Iterator<Item = Result<&'a str>> + 'a {
        self.items().filter_map(|item| match item {
            Ok(SpaceItemView::Hostname(s)) => Some(Ok(s)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// Walks every field of the space, so that it is accepted or refused exactly as
    /// [`crate::decode`] would.
    pub fn check(&self) -> Result<()> {
        for item in self.items() {
            if let SpaceItemView::Plane(plane) = item? {
                plane.check()?;
            }
        }
        Ok(())
    }

    /// The owned XSpace, as [`crate::decode`] builds it (with byte fields copied).
    pub fn to_owned_space(&self) -> Result<XSpace> {
        self.owned_with(None)
    }

    /// The owned XSpace, its byte fields sharing `owner` (the buffer this view is of).
    pub(crate) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XSpace> {
        let mut space = XSpace::default();
        for item in self.items() {
            match item? {
                SpaceItemView::Plane(plane) => space.planes.push(plane.owned_with(owner)?),
                SpaceItemView::Error(s) => space.errors.push(s.to_owned()),
                SpaceItemView::Warning(s) => space.warnings.push(s.to_owned()),
                SpaceItemView::Hostname(s) => space.hostnames.push(s.to_owned()),
            }
        }
        Ok(space)
    }
}

/// The top-level items of an [`XSpaceView`].
pub struct SpaceItems<'a> {
    pub(super) root: Root<'a>,
    pub(super) fields: Fields<'a>,
    pub(super) planes: usize,
    pub(super) done: bool,
}

impl<'a> SpaceItems<'a> {
    pub(super) fn step(&mut self) -> Walk<Option<SpaceItemView<'a>>> {
        while !self.fields.at_end() {
            let (number, wire_type) = self.fields.tag()?;
            match (number, wire_type) {
                (1, LEN) => {
                    let body = self.fields.bytes()?;
                    let index = self.planes;
                    self.planes += 1;
                    return XPlaneView::parse(self.root, body, index)
                        .map(SpaceItemView::Plane)
                        .map(Some);
                }
                (2, LEN) => return Ok(Some(SpaceItemView::Error(self.fields.str()?))),
                (3, LEN) => return Ok(Some(SpaceItemView::Warning(self.fields.str()?))),
                (4, LEN) => return Ok(Some(SpaceItemView::Hostname(self.fields.str()?))),
                _ => self.fields.other(Msg::Space, number, wire_type)?,
            }
        }
        Ok(None)
    }
}

impl<'a> Iterator for SpaceItems<'a> {
    type Item = Result<SpaceItemView<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
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

impl std::iter::FusedIterator for SpaceItems<'_> {}
