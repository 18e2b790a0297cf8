//! C and Rust agree on every size and offset of the ABI: one table of layout facts gives both the
//! C program, compiled against `include/profkit_plugin.h`, that prints them, and Rust's values
//! that the test compares them with.

mod support;

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

use profkit_plugin::abi::*;

/// One layout fact: its name, the C expression for it, and Rust's value.
struct Fact {
    name: String,
    c: String,
    rust: usize,
}

impl Fact {
    fn new(name: &str, c: &str, rust: usize) -> Fact {
        Fact {
            name: name.to_owned(),
            c: c.to_owned(),
            rust,
        }
    }
}

/// Each struct's size and the offsets of the fields listed.
macro_rules! layouts {
    ($($t:ident { $($f:ident),* $(,)? })*) => {
        vec![$(
            Fact::new(
                concat!("sizeof ", stringify!($t)),
                concat!("sizeof(", stringify!($t), ")"),
                size_of::<$t>(),
            ),
            $(Fact::new(
                concat!("offset ", stringify!($t), ".", stringify!($f)),
                concat!("offsetof(", stringify!($t), ", ", stringify!($f), ")"),
                offset_of!($t, $f),
            ),)*
        )*]
    };
}

/// Each constant's value.
macro_rules! constants {
    ($($c:ident),* $(,)?) => {
        vec![$(Fact::new(
            concat!("const ", stringify!($c)),
            stringify!($c),
            usize::try_from($c).unwrap(),
        )),*]
    };
}

fn facts() -> Vec<Fact> {
    let mut facts = layouts! {
        TP_Profiler { struct_size, ext, device_type }
        TP_ProfilerFns { struct_size, ext, start, stop, collect_data_xspace }
        TF_ProfilerRegistrationParams {
            struct_size, ext, major_version, minor_version, patch_version,
            profiler, profiler_fns, destroy_profiler, destroy_profiler_fns,
        }
    };
    facts.extend(constants![
        TP_PROFILER_STRUCT_SIZE,
        TP_PROFILER_FNS_STRUCT_SIZE,
        TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
        TP_MAJOR,
        TP_MINOR,
        TP_PATCH,
    ]);
    facts.push(Fact::new(
        "sizeof TF_Code",
        "sizeof(TF_Code)",
        size_of::<Code>(),
    ));
    facts
}

/// The values profkit ships on x86_64.
const SHIPPED_ON_X86_64: [(&str, usize); 5] = [
    ("const TP_PROFILER_STRUCT_SIZE", 24),
    ("const TP_PROFILER_FNS_STRUCT_SIZE", 40),
    ("const TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE", 64),
    ("offset TF_ProfilerRegistrationParams.profiler", 32),
    ("offset TF_ProfilerRegistrationParams.destroy_profiler", 48),
];

/// The C program printing every fact as `name value`.
fn program(facts: &[Fact]) -> String {
    let mut text = String::from("#include <stdio.h>\n#include \"profkit_plugin.h\"\n");
    text += "int main(void) {\n";
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
        let facts = facts();
        for (name, shipped) in SHIPPED_ON_X86_64 {
            let rust = facts.iter().find(|f| f.name == name).map(|f| f.rust);
            assert_eq!(rust, Some(shipped), "{name}");
        }
    }
}
