//! A Chrome trace's flows written back in the Trace Event layout: each flow keeps its category,
//! also when one slice has flows of several.

use profkit_chrome::chrome_to_xspace;
use profkit_xprof::trace_viewer::{TraceViewerOptions, write_space};

#[test]
fn flows_of_several_categories_on_one_slice() {
    let text = br#"[{"ph": "X", "name": "task", "pid": 1, "tid": 1, "ts": 10, "dur": 30,
        "bind_id": "0x10", "flow_out": true},
        {"ph": "s", "name": "ac2g", "cat": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 12},
        {"ph": "X", "name": "next", "pid": 1, "tid": 1, "ts": 50, "dur": 1},
        {"ph": "f", "name": "ac2g", "cat": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 50,
        "bp": "e"},
        {"ph": "f", "name": "flow", "cat": "other", "id": "0x10", "pid": 1, "tid": 1, "ts": 50,
        "bp": "e"}]"#;
    let import = chrome_to_xspace(&text[..]).unwrap();
    let options = TraceViewerOptions {
        flow_events: true,
        ..Default::default()
    };
    let mut out = Vec::new();
    write_space(&import.space, &mut out, &options).unwrap();
    let out = String::from_utf8(out).unwrap();
    let flows: Vec<&str> = out.lines().filter(|l| l.contains("\"id\"")).collect();
    let has = |cat: &str, id: &str, ph: &str| {
        flows.iter().any(|l| {
            l.contains(&format!("\"cat\": \"{cat}\", \"id\": \"{id}\""))
                && l.contains(&format!("\"ph\": \"{ph}\""))
        })
    };
    assert!(has("flow", "0x10", "s"), "{flows:#?}");
    assert!(has("ac2g", "7", "s"), "{flows:#?}");
    assert!(has("ac2g", "7", "f"), "{flows:#?}");
    assert!(has("other", "0x10", "f"), "{flows:#?}");
}
