//! Start-up's pages of code handed back once the daemon serves. Reading the command line, the settings,
//! the managed layer, arming the watchers and the signals runs code from all over the binary, and the
//! kernel maps what lies around every page touched (64 KiB at a time, a whole folio of the page cache):
//! about three quarters of hookd's code and read-only data, and of libc's, would stay counted in the idle
//! daemon's resident memory though only the serving loop runs again. Dropping those mappings costs
//! nothing the file does not hold: the pages stay in the page cache (shared with every `hookd relay`
//! started from the same program), and what a fire runs next is mapped back on its first touch.

use std::ops::Range;

/// The mappings that may be dropped: a file's, private, not writable, holding no page of the process's
/// own (`Anonymous: 0 kB`). A writable mapping (`.data`, `.bss`) holds the program's state; a read-only
/// one with private pages (the RELRO part: relocated by the loader, then made read-only) would be read
/// back unrelocated from the file. Neither is ever named here.
pub fn droppable(smaps: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut current: Option<Range<usize>> = None;
    for line in smaps.lines() {
        if let Some(range) = mapping_header(line) {
            current = range;
            continue;
        }
        if let Some(kib) = line.strip_prefix("Anonymous:") {
            let own_pages = kib.trim().trim_end_matches("kB").trim() != "0";
            if let Some(range) = current.take()
                && !own_pages
            {
                found.push(range);
            }
        }
    }
    found
}

/// A line that starts a mapping (`start-end perms offset dev inode path`): `Some(Some(range))` when it is
/// a candidate (a file's, private, not writable), `Some(None)` for another mapping, `None` for a field line.
fn mapping_header(line: &str) -> Option<Option<Range<usize>>> {
    let mut words = line.split_ascii_whitespace();
    let (start, end) = words.next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let perms = words.next()?.as_bytes();
    if perms.len() != 4 {
        return None;
    }
    let path = words.nth(3);
    let candidate =
        perms[1] == b'-' && perms[3] == b'p' && path.is_some_and(|p| p.starts_with('/'));
    Some((candidate && start < end).then_some(start..end))
}

/// Drops this process's droppable mappings' pages (see [`droppable`]); the bytes given back to the page
/// cache, or nothing when `/proc/self/smaps` cannot be read.
pub fn drop_start_up_pages() -> usize {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut dropped = 0;
    for range in droppable(&smaps) {
        // SAFETY: the range is a whole mapping of a file, private and not writable, with no page of its
        // own: MADV_DONTNEED only unmaps pages the file holds unchanged, read back on the next touch.
        let result = unsafe {
            nix::libc::madvise(
                range.start as *mut nix::libc::c_void,
                range.end - range.start,
                nix::libc::MADV_DONTNEED,
            )
        };
        if result == 0 {
            dropped += range.end - range.start;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d000000000-55d000010000 r--p 00000000 fe:00 1 /usr/bin/hookd
Size:                 64 kB
Anonymous:             0 kB
55d000010000-55d000020000 r-xp 00010000 fe:00 1 /usr/bin/hookd
Anonymous:             0 kB
55d000020000-55d000030000 r--p 00020000 fe:00 1 /usr/bin/hookd
Anonymous:            12 kB
55d000030000-55d000031000 rw-p 00030000 fe:00 1 /usr/bin/hookd
Anonymous:             4 kB
55d000040000-55d000050000 rw-p 00000000 00:00 0                [heap]
Anonymous:            64 kB
7f0000000000-7f0000001000 r--s 00000000 fe:00 2 /dev/shm/x
Anonymous:             0 kB
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                [vdso]
Anonymous:             0 kB
";

    #[test]
    fn only_read_only_private_file_mappings_without_pages_of_their_own() {
        assert_eq!(
            droppable(SMAPS),
            vec![
                0x55d0_0000_0000..0x55d0_0001_0000,
                0x55d0_0001_0000..0x55d0_0002_0000
            ]
        );
    }

    #[test]
    fn a_mapping_whose_anonymous_field_is_missing_is_kept() {
        let text = "55d000000000-55d000010000 r-xp 00000000 fe:00 1 /usr/bin/hookd\nSize: 64 kB\n";
        assert!(droppable(text).is_empty());
    }

    #[test]
    fn this_process_has_its_code_among_them() {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("read smaps");
        let here = droppable as fn(&str) -> Vec<Range<usize>> as usize;
        assert!(droppable(&smaps).iter().any(|r| r.contains(&here)));
    }
}
