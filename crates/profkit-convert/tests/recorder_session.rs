//! A thread that only starts and stops the recorder does not show as a thread of its own.

use profkit_convert::events::recording_to_xspace;
use profkit_events::recorder::{self, RecordEvent, RecorderConfig};

#[test]
fn the_thread_that_only_controls_the_session_gets_no_line() {
    let _serial = recorder::test_lock();
    recorder::enable(RecorderConfig::default()).unwrap();
    std::thread::spawn(|| {
        let _step = RecordEvent::new("step");
    })
    .join()
    .unwrap();
    let recording = recorder::disable().unwrap();
    // The recording keeps the marks, on the controlling thread, as Paddle's model has them.
    assert_eq!(recording.threads.len(), 2);
    let (space, warnings) = recording_to_xspace(&recording);
    assert!(warnings.is_empty(), "{warnings:?}");
    let host = space.planes.iter().find(|p| p.name == "/host:CPU").unwrap();
    assert_eq!(host.lines.len(), 1, "{:?}", host.lines);
    let names: Vec<&str> = host.lines[0]
        .events
        .iter()
        .filter_map(|e| host.event_metadata.get(&e.metadata_id))
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(names, ["step"]);
    // The session's start and end are still there, on the Task Environment plane.
    let env = space
        .planes
        .iter()
        .find(|p| p.name == "Task Environment")
        .unwrap();
    assert_eq!(env.stats.len(), 2);
}

#[test]
fn marks_on_a_thread_that_also_works_are_kept() {
    let _serial = recorder::test_lock();
    recorder::enable(RecorderConfig::default()).unwrap();
    {
        let _step = RecordEvent::new("step");
    }
    let recording = recorder::disable().unwrap();
    let (space, _) = recording_to_xspace(&recording);
    let host = space.planes.iter().find(|p| p.name == "/host:CPU").unwrap();
    assert_eq!(host.lines.len(), 1);
    assert_eq!(host.lines[0].events.len(), 3, "the step and both marks");
}
