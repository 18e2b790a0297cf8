//! Size limits and untrusted lengths.

use super::*;

#[test]
fn ten_bytes_claiming_a_huge_plane_fail_fast() {
    let bytes = [vec![0x0a], varint(1 << 60)].concat();
    assert_eq!(bytes.len(), 10);
    let started = std::time::Instant::now();

    let e = decode(bytes.clone()).unwrap_err();
    assert_eq!(got(&e), truncated(10, "XSpace.planes[0]", 1 << 60));
    assert!(e.is_truncation());

    // The streaming reader refuses the plane by its declared size, before reading it.
    let (_, e) = stream(&bytes, ReadOptions::default());
    let e = e.unwrap();
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace.planes[0]".into(),
            offset: 10,
            size: 1 << 60,
            limit: DEFAULT_MAX_SIZE
        }
    );
    assert!(!e.is_truncation());
    assert!(e.to_string().contains("at byte 10"), "{e}");

    // With no limit at all, the reader finds the bytes missing instead of reserving them.
    let (_, e) = stream(&bytes, ReadOptions::with_max_size(u64::MAX));
    assert_eq!(got(&e.unwrap()), truncated(10, "XSpace.planes[0]", 1 << 60));

    // Whole reads too.
    let e = read(&bytes[..], ReadOptions::with_max_size(u64::MAX)).unwrap_err();
    assert_eq!(got(&e), truncated(10, "XSpace.planes[0]", 1 << 60));

    // Lengths beyond usize and u63 as well, nested too.
    for len in [u64::MAX, 1 << 63, (1 << 32) + 1] {
        let bytes = [vec![0x22], varint(len)].concat();
        let expected = truncated(bytes.len(), "XSpace.hostnames[0]", len);
        assert_eq!(got(&decode(bytes.clone()).unwrap_err()), expected);
        let (_, e) = stream(&bytes, ReadOptions::with_max_size(u64::MAX));
        assert_eq!(got(&e.unwrap()), expected);
        let bytes = [ld(1, &[key(3, LEN), varint(len)].concat()), ld(4, b"h")].concat();
        let e = both_fail(&bytes);
        assert_eq!(
            e,
            malformed(
                2 + key(3, LEN).len() + varint(len).len(),
                "XSpace.planes[0].lines[0]",
                &format!("field of {len} bytes runs past the end of the enclosing message")
            )
        );
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// The process's peak virtual memory in bytes (Linux), for checking that nothing reserves a
/// declared size.
fn peak_virtual_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmPeak:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn a_declared_gigabyte_is_never_reserved() {
    // 2 GiB is small enough for an allocator to grant, so only the peak shows a reservation.
    let claimed: u64 = 2 << 30;
    let bytes = [vec![0x0a], varint(claimed), vec![0x08, 0x01]].concat();
    let Some(before) = peak_virtual_memory() else {
        eprintln!("no /proc/self/status; skipped");
        return;
    };
    let no_limit = ReadOptions::with_max_size(u64::MAX);
    assert!(
        decode_with(bytes.clone(), no_limit)
            .unwrap_err()
            .is_truncation()
    );
    let (_, e) = stream(&bytes, no_limit);
    assert_eq!(
        got(&e.unwrap()),
        truncated(bytes.len(), "XSpace.planes[0]", claimed - 2)
    );
    assert!(read(&bytes[..], no_limit).unwrap_err().is_truncation());
    // A hostname and an unknown field claiming as much.
    let (_, e) = stream(&[vec![0x22], varint(claimed)].concat(), no_limit);
    assert!(e.unwrap().is_truncation());
    let (_, e) = stream(&[key(9, LEN), varint(claimed)].concat(), no_limit);
    assert!(e.unwrap().is_truncation());
    let after = peak_virtual_memory().unwrap();
    assert!(
        after.saturating_sub(before) < claimed / 4,
        "peak virtual memory grew by {} bytes",
        after - before
    );
}

#[test]
fn planes_over_the_limit_are_refused_by_the_stream() {
    let small = ld(2, b"/host:CPU");
    let big = ld(2, &[b'x'; 300]);
    let bytes = [ld(1, &small), ld(4, b"h"), ld(1, &big)].concat();
    let limit = ReadOptions::with_max_size(100);
    let (items, e) = stream(&bytes, limit);
    assert_eq!(items.len(), 2, "the planes before the big one are yielded");
    assert!(matches!(&items[0], SpaceItem::Plane(p) if p.name == "/host:CPU"));
    assert_eq!(items[1], SpaceItem::Hostname("h".into()));
    let body_offset = ld(1, &small).len() + 3 + 1 + 2;
    assert_eq!(
        got(&e.unwrap()),
        Got::TooLarge {
            what: "XSpace.planes[1]".into(),
            offset: body_offset as u64,
            size: big.len() as u64,
            limit: 100
        }
    );
    // Strings of the space are bounded too.
    let bytes = [ld(1, &small), ld(2, &[b'e'; 101])].concat();
    let (_, e) = stream(&bytes, limit);
    assert_eq!(
        got(&e.unwrap()),
        Got::TooLarge {
            what: "XSpace.errors[0]".into(),
            offset: (ld(1, &small).len() + 2) as u64,
            size: 101,
            limit: 100
        }
    );
    // A plane exactly at the limit is fine.
    let exact = ld(2, &[b'y'; 98]);
    assert_eq!(exact.len(), 100);
    let (items, e) = stream(&ld(1, &exact), limit);
    assert!(e.is_none(), "{e:?}");
    assert_eq!(items.len(), 1);
}

#[test]
fn whole_reads_over_the_limit_are_refused() {
    let bytes = encode(&rich_space());
    let n = bytes.len() as u64;
    let limit = ReadOptions::with_max_size(n - 1);
    let e = decode_with(bytes.clone(), limit).unwrap_err();
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace".into(),
            offset: 0,
            size: n,
            limit: n - 1
        }
    );
    assert!(!e.is_truncation());
    // From a reader, the size is what arrived before the limit was passed.
    let e = read(&bytes[..], limit).unwrap_err();
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace".into(),
            offset: 0,
            size: n,
            limit: n - 1
        }
    );
    // A reader that never ends is cut at the limit.
    let e = read(std::io::repeat(0x0a), ReadOptions::with_max_size(1000)).unwrap_err();
    assert!(
        matches!(
            got(&e),
            Got::TooLarge {
                size: 1001,
                limit: 1000,
                ..
            }
        ),
        "{e}"
    );
    // Exactly at the limit is fine.
    assert_eq!(
        decode_with(bytes.clone(), ReadOptions::with_max_size(n)).unwrap(),
        rich_space()
    );
    assert_eq!(
        read(&bytes[..], ReadOptions::with_max_size(n)).unwrap(),
        rich_space()
    );
}

#[test]
fn files_over_the_limit_are_refused_by_their_length() {
    let dir = std::env::temp_dir().join(format!("profkit-xplane-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.xplane.pb");
    let bytes = encode(&rich_space());
    std::fs::write(&path, &bytes).unwrap();
    let e = read_file(&path, ReadOptions::with_max_size(10)).unwrap_err();
    assert!(matches!(&e, Error::InFile(f) if f.path == path), "{e:?}");
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace".into(),
            offset: 0,
            size: bytes.len() as u64,
            limit: 10
        }
    );
    // A truncated file is a truncation, through the file wrapper.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_file(&path, ReadOptions::default()).unwrap_err();
    assert!(e.is_truncation(), "{e}");
    assert!(
        e.to_string().starts_with(&path.display().to_string()),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
