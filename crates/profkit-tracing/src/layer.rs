//! The layer: spans entered and exited become the recorder's pushes and pops on the thread that
//! entered them, events its marks; fields and links go to the store under a serial that the push
//! or mark carries as its tag.
//!
//! The hot path (entering and exiting a span without fields) is a relaxed load of the recorder's
//! state, a lookup of the span in the registry, a push or pop (a time-stamp counter read and a
//! few stores into the thread's block) and an entry on a per-thread stack of what was entered, so
//! that a span entered before recording started, or after it ended, gets no lone pop.

use std::cell::RefCell;

use profkit_events::recorder;
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Interest, LevelFilter, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::fields::{Collect, Fields, Value};
use crate::store::{self, SpanKey};

/// The serial of a span with fields or links, kept in its registry extensions.
struct Serial(u64);

/// The name of the mark that times a `follows_from` link (it is not written out).
pub(crate) const LINK_MARK: &str = "profkit_tracing::follows_from";

/// The name of the mark that gives a thread's operating-system id (it is not written out).
pub(crate) const THREAD_MARK: &str = "profkit_tracing::thread";

/// What the layer keeps per thread.
struct Local {
    /// The spans this thread entered while recording: (span id, name), innermost last.
    entered: Vec<(u64, &'static str)>,
    /// The session in which the thread last said its id.
    session: u64,
    /// The thread's operating-system id, once looked up (`None` inside: there is none to have).
    tid: Option<Option<u64>>,
}

thread_local! {
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local { entered: Vec::new(), session: 0, tid: None })
    };
}

/// The calling thread's id as the operating system knows it (Linux: from `/proc/thread-self`,
/// `<pid>/task/<tid>`), as TensorFlow names the lines of its host threads.
fn os_tid() -> Option<u64> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

impl Local {
    /// Records the thread's id once per session, as a mark the capture turns into the line id.
    #[inline]
    fn say_tid(&mut self) {
        let session = store::session();
        if self.session != session {
            self.session = session;
            if let Some(tid) = *self.tid.get_or_insert_with(os_tid) {
                recorder::mark_tagged(THREAD_MARK, tid);
            }
        }
    }
}

/// A `tracing_subscriber::Layer` that records spans with profkit's recorder.
///
/// It records only during a session ([`crate::start`] to [`crate::stop`], which
/// [`crate::Builder::build`] and its [`crate::FlushGuard`] call, as a profiler plugin does): the
/// recorder on. Off, each callback returns after one relaxed atomic load, and spans and events are
/// still made by `tracing` for the other layers of the subscriber. When this is the only layer,
/// make it [`ProfkitLayer::gated`]: then, off, `tracing` does not even make them, and a span costs
/// about as much as with no subscriber at all.
#[derive(Clone, Debug, Default)]
pub struct ProfkitLayer {
    fields: Fields,
    gated: bool,
}

impl ProfkitLayer {
    /// A layer that keeps every field.
    pub fn new() -> ProfkitLayer {
        ProfkitLayer::default()
    }

    /// The layer keeping the given fields.
    pub fn with_fields(fields: Fields) -> ProfkitLayer {
        ProfkitLayer {
            fields,
            gated: false,
        }
    }

    /// The layer telling `tracing` that spans and events are wanted only while the recorder is
    /// on, so that, off, a span costs `tracing`'s level check and nothing more. This filters the
    /// whole subscriber: other layers beside it see nothing while the recorder is off either, so
    /// gate only a layer that is alone (or wrap it in a per-layer filter of `tracing_subscriber`
    /// instead). `tracing` caches the answer per call site: start and stop sessions with
    /// [`crate::start`] and [`crate::stop`] (or the [`crate::Builder`] and its guard), which have
    /// it asked again, rather than with the recorder's own `enable` and `disable`.
    pub fn gated(mut self) -> ProfkitLayer {
        self.gated = true;
        self
    }

