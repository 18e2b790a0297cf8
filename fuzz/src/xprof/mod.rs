//! Targets of what profkit-xprof derives from XSpaces.

pub mod tools;
