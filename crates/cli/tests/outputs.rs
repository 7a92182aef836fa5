//! Where outputs go and what they look like: special files written in place,
//! owners and modes, names that are not UTF-8, inputs that change or lie
//! about their size, and write errors.

mod common;

use common::{files_in, sep, text};
use std::fs;
use std::path::Path;

/// An order2 archive of `data` in `dir`, named `name`.
fn archive(dir: &Path, name: &str, data: &[u8]) -> std::path::PathBuf {
    let out = sep()
        .args(["-q", "-m", "order2", "-c"])
        .write_stdin(data.to_vec())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let p = dir.join(name);
    fs::write(&p, out).unwrap();
    p
}

#[test]
fn dev_null_output_is_written_in_place_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let a = archive(dir.path(), "x.sep", &text(50_000));
    sep()
        .args(["-q", "-d", "-o", "/dev/null"])
        .arg(&a)
        .assert()
        .success();
    sep()
        .args(["-q", "-d", "-f", "-o", "/dev/null"])
        .arg(&a)
        .assert()
        .success();
    use std::os::unix::fs::FileTypeExt;
    let meta = fs::metadata("/dev/null").unwrap();
    assert!(
        meta.file_type().is_char_device(),
        "/dev/null is still a device"
    );
    assert_eq!(files_in(dir.path()), ["x.sep"]);
}

#[test]
fn fifo_output_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let data = text(200_000);
    let a = archive(dir.path(), "x.sep", &data);
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let f2 = fifo.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    // If sep replaced the FIFO, this reader never gets a writer: the test
    // then fails on the timeout below instead of hanging.
    std::thread::spawn(move || tx.send(fs::read(f2).unwrap()));
    sep()
        .args(["-q", "-d", "-f", "-o"])
        .arg(&fifo)
        .arg(&a)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the FIFO's reader got the data");
    assert_eq!(got, data);
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(files_in(dir.path()), ["pipe", "x.sep"]);
}

#[test]
fn device_node_output_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let a = archive(dir.path(), "x.sep", &text(10_000));
    let node = dir.path().join("n");
    let made = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("note: mknod failed (not root?); device node case skipped");
        return;
    }
    sep()
        .args(["-q", "-d", "-f", "-o"])
        .arg(&node)
        .arg(&a)
        .assert()
        .success();
    use std::os::unix::fs::FileTypeExt;
    assert!(
        fs::symlink_metadata(&node)
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn symlinked_output_needs_force_and_replaces_the_link_like_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let data = text(10_000);
    let a = archive(dir.path(), "x.sep", &data);
    let target = dir.path().join("target");
    fs::write(&target, b"keep me").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    sep()
        .args(["-q", "-d", "-o"])
        .arg(&link)
        .arg(&a)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("already exists"));
    sep()
        .args(["-q", "-d", "-f", "-o"])
        .arg(&link)
        .arg(&a)
        .assert()
        .success();
    assert!(
        fs::symlink_metadata(&link).unwrap().is_file(),
        "link replaced"
    );
    assert_eq!(fs::read(&link).unwrap(), data);
    assert_eq!(fs::read(&target).unwrap(), b"keep me", "target untouched");
    // A link to a special file is written through, like zstd.
    let null_link = dir.path().join("null");
    std::os::unix::fs::symlink("/dev/null", &null_link).unwrap();
    sep()
        .args(["-q", "-d", "-o"])
        .arg(&null_link)
        .arg(&a)
        .assert()
        .success();
    assert!(fs::symlink_metadata(&null_link).unwrap().is_symlink());
}

#[test]
fn unwritable_folder_error_names_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a");
    fs::write(&input, text(1000)).unwrap();
    let out = sep()
        .args(["-m", "order2", "-o", "/proc/sep-test-out.sep"])
        .arg(&input)
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let msg = String::from_utf8_lossy(&out);
    assert!(msg.contains("/proc/sep-test-out.sep"), "{msg}");
    assert!(
        !msg.contains(".sep-test-out.sep."),
        "no temporary name: {msg}"
    );
    assert_eq!(msg.lines().count(), 1, "{msg}");
}

