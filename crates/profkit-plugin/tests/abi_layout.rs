//! C and Rust agree on every size and offset of the ABI: one table of layout facts gives both the
//! C program, compiled against `include/profkit_plugin.h`, that prints them, and Rust's values
//! that the test compares them with.

mod support;

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

use profkit_plugin::abi::*;

/// One layout fact: its name, the C expression for it, Rust's value, and the value profkit
/// ships on x86_64 where that is pinned.
struct Fact {
    name: String,
    c: String,
    rust: usize,
    x86_64: Option<usize>,
}

/// `size TP_Profiler`, `size TF_Code = Code`: a struct's size.
/// `offset TP_Profiler.ext`: a field's offset. `constant TP_MAJOR`: a constant's value.
macro_rules! fact {
    (size $c:ident $(= $rust:ty)? $(; x86_64 $x:expr)?) => {
        fact!(@ concat!("sizeof ", stringify!($c)), concat!("sizeof(", stringify!($c), ")"),
              size_of::<fact!(@type $c $($rust)?)>(), [$($x)?])
    };
    (offset $t:ident . $f:ident $(; x86_64 $x:expr)?) => {
        fact!(@ concat!("offset ", stringify!($t), ".", stringify!($f)),
              concat!("offsetof(", stringify!($t), ", ", stringify!($f), ")"),
              offset_of!($t, $f), [$($x)?])
    };
    (constant $c:ident $(; x86_64 $x:expr)?) => {
        fact!(@ concat!("const ", stringify!($c)), stringify!($c),
              usize::try_from($c).unwrap(), [$($x)?])
    };
    (@type $c:ident) => { $c };
    (@type $c:ident $rust:ty) => { $rust };
    (@pin) => { None };
    (@pin $x:expr) => { Some($x) };
    (@ $name:expr, $c:expr, $rust:expr, [$($x:expr)?]) => {
        Fact { name: $name.to_owned(), c: $c.to_owned(), rust: $rust, x86_64: fact!(@pin $($x)?) }
    };
}

fn facts() -> Vec<Fact> {
    vec![
        fact!(size TP_Profiler),
        fact!(offset TP_Profiler.struct_size),
        fact!(offset TP_Profiler.ext),
        fact!(offset TP_Profiler.device_type),
        fact!(size TP_ProfilerFns),
        fact!(offset TP_ProfilerFns.struct_size),
        fact!(offset TP_ProfilerFns.ext),
        fact!(offset TP_ProfilerFns.start),
        fact!(offset TP_ProfilerFns.stop),
        fact!(offset TP_ProfilerFns.collect_data_xspace),
        fact!(size TF_ProfilerRegistrationParams),
        fact!(offset TF_ProfilerRegistrationParams.struct_size),
        fact!(offset TF_ProfilerRegistrationParams.ext),
        fact!(offset TF_ProfilerRegistrationParams.major_version),
        fact!(offset TF_ProfilerRegistrationParams.minor_version),
        fact!(offset TF_ProfilerRegistrationParams.patch_version),
        fact!(offset TF_ProfilerRegistrationParams.profiler; x86_64 32),
        fact!(offset TF_ProfilerRegistrationParams.profiler_fns),
        fact!(offset TF_ProfilerRegistrationParams.destroy_profiler; x86_64 48),
        fact!(offset TF_ProfilerRegistrationParams.destroy_profiler_fns),
        fact!(constant TP_PROFILER_STRUCT_SIZE; x86_64 24),
        fact!(constant TP_PROFILER_FNS_STRUCT_SIZE; x86_64 40),
        fact!(constant TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE; x86_64 64),
        fact!(constant TP_MAJOR),
        fact!(constant TP_MINOR),
        fact!(constant TP_PATCH),
        fact!(size TF_Code = Code),
    ]
}

/// The C program printing every fact as `name value`.
fn program(facts: &[Fact]) -> String {
    let mut text = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"profkit_plugin.h\"\nint main(void) {\n",
    );
    for fact in facts {
        text += &format!(
            "  printf(\"%s %zu\\n\", \"{}\", (size_t)({}));\n",
            fact.name, fact.c
        );
    }
    text + "  return 0;\n}\n"
}

/// What C says, fact by fact.
fn c_layout(facts: &[Fact]) -> BTreeMap<String, String> {
    let dir = support::scratch();
    let source = dir.join("layout.c");
    std::fs::write(&source, program(facts)).unwrap();
    let exe = dir.join("layout");
    support::compile(&exe, &[source.to_str().unwrap()]);
    let output = std::process::Command::new(&exe).output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

#[test]
#[cfg_attr(miri, ignore)]
fn c_and_rust_agree_on_every_size_and_offset() {
    let facts = facts();
    let mut c = c_layout(&facts);
    let mut wrong = Vec::new();
    for fact in &facts {
        let said = c.remove(&fact.name);
        if said != Some(fact.rust.to_string()) {
            wrong.push(format!("{}: C {said:?}, Rust {}", fact.name, fact.rust));
        }
    }
    assert!(wrong.is_empty(), "C and Rust disagree: {wrong:#?}");
    assert!(c.is_empty(), "C printed facts the table lacks: {c:?}");
}

#[test]
fn the_shipped_sizes_on_x86_64() {
    if cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) {
        let pinned: Vec<Fact> = facts().into_iter().filter(|f| f.x86_64.is_some()).collect();
        assert_eq!(pinned.len(), 5);
        for fact in pinned {
            assert_eq!(Some(fact.rust), fact.x86_64, "{}", fact.name);
        }
    }
}
