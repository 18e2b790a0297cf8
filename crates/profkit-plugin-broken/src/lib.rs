//! A profiler plugin built with `profkit-plugin` that misbehaves on purpose, for the tests of the
//! plugin machinery and of `profkit plugin check`.
//!
//! `PROFKIT_BROKEN_MODE` picks the misbehaviour, read on each call:
//! `panic-collect` (the default) panics inside collect, `panic-start` inside start,
//! `panic-new` when the profiler is made, `error-start` returns an error status from start,
//! `fine` behaves. Panics are caught by `profkit-plugin` and become `INTERNAL` statuses; the
//! process survives.

#![forbid(unsafe_code)]

use profkit_plugin::abi::Code;
use profkit_plugin::plugin::Profiler;
use profkit_plugin::{Error, PlaneBuilder, Result, XPlane, XSpace};

/// The plugin's profiler.
#[derive(Debug)]
pub struct Broken {
    sessions: u64,
}

fn mode() -> String {
    std::env::var("PROFKIT_BROKEN_MODE").unwrap_or_else(|_| "panic-collect".into())
}

impl Profiler for Broken {
    const DEVICE_TYPE: &'static str = "BROKEN";

    fn new() -> Result<Self> {
        if mode() == "panic-new" {
            panic!("deliberate panic while making the profiler");
        }
        Ok(Broken { sessions: 0 })
    }

    fn start(&mut self) -> Result<()> {
        match mode().as_str() {
            "panic-start" => panic!("deliberate panic in start"),
            "error-start" => Err(Error::status(Code::UNAVAILABLE, "deliberately unavailable")),
            _ => {
                self.sessions += 1;
                Ok(())
            }
        }
    }

    fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    fn collect(&mut self) -> Result<Option<XSpace>> {
        if mode() == "panic-collect" {
            panic!("deliberate panic in collect, session {}", self.sessions);
        }
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:CUSTOM:0");
        b.line(1)
            .set_name("broken")
            .set_timestamp_ns(profkit_plugin::host::now_ns() as i64)
            .add_event("fine")
            .set_duration_ps(1_000)
            .add_stat("session", self.sessions);
        Ok(Some(XSpace {
            planes: vec![plane],
            ..Default::default()
        }))
    }
}

profkit_plugin::export_profiler!(Broken);