#[test]
fn write_errors_print_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a");
    fs::write(&input, text(300_000)).unwrap();
    for q in [&[][..], &["-q"][..]] {
        let full = fs::File::create("/dev/full").unwrap();
        let out = std::process::Command::new(common::sep_path())
            .args(["-m", "order2", "-c"])
            .args(q)
            .arg(&input)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let msg = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(msg.matches("No space left on device").count(), 1, "{msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
}

#[test]
fn procfs_files_compress_by_reading_to_the_end() {
    let expect = fs::read("/proc/version").unwrap();
    assert!(!expect.is_empty());
    let a = sep()
        .args(["-q", "-m", "order2", "-c", "/proc/version"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let back = sep()
        .args(["-q", "-d", "-c"])
        .write_stdin(a)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(back, expect);
    let a = sep()
        .args(["-q", "-m", "order2", "-c", "/proc/cpuinfo"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let back = sep()
        .args(["-q", "-d", "-c"])
        .write_stdin(a)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(back.len() > 100, "cpuinfo has content");
    assert!(String::from_utf8_lossy(&back).contains("processor"));
}

/// A file appended to while it is being compressed: the archive holds what
/// was there when it was opened, the input is kept (also with --rm), exit 1.
#[test]
fn input_that_grows_while_read_is_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("log.txt");
    let data = text(1 << 20);
    fs::write(&input, &data).unwrap();
    let path = common::sep_path();
    let child = std::process::Command::new(path)
        .args(["-T1", "--rm"])
        .arg(&input)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(common::wait_for_temp(dir.path(), 30), "compression started");
    std::thread::sleep(std::time::Duration::from_millis(500));
    {
        use std::io::Write;
        let mut f = fs::OpenOptions::new().append(true).open(&input).unwrap();
        f.write_all(b"appended while compressing\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let msg = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("changed while being read"), "{msg}");
    let now = fs::read(&input).expect("input kept");
    assert!(now.ends_with(b"appended while compressing\n"));
    let archive = dir.path().join("log.txt.sep");
    let back = sep()
        .args(["-q", "-d", "-c"])
        .arg(&archive)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(back, data, "the archive holds the bytes there when opened");
}

/// Names that are not UTF-8 keep every byte: two archives whose names differ
/// only in a non-UTF-8 byte decode to two files.
#[test]
fn non_utf8_names_stay_distinct() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let (d1, d2) = (text(3000), text(5000));
    let a1 = archive(dir.path(), "x1", &d1);
    let a2 = archive(dir.path(), "x2", &d2);
    let n1 = dir.path().join(OsStr::from_bytes(b"r\xe8.sep"));
    let n2 = dir.path().join(OsStr::from_bytes(b"r\xe9.sep"));
    fs::rename(a1, &n1).unwrap();
    fs::rename(a2, &n2).unwrap();
    sep()
        .args(["-q", "-d", "-f", "--rm"])
        .arg(&n1)
        .arg(&n2)
        .assert()
        .success();
    assert_eq!(
        fs::read(dir.path().join(OsStr::from_bytes(b"r\xe8"))).unwrap(),
        d1
    );
    assert_eq!(
        fs::read(dir.path().join(OsStr::from_bytes(b"r\xe9"))).unwrap(),
        d2
    );
    assert!(!n1.exists() && !n2.exists());
    // And back: compressing keeps the bytes too.
    let raw = dir.path().join(OsStr::from_bytes(b"caf\xe9.txt"));
    fs::write(&raw, &d1).unwrap();
    sep()
        .args(["-q", "-m", "order2"])
        .arg(&raw)
        .assert()
        .success();
    assert!(
        dir.path()
            .join(OsStr::from_bytes(b"caf\xe9.txt.sep"))
            .exists()
    );
}

/// As root: the output gets the archive's owner, then its mode, setuid
/// included; never a setuid file owned by root.
#[test]
fn setuid_output_keeps_its_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let a = archive(dir.path(), "evil.sep", &text(2000));
    if std::os::unix::fs::chown(&a, Some(65534), Some(65534)).is_err() {
        eprintln!("note: chown failed (not root?); owner case skipped");
        return;
    }
    fs::set_permissions(&a, fs::Permissions::from_mode(0o6755)).unwrap();
    sep().args(["-q", "-d"]).arg(&a).assert().success();
    let m = fs::metadata(dir.path().join("evil")).unwrap();
    assert_eq!((m.uid(), m.gid()), (65534, 65534));
    assert_eq!(m.mode() & 0o7777, 0o6755);
}

/// As an ordinary user (setpriv to nobody, when run as root): the output
/// cannot get the archive's owner (root), so setuid and setgid are dropped.
#[test]
fn setuid_is_dropped_when_the_owner_cannot_be_kept() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let a = archive(dir.path(), "evil.sep", &text(2000));
    if fs::metadata(&a).unwrap().uid() != 0 {
        eprintln!("note: not root; setpriv case skipped");
        return;
    }
    fs::set_permissions(&a, fs::Permissions::from_mode(0o6755)).unwrap();
    let status = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::sep_path())
        .args(["-q", "-d"])
        .arg(&a)
        .status();
    let Ok(status) = status else {
        eprintln!("note: setpriv not installed; case skipped");
        return;
    };
    assert!(status.success());
    let m = fs::metadata(dir.path().join("evil")).unwrap();
    assert_eq!((m.uid(), m.gid()), (65534, 65534));
    assert_eq!(m.mode() & 0o7777, 0o755, "setuid and setgid dropped");
}

/// An output with no input file to copy a mode from (standard input to `-o`,
/// `sep train`) gets the mode a new file gets under the umask, like zstd's,
/// not the temporary file's 0600.
#[test]
fn outputs_without_an_input_file_get_the_umask_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("sep");
    let input = dir.path().join("in.txt");
    fs::write(&input, text(20_000)).unwrap();
    let samples = dir.path().join("samples");
    fs::create_dir(&samples).unwrap();
    fs::write(samples.join("a.txt"), text(8_000)).unwrap();
    for (umask, want) in [("022", 0o644), ("077", 0o600), ("002", 0o664)] {
        let out = dir.path().join(format!("out-{umask}.sep"));
        let prior = dir.path().join(format!("p-{umask}.sepp"));
        let script = format!(
            "umask {umask} && {bin} -q -m order2 -o {out} < {input} && {bin} train -q -p default -o {prior} {samples}",
            bin = bin.display(),
            out = out.display(),
            input = input.display(),
            prior = prior.display(),
            samples = samples.display()
        );
        let st = std::process::Command::new("sh")
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(st.success(), "{script}");
        for p in [&out, &prior] {
            let mode = fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, want, "{} under umask {umask}", p.display());
        }
    }
}