    /// The kept fields `record` visits; `message` too when `named` (an event's text names it).
    fn collect(
        &self,
        named: bool,
        record: impl FnOnce(&mut Collect<'_>),
    ) -> Vec<(&'static str, Value)> {
        let mut collect = Collect {
            filter: &self.fields,
            message: named,
            values: Vec::new(),
        };
        if named || self.fields.any() {
            record(&mut collect);
        }
        collect.values
    }
}

/// The serial of span `id`, made if it has none.
fn serial_of<S>(id: &Id, ctx: &Context<'_, S>) -> Option<u64>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let span = ctx.span(id)?;
    if let Some(serial) = span.extensions().get::<Serial>() {
        return Some(serial.0);
    }
    let serial = store::serial();
    span.extensions_mut().insert(Serial(serial));
    Some(serial)
}

/// How a link names span `id`.
fn key_of<S>(id: &Id, ctx: &Context<'_, S>) -> SpanKey
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    SpanKey {
        serial: ctx
            .span(id)
            .and_then(|span| span.extensions().get::<Serial>().map(|s| s.0)),
        id: id.into_u64(),
    }
}

impl<S> Layer<S> for ProfkitLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, _meta: &'static Metadata<'static>) -> Interest {
        // `tracing` caches this per call site; `crate::start` and `crate::stop` have it asked
        // again, so that a gated layer's call sites are off (`never`, one load and a compare)
        // while the recorder is.
        if !self.gated || recorder::is_enabled() {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, _meta: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        !self.gated || recorder::is_enabled()
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        // Off, `tracing`'s global level check turns every span and event away first.
        (self.gated && !recorder::is_enabled()).then_some(LevelFilter::OFF)
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !recorder::is_enabled() || attrs.fields().is_empty() {
            return;
        }
        let fields = self.collect(false, |c| attrs.record(c));
        if fields.is_empty() {
            return;
        }
        // A new span has no serial yet: no need to look for one.
        if let Some(span) = ctx.span(id) {
            let serial = store::serial();
            span.extensions_mut().insert(Serial(serial));
            store::add(serial, fields, None);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if !recorder::is_enabled() {
            return;
        }
        let fields = self.collect(false, |c| values.record(c));
        if fields.is_empty() {
            return;
        }
        if let Some(serial) = serial_of(id, &ctx) {
            store::add(serial, fields, None);
        }
    }

    fn on_follows_from(&self, id: &Id, follows: &Id, ctx: Context<'_, S>) {
        if !recorder::is_enabled() {
            return;
        }
        // The span followed has usually run already, its pushes tagged with its serial or its
        // registry id: the link names it by both, and a mark gives the time at which the id was
        // its.
        let link = store::serial();
        let (cause, effect) = (key_of(follows, &ctx), key_of(id, &ctx));
        if store::add(link, Vec::new(), Some((cause, effect))) {
            recorder::mark_tagged(LINK_MARK, link);
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !recorder::is_enabled() {
            return;
        }
        let _ = LOCAL.try_with(|local| {
            if let Ok(mut local) = local.try_borrow_mut() {
                local.say_tid();
            }
        });
        let name = event.metadata().name();
        let fields = self.collect(true, |c| event.record(c));
        if fields.is_empty() {
            recorder::mark(name);
        } else {
            let serial = store::serial();
            store::add(serial, fields, None);
            recorder::mark_tagged(name, serial);
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if !recorder::is_enabled() {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        let meta = span.metadata();
        let name = meta.name();
        // Only a span whose call site declares fields can have a serial (links name the others
        // by registry id): the others skip the look-up of their extensions.
        let serial = if meta.fields().is_empty() {
            None
        } else {
            span.extensions().get::<Serial>().map(|s| s.0)
        };
        let _ = LOCAL.try_with(|local| {
            if let Ok(mut local) = local.try_borrow_mut() {
                local.say_tid();
                local.entered.push((id.into_u64(), name));
            }
        });
        recorder::push_range_tagged(name, serial.unwrap_or_else(|| id.into_u64()));
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        let id = id.into_u64();
        let name = LOCAL
            .try_with(|local| {
                let entered = &mut local.try_borrow_mut().ok()?.entered;
                // Spans exit innermost first but for guards dropped out of order: search down.
                let at = entered.iter().rposition(|(i, _)| *i == id)?;
                Some(entered.remove(at).1)
            })
            .ok()
            .flatten();
        if let Some(name) = name {
            recorder::pop_range(name);
        }
    }
}
