//! The plugin's per-process session state: start, stop and the two-call collect, as plain Rust
//! (no pointers), so it runs under Miri.
//!
//! TensorFlow drives one session at a time: `start`, `stop`, then `collect_data_xspace` twice,
//! first with a null buffer to learn the size, then with a buffer of that size, parsing exactly
//! that many bytes. So the XSpace is serialised once, on the first call, and the same bytes are
//! copied on the second. A session may also end early (TensorFlow stops calling the plugin after
//! an error), so `start` always begins afresh.

use std::mem::MaybeUninit;

use profkit_xplane::XSpace;

use crate::abi::Code;
use crate::error::{Error, Result};

/// What the state machine drives: the plugin author's profiler.
pub(crate) trait Backend {
    fn start(&mut self) -> Result<()>;
    fn stop(&mut self) -> Result<()>;
    fn collect(&mut self) -> Result<Option<XSpace>>;
}

/// Where the session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Never started, or its data was delivered (or given up).
    Idle,
    /// Between `start` and `stop`.
    Running,
    /// Stopped; the data has not been collected yet.
    Stopped,
}

/// One `collect_data_xspace` call.
pub(crate) enum Request<'a> {
    /// Null buffer: only the size is wanted.
    Size,
    /// Copy into this buffer (its length is the caller's `*size_in_bytes`).
    Copy(&'a mut [MaybeUninit<u8>]),
}

/// What a `collect_data_xspace` call answers.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The value for `*size_in_bytes`: the size of the serialised XSpace, 0 for nothing.
    pub size: usize,
    /// The error for the status, if any.
    pub error: Option<Error>,
}

/// The session state of one plugin.
#[derive(Debug)]
pub(crate) struct Session {
    phase: Phase,
    /// The serialised XSpace between the size call and the copy call.
    pending: Option<Vec<u8>>,
}

impl Session {
    pub(crate) const fn new() -> Session {
        Session {
            phase: Phase::Idle,
            pending: None,
        }
    }

    #[cfg(test)]
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Starts a session, dropping anything a previous one left uncollected.
    pub(crate) fn start(&mut self, backend: &mut impl Backend) -> Result<()> {
        if self.phase == Phase::Running {
            return Err(Error::status(
                Code::FAILED_PRECONDITION,
                "start called while profiling already runs (TensorFlow calls stop between starts)",
            ));
        }
        self.pending = None;
        self.phase = Phase::Idle;
        backend.start()?;
        self.phase = Phase::Running;
        Ok(())
    }

    /// Stops the session; harmless when nothing runs.
    pub(crate) fn stop(&mut self, backend: &mut impl Backend) -> Result<()> {
        if self.phase != Phase::Running {
            return Ok(());
        }
        // Stopped even if the backend fails, so the next start is not refused.
        self.phase = Phase::Stopped;
        backend.stop()
    }

    /// One `collect_data_xspace` call.
    pub(crate) fn collect(&mut self, backend: &mut impl Backend, request: Request<'_>) -> Reply {
        if self.phase == Phase::Running {
            return Reply {
                size: 0,
                error: Some(Error::status(
                    Code::FAILED_PRECONDITION,
                    "collect_data_xspace called while profiling runs (call stop first)",
                )),
            };
        }
        let bytes = match self.pending.take() {
            Some(bytes) => bytes,
            None if self.phase == Phase::Stopped => {
                self.phase = Phase::Idle;
                match backend.collect() {
                    Ok(Some(space)) => profkit_xplane::encode(&space),
                    Ok(None) => Vec::new(),
                    Err(error) => {
                        return Reply {
                            size: 0,
                            error: Some(error),
                        };
                    }
                }
            }
            None => Vec::new(),
        };
        let size = bytes.len();
        match request {
            Request::Size => {
                if size > 0 {
                    self.pending = Some(bytes);
                }
                Reply { size, error: None }
            }
            Request::Copy(buffer) => {
                if copy_into(&bytes, buffer) {
                    Reply { size, error: None }
                } else {
                    let error = Error::status(
                        Code::FAILED_PRECONDITION,
                        format!(
                            "the buffer holds {} bytes but the XSpace needs {size}",
                            buffer.len()
                        ),
                    );
                    // Kept, so a caller may retry with a larger buffer.
                    self.pending = Some(bytes);
                    Reply {
                        size,
                        error: Some(error),
                    }
                }
            }
        }
    }

    /// Forgets everything, after a panic left the state unknown.
    pub(crate) fn reset(&mut self) {
        *self = Session::new();
    }
}

