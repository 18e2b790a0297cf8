//! Flow events: `s`/`t`/`f` bind to the slice enclosing them (or, for an `f` without
//! `"bp": "e"`, the next slice on its thread), and `bind_id` with `flow_in`/`flow_out` to their own
//! event. Either way the event gets `flow_in`/`flow_out` stats holding the flow's id and a
//! `flow_cat` stat (one per flow stat, in their order, when its flows have different categories).

use serde::de;

use crate::arg::{Arg, KeyArg};
use crate::dispatch::Placing;
use crate::event::{FlowPoint, Item, RawEvent};
use crate::trace::{Keys, Thread, Trace, Track};
use crate::warnings::WarningKind;

/// Keeps the flow categories each item of `thread` needs among its flow args (which hold, per
/// bound flow, its keys then its category). An event has one `flow_cat` stat for all its flows
/// when they share a category (its own args' `flow_cat`, if any, or the first bound flow's, as
/// before), else one per flow stat in the order of the flow stats (its own flows first, `flow`,
/// the writer's default, for a flow of no category), which the writer pairs by position.
pub(crate) fn flow_categories(thread: &mut Thread, keys: &Keys, flow_word: u32) {
    let is_flow = |key: u32| key == keys.flow_in || key == keys.flow_out;
    let mut kept: Vec<(usize, KeyArg)> = Vec::with_capacity(thread.flow_args.len());
    let mut rest = thread.flow_args.as_slice();
    let mut cats: Vec<Option<KeyArg>> = Vec::new();
    while let Some(&(index, _)) = rest.first() {
        let n = rest.iter().take_while(|(i, _)| *i == index).count();
        let (mine, after) = rest.split_at(n);
        rest = after;
        let own = thread
            .items
            .get(index)
            .map_or(&[][..], |item| thread.args.get(item.at, item.len));
        let own_flows = own.iter().filter(|a| is_flow(a.key)).count();
        let own_cat = own.iter().rev().find(|a| a.key == keys.flow_cat).copied();
        // The category of every flow stat, in order: the item's own, then each bound flow's.
        cats.clear();
        cats.extend(std::iter::repeat_n(own_cat, own_flows));
        let mut pending = 0;
        for (_, arg) in mine {
            if is_flow(arg.key) {
                pending += 1;
            } else if arg.key == keys.flow_cat {
                cats.extend(std::iter::repeat_n(Some(*arg), pending));
                pending = 0;
            }
        }
        let same = |a: &Option<KeyArg>, b: &Option<KeyArg>| {
            a.map(|a| (a.tag, a.bits)) == b.map(|b| (b.tag, b.bits))
        };
        let uniform = cats
            .iter()
            .all(|c| cats.first().is_some_and(|f| same(c, f)));
        if uniform || (own_cat.is_some() && own_flows == 0) {
            // As one category: the first bound flow's follows its keys, unless the item has its
            // own (which then stays the category of all).
            let mut cat_kept = own_cat.is_some();
            for &(i, arg) in mine {
                if arg.key != keys.flow_cat {
                    kept.push((i, arg));
                } else if !cat_kept {
                    kept.push((i, arg));
                    cat_kept = true;
                }
            }
        } else {
            kept.extend(mine.iter().filter(|(_, a)| is_flow(a.key)).copied());
            // The item's own `flow_cat` is the first of the list.
            let skip = usize::from(own_cat.is_some());
            for cat in cats.iter().skip(skip) {
                let cat = cat.unwrap_or(KeyArg::new(keys.flow_cat, Arg::Str(flow_word)));
                kept.push((index, cat));
            }
        }
    }
    thread.flow_args = kept;
}

/// `items.partition_point(pred)` (for a `pred` true on a prefix of `items`), searched outwards
/// from `hint`: close to the last answer, it takes a few steps where a binary search over all
/// items takes a cache miss a step.
pub(crate) fn partition_from(items: &[Item], hint: usize, pred: impl Fn(&Item) -> bool) -> usize {
    let hint = hint.min(items.len());
    let holds = |i: usize| items.get(i).is_some_and(&pred);
    let (mut lo, mut hi);
    if hint == items.len() || !holds(hint) {
        // The answer is at or before `hint`.
        hi = hint;
        let mut step = 1;
        lo = hint.saturating_sub(step);
        while lo > 0 && !holds(lo) {
            hi = lo;
            step *= 2;
            lo = lo.saturating_sub(step);
        }
        if !holds(lo) {
            return lo;
        }
        lo += 1;
    } else {
        // After `hint`.
        lo = hint + 1;
        let mut step = 1;
        hi = (hint + step).min(items.len());
        while hi < items.len() && holds(hi) {
            lo = hi + 1;
            step *= 2;
            hi = (hint + step).min(items.len());
        }
    }
    // `holds` is true before `lo` and false from `hi` on.
    lo + items
        .get(lo..hi.max(lo))
        .map_or(0, |range| range.partition_point(&pred))
}

