//! D81 tests: the format facts of spec §M8.3 checked byte by byte, round trips, edge sizes,
//! and cc1541 (an independent D81 tool, Debian package `cc1541`) reading our images and writing
//! images we read.

use super::*;
use std::process::Command;

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
fn fresh_disk_has_the_documented_header_bam_and_directory() {
    let d = D81::new("SSNAIL", *b"65").unwrap();
    let b = d.bytes();
    assert_eq!(b.len(), 819_200);
    let h = 0x61800;
    assert_eq!(&b[h..h + 4], &[0x28, 0x03, 0x44, 0x00]);
    assert_eq!(&b[h + 4..h + 10], b"SSNAIL");
    assert!(b[h + 10..h + 0x16].iter().all(|&x| x == 0xA0));
    assert_eq!(
        &b[h + 0x16..h + 0x1D],
        &[b'6', b'5', 0xA0, b'3', b'D', 0xA0, 0xA0]
    );
    let bam1 = 0x61900;
    assert_eq!(
        &b[bam1..bam1 + 7],
        &[0x28, 0x02, 0x44, 0xBB, b'6', b'5', 0xC0]
    );
    // Track 40 (last entry of BAM sector 1): sectors 0-3 used.
    let t40 = bam1 + 0x10 + 39 * 6;
    assert_eq!(&b[t40..t40 + 6], &[0x24, 0xF0, 0xFF, 0xFF, 0xFF, 0xFF]);
    assert_eq!(
        &b[bam1 + 0x10..bam1 + 0x16],
        &[0x28, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    );
    let bam2 = 0x61A00;
    assert_eq!(
        &b[bam2..bam2 + 7],
        &[0x00, 0xFF, 0x44, 0xBB, b'6', b'5', 0xC0]
    );
    assert_eq!(&b[0x61B00..0x61B02], &[0x00, 0xFF]);
    assert_eq!(d.free_blocks(), 3160);
    assert_eq!(d.disk_name(), "SSNAIL");
    assert!(d.files().unwrap().is_empty());
}

#[test]
fn files_round_trip_with_edge_sizes_and_chains() {
    let mut d = D81::new("T", *b"01").unwrap();
    let sizes = [0usize, 1, 253, 254, 255, 508, 509, 10_000, 100_003];
    for (i, &n) in sizes.iter().enumerate() {
        d.add_file(&format!("file{i}"), FileType::Seq, &pattern(n, i as u32))
            .unwrap();
    }
    let used: u32 = sizes.iter().map(|&n| D81::blocks_for(n)).sum();
    assert_eq!(d.free_blocks(), 3160 - used);
    let d = D81::from_bytes(d.into_bytes()).unwrap();
    let files = d.files().unwrap();
    assert_eq!(files.len(), sizes.len());
    for (i, &n) in sizes.iter().enumerate() {
        assert_eq!(files[i].name, format!("FILE{i}"));
        assert_eq!(files[i].blocks as u32, D81::blocks_for(n));
        assert!(files[i].closed);
        assert_eq!(files[i].file_type, FileType::Seq);
        assert_eq!(
            d.read_file(&format!("file{i}")).unwrap(),
            pattern(n, i as u32)
        );
    }
    // The first file starts on track 39, as the 1581 allocates next to the directory.
    assert_eq!((files[0].first_track, files[0].first_sector), (39, 0));
    // Last-sector rule: link track 0, second byte = index of the last used byte.
    let e = &files[2]; // 253 bytes, one sector
    let sec = d.sector(e.first_track, e.first_sector).unwrap();
    assert_eq!((sec[0], sec[1]), (0, 254));
}

#[test]
fn bam_counts_match_bitmaps() {
    let mut d = D81::new("T", *b"01").unwrap();
    d.add_file("big", FileType::Prg, &pattern(400_000, 7))
        .unwrap();
    for t in 1..=TRACKS {
        let e = d.bam_entry(t);
        let bits: u32 = d.bytes()[e + 1..e + 6].iter().map(|b| b.count_ones()).sum();
        assert_eq!(bits, d.bytes()[e] as u32, "track {t}");
    }
}

#[test]
fn disk_full_is_exact_and_leaves_the_image_unchanged() {
    let mut d = D81::new("T", *b"01").unwrap();
    let too_big = pattern(3160 * 254 + 1, 3);
    let before = d.bytes().to_vec();
    let err = d.add_file("x", FileType::Seq, &too_big).unwrap_err();
    assert!(matches!(
        err,
        DiskError::DiskFull {
            needed: 3161,
            free: 3160,
            ..
        }
    ));
    assert_eq!(d.bytes(), &before[..]);
    d.add_file("x", FileType::Seq, &too_big[..3160 * 254])
        .unwrap();
    assert_eq!(d.free_blocks(), 0);
    assert_eq!(d.read_file("X").unwrap(), &too_big[..3160 * 254]);
}

#[test]
fn directory_grows_past_one_sector() {
    let mut d = D81::new("T", *b"01").unwrap();
    for i in 0..20 {
        d.add_file(&format!("f{i}"), FileType::Prg, &[i as u8; 3])
            .unwrap();
    }
    assert_eq!(d.files().unwrap().len(), 20);
    assert_eq!(d.read_file("F17").unwrap(), vec![17u8; 3]);
    assert!(!d.is_free(40, 4) && !d.is_free(40, 5));
    assert_eq!(
        d.add_file("F3", FileType::Prg, b"x"),
        Err(DiskError::Exists("F3".into()))
    );
}

#[test]
fn bad_input_gives_errors_not_panics() {
    assert_eq!(
        D81::from_bytes(vec![0; 100]).err(),
        Some(DiskError::WrongSize(100))
    );
    assert!(matches!(
        D81::from_bytes(vec![0; D81_SIZE]),
        Err(DiskError::Corrupt(_))
    ));
    let mut d = D81::new("T", *b"01").unwrap();
    assert!(d.add_file("", FileType::Prg, b"x").is_err());
    assert!(d
        .add_file("seventeen-chars-x", FileType::Prg, b"x")
        .is_err());
    assert!(d.add_file("tab\there", FileType::Prg, b"x").is_err());
    d.add_file("a", FileType::Prg, &pattern(1000, 1)).unwrap();
    // Break the chain: point the first sector's link outside the disk.
    let mut bytes = d.into_bytes();
    bytes[offset(39, 0)] = 99;
    let d = D81::from_bytes(bytes).unwrap();
    assert!(matches!(d.read_file("a"), Err(DiskError::Corrupt(_))));
    // A loop in the chain is reported, not followed forever.
    let mut bytes = d.into_bytes();
    bytes[offset(39, 0)] = 39;
    bytes[offset(39, 0) + 1] = 0;
    let d = D81::from_bytes(bytes).unwrap();
    assert!(matches!(d.read_file("a"), Err(DiskError::Corrupt(_))));
}

fn cc1541() -> Command {
    // cc1541 is in tools/debian-packages.txt; a missing tool is a failure, not a skip.
    assert!(
        Command::new("cc1541").output().is_ok(),
        "cc1541 not installed (apt-get install cc1541)"
    );
    Command::new("cc1541")
}

#[test]
fn cc1541_reads_our_images() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ours.d81");
    let mut d = D81::new("SSNAIL", *b"65").unwrap();
    d.add_file("autoboot.c65", FileType::Prg, &pattern(5000, 1))
        .unwrap();
    d.add_file("tiny.ssnail", FileType::Seq, &pattern(70_000, 2))
        .unwrap();
    std::fs::write(&path, d.bytes()).unwrap();
    // cc1541 adds a file with its own allocator, which must respect our BAM, then lists the disk.
    let extra = dir.path().join("extra");
    std::fs::write(&extra, pattern(3000, 3)).unwrap();
    let add = cc1541()
        .arg("-f")
        .arg("extra")
        .arg("-w")
        .arg(&extra)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let out = cc1541().arg(&path).output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{listing}");
    assert!(listing.contains("\"autoboot.c65\""), "{listing}");
    assert!(listing.contains("\"tiny.ssnail\""), "{listing}");
    let free = 3160 - 20 - 276 - 12;
    assert!(
        listing.contains(&format!("{free} blocks free")),
        "{listing}"
    );
    let back = D81::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(back.read_file("TINY.SSNAIL").unwrap(), pattern(70_000, 2));
    assert_eq!(back.read_file("autoboot.c65").unwrap(), pattern(5000, 1));
    assert_eq!(back.read_file("extra").unwrap(), pattern(3000, 3));
    assert_eq!(back.free_blocks(), free);
}

#[test]
fn we_read_cc1541_images() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.d81");
    let mut cmd = cc1541();
    cmd.arg("-n").arg("disk").arg("-i").arg("ab");
    let sizes = [1usize, 254, 255, 40_000];
    for (i, n) in sizes.iter().enumerate() {
        let f = dir.path().join(format!("f{i}"));
        std::fs::write(&f, pattern(*n, 10 + i as u32)).unwrap();
        cmd.arg("-T")
            .arg("SEQ")
            .arg("-f")
            .arg(format!("f{i}"))
            .arg("-w")
            .arg(&f);
    }
    assert!(cmd.arg(&path).output().unwrap().status.success());
    let d = D81::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    let files = d.files().unwrap();
    assert_eq!(files.len(), sizes.len());
    for (i, n) in sizes.iter().enumerate() {
        assert_eq!(files[i].file_type, FileType::Seq);
        assert_eq!(
            d.read_file(&format!("F{i}")).unwrap(),
            pattern(*n, 10 + i as u32)
        );
    }
    let used: u32 = sizes.iter().map(|&n| D81::blocks_for(n)).sum();
    assert_eq!(d.free_blocks(), 3160 - used);
}