/// Copies `src` to the start of `dst` when it fits; writes nothing otherwise.
pub(crate) fn copy_into(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> bool {
    let Some(dst) = dst.get_mut(..src.len()) else {
        return false;
    };
    for (d, s) in dst.iter_mut().zip(src) {
        d.write(*s);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use profkit_xplane::{PlaneBuilder, XPlane};

    /// A backend that records calls and returns a fixed XSpace (or nothing).
    #[derive(Default)]
    struct Fake {
        calls: Vec<&'static str>,
        data: bool,
        fail_collect: bool,
    }

    impl Backend for Fake {
        fn start(&mut self) -> Result<()> {
            self.calls.push("start");
            Ok(())
        }
        fn stop(&mut self) -> Result<()> {
            self.calls.push("stop");
            Ok(())
        }
        fn collect(&mut self) -> Result<Option<XSpace>> {
            self.calls.push("collect");
            if self.fail_collect {
                return Err(Error::status(Code::UNAVAILABLE, "gone"));
            }
            if !self.data {
                return Ok(None);
            }
            let mut plane = XPlane::default();
            let mut b = PlaneBuilder::new(&mut plane);
            b.set_name("/device:CUSTOM:0");
            b.line(1).add_event("e").set_duration_ps(5);
            Ok(Some(XSpace {
                planes: vec![plane],
                ..Default::default()
            }))
        }
    }

    fn buffer(len: usize) -> Vec<MaybeUninit<u8>> {
        vec![MaybeUninit::new(0xA5); len]
    }

    fn bytes(buf: &[MaybeUninit<u8>], len: usize) -> Vec<u8> {
        // SAFETY: every element was initialised by `buffer`.
        buf[..len]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect()
    }

    #[test]
    fn two_calls_deliver_identical_bytes_serialised_once() {
        let mut fake = Fake {
            data: true,
            ..Default::default()
        };
        let mut s = Session::new();
        s.start(&mut fake).unwrap();
        s.stop(&mut fake).unwrap();
        let first = s.collect(&mut fake, Request::Size);
        assert!(first.error.is_none() && first.size > 0);
        let mut buf = buffer(first.size);
        let second = s.collect(&mut fake, Request::Copy(&mut buf));
        assert!(second.error.is_none());
        assert_eq!(second.size, first.size);
        let decoded = profkit_xplane::decode(bytes(&buf, first.size)).unwrap();
        assert_eq!(decoded.planes[0].name, "/device:CUSTOM:0");
        assert_eq!(fake.calls, ["start", "stop", "collect"]);
        // Delivered: a further call has nothing.
        assert_eq!(s.collect(&mut fake, Request::Size).size, 0);
        assert_eq!(s.phase(), Phase::Idle);
    }

    #[test]
    fn nothing_recorded_is_size_zero() {
        let mut fake = Fake::default();
        let mut s = Session::new();
        s.start(&mut fake).unwrap();
        s.stop(&mut fake).unwrap();
        let reply = s.collect(&mut fake, Request::Size);
        assert_eq!(reply.size, 0);
        assert!(reply.error.is_none());
    }

    #[test]
    fn too_small_buffer_is_failed_precondition_and_untouched() {
        let mut fake = Fake {
            data: true,
            ..Default::default()
        };
        let mut s = Session::new();
        s.start(&mut fake).unwrap();
        s.stop(&mut fake).unwrap();
        let size = s.collect(&mut fake, Request::Size).size;
        let mut small = buffer(size - 1);
        let reply = s.collect(&mut fake, Request::Copy(&mut small));
        assert_eq!(reply.size, size);
        assert_eq!(reply.error.unwrap().code(), Code::FAILED_PRECONDITION);
        assert!(bytes(&small, size - 1).iter().all(|&b| b == 0xA5));
        // Still there for a retry with a large enough buffer.
        let mut big = buffer(size + 10);
        let reply = s.collect(&mut fake, Request::Copy(&mut big));
        assert!(reply.error.is_none());
        assert_eq!(reply.size, size);
        assert_eq!(bytes(&big, size + 10)[size..], [0xA5; 10]);
    }

    #[test]
    fn restartable_and_an_unfinished_session_is_dropped() {
        let mut fake = Fake {
            data: true,
            ..Default::default()
        };
        let mut s = Session::new();
        for _ in 0..3 {
            s.start(&mut fake).unwrap();
            s.stop(&mut fake).unwrap();
            assert!(s.collect(&mut fake, Request::Size).size > 0);
            // Ended without the copy call (TensorFlow gave up): the next start begins afresh.
        }
        s.start(&mut fake).unwrap();
        assert_eq!(s.phase(), Phase::Running);
        assert!(s.start(&mut fake).is_err(), "two starts in a row");
        s.stop(&mut fake).unwrap();
        s.stop(&mut fake).unwrap();
        assert_eq!(
            fake.calls.iter().filter(|c| **c == "stop").count(),
            4,
            "a second stop does not reach the backend"
        );
    }

    #[test]
    fn collect_while_running_and_backend_errors_are_statuses() {
        let mut fake = Fake {
            fail_collect: true,
            ..Default::default()
        };
        let mut s = Session::new();
        s.start(&mut fake).unwrap();
        let reply = s.collect(&mut fake, Request::Size);
        assert_eq!(reply.error.unwrap().code(), Code::FAILED_PRECONDITION);
        s.stop(&mut fake).unwrap();
        let reply = s.collect(&mut fake, Request::Size);
        assert_eq!(reply.size, 0);
        assert_eq!(reply.error.unwrap().code(), Code::UNAVAILABLE);
        s.reset();
        assert_eq!(s.phase(), Phase::Idle);
    }

    #[test]
    fn copy_into_fits_or_writes_nothing() {
        let mut dst = buffer(3);
        assert!(!copy_into(&[1, 2, 3, 4], &mut dst));
        assert_eq!(bytes(&dst, 3), [0xA5; 3]);
        assert!(copy_into(&[1, 2], &mut dst));
        assert_eq!(bytes(&dst, 3), [1, 2, 0xA5]);
        assert!(copy_into(&[], &mut []));
    }
}