impl Trace {
    /// A flow event (`s`, `t`, `f`), bound to its slice once all are read.
    pub(crate) fn flow_event<E: de::Error>(
        &mut self,
        raw: &mut RawEvent,
        ph: &str,
        event: Placing,
    ) -> std::result::Result<(), E> {
        let Placing {
            ts, pid, tid, name, ..
        } = event;
        // Borrowed: the event's buffer is used again for the next event's id.
        let Some(id) = raw.id.as_deref() else {
            return Err(E::custom(format!("the flow event {ph:?} has no \"id\"")));
        };
        let thread = self.thread(&pid, Track::Thread(tid));
        let id = self.flow_id(id);
        let cat = raw.cat.unwrap_or(name);
        self.flows.push(FlowPoint {
            thread,
            ts,
            phase: ph.as_bytes().first().copied().unwrap_or(b's'),
            enclosing: ph != "f" || raw.bp_enclosing,
            id,
            cat,
        });
        Ok(())
    }

    /// Stats for `bind_id` with `flow_in`/`flow_out` (flow events of the format's second version).
    pub(crate) fn flow_stats(&mut self, raw: &mut RawEvent, stats: &mut Vec<KeyArg>) {
        let Some(bind) = raw.bind_id.take() else {
            return;
        };
        let id = self.flow_id(&bind);
        if raw.flow_out {
            stats.push(KeyArg::new(self.keys.flow_out, id));
        }
        if raw.flow_in {
            stats.push(KeyArg::new(self.keys.flow_in, id));
        }
    }

    /// A flow id as a stat: a number when it is one (Kineto's correlation ids), else its text.
    pub(crate) fn flow_id(&mut self, text: &str) -> Arg {
        match text.parse::<i64>() {
            Ok(i) if itoa::Buffer::new().format(i) == text => Arg::Int(i),
            _ => Arg::Str(self.strings.id(text)),
        }
    }

    /// Binds the flow events to the slices they belong to.
    pub(crate) fn bind_flows(&mut self) -> u64 {
        let mut bound = 0;
        let flows = std::mem::take(&mut self.flows);
        let mut last_at = vec![0usize; self.threads.len()];
        // The items that have a flow bound: a bit an item, by thread.
        let mut with_flow: Vec<Vec<u64>> = vec![Vec::new(); self.threads.len()];
        for flow in flows {
            let Some(thread) = self.threads.get_mut(flow.thread) else {
                continue;
            };
            let items = &thread.items;
            // Items hold times from the clock's base; one that does not fit is beyond every
            // item (or the span is refused), so saturating keeps every comparison.
            let ts = self.clock.rel(flow.ts);
            // Flows come nearly in order of time: each search starts where the thread's last
            // one ended.
            let hint = last_at.get(flow.thread).copied().unwrap_or(0);
            // Items are sorted by start, longer first: the innermost slice enclosing `ts` is the
            // last one starting at or before it that ends at or after it.
            let after = partition_from(items, hint, |i| i.start <= ts);
            if let Some(slot) = last_at.get_mut(flow.thread) {
                *slot = after;
            }
            let target = if flow.enclosing {
                // Of slices with the same span, the first (in file order, which the stable sort
                // keeps): what the "next slice" of an `f` binds to, so that a flow written back
                // (right after its slice, with `"bp": "e"`) binds to the same slice when read.
                // Searched back from the slice found (nearly always it), not over all items.
                (0..after)
                    .rev()
                    .take(256)
                    .find(|&i| items.get(i).is_some_and(|it| it.end >= ts))
                    .and_then(|i| Some((i, items.get(i)?)))
                    .map(|(i, found)| {
                        let key = (found.start, std::cmp::Reverse(found.end));
                        partition_from(items, i, |it| (it.start, std::cmp::Reverse(it.end)) < key)
                    })
            } else {
                let at = partition_from(items, after, |i| i.start < ts);
                (at < items.len()).then_some(at)
            };
            let Some((index, item)) = target.and_then(|i| Some((i, items.get(i)?))) else {
                let id = match flow.id {
                    Arg::Str(s) => self.strings.get(s).to_owned(),
                    Arg::Int(i) => i.to_string(),
                    _ => String::new(),
                };
                self.warnings.push(WarningKind::UnboundFlow, || {
                    format!(
                        "flow {id:?} ({}) has no slice to bind to; left out",
                        flow.phase as char
                    )
                });
                continue;
            };
            let keys = [
                match flow.phase {
                    b's' => Some(self.keys.flow_out),
                    _ => Some(self.keys.flow_in),
                },
                (flow.phase == b't').then_some(self.keys.flow_out),
            ];
            if !thread.flow_care {
                let bits = match with_flow.get_mut(flow.thread) {
                    Some(bits) => {
                        if bits.is_empty() {
                            bits.resize(items.len().div_ceil(64), 0);
                        }
                        bits
                    }
                    None => continue,
                };
                let (word, bit) = (index / 64, 1u64 << (index % 64));
                let second = bits.get(word).is_some_and(|w| w & bit != 0);
                if let Some(w) = bits.get_mut(word) {
                    *w |= bit;
                }
                let flow_keys = [self.keys.flow_in, self.keys.flow_out, self.keys.flow_cat];
                thread.flow_care = second
                    || thread
                        .args
                        .get(item.at, item.len)
                        .iter()
                        .any(|a| flow_keys.contains(&a.key));
            }
            // Flow args wait beside the items until the thread's args are packed; each flow's
            // category follows its keys, until `flow_categories` keeps what the item needs.
            for key in keys.into_iter().flatten() {
                thread.flow_args.push((index, KeyArg::new(key, flow.id)));
            }
            thread
                .flow_args
                .push((index, KeyArg::new(self.keys.flow_cat, Arg::Str(flow.cat))));
            bound += 1;
        }
        bound
    }
}
