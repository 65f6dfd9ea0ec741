//! The output-safety rules as a table: every writer of the `lowp` command x every kind of
//! clash (an input, a hard or symbolic link to it, the same file through `..`, another output,
//! a device, a FIFO, a directory, a trailing slash, an empty name, a read-only directory, a
//! full disk). Each case asserts the exit code, that the message names the path (or the
//! option) and the problem, that every input is byte-identical afterwards, and that nothing
//! is left behind in the scratch directory (no temporary files, no new files). Every refusal
//! happens before any work, so the slow commands (`report`, `train`, `bench`) cost nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a writer writes to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// A file, replaced whole.
    File,
    /// A directory, created if missing.
    Dir,
}

/// One writer: a command line with its output at `{}`, the input `in.safetensors` where it
/// reads one, and whether it is quick enough to run to the end (the full-disk case).
struct Writer {
    /// Its name in failure messages.
    name: &'static str,
    /// The arguments; `@` stands for the output path.
    args: &'static [&'static str],
    /// The option the output is given to (for the empty-name case).
    option: &'static str,
    /// A file or a directory.
    kind: Kind,
    /// Whether it reads `in.safetensors`.
    reads_input: bool,
    /// Whether it writes within a second (run to its end in the full-disk case).
    quick: bool,
}

/// Every writer of the command line.
const WRITERS: &[Writer] = &[
    Writer {
        name: "convert OUT",
        args: &["convert", "in.safetensors", "@", "--to", "f16"],
        option: "OUT",
        kind: Kind::File,
        reads_input: true,
        quick: true,
    },
    Writer {
        name: "convert --report",
        args: &[
            "convert",
            "in.safetensors",
            "--dry-run",
            "--to",
            "f16",
            "--report",
            "@",
        ],
        option: "--report",
        kind: Kind::File,
        reads_input: true,
        quick: true,
    },
    Writer {
        name: "accumulate --plot",
        args: &["accumulate", "--n", "10", "--plot", "@"],
        option: "--plot",
        kind: Kind::File,
        reads_input: false,
        quick: true,
    },
    Writer {
        name: "train --json",
        args: &["train", "--epochs", "1", "--json", "@"],
        option: "--json",
        kind: Kind::File,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "train --plot",
        args: &["train", "--epochs", "1", "--plot", "@"],
        option: "--plot",
        kind: Kind::File,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "bench sum --json",
        args: &["bench", "sum", "--size", "1K", "--json", "@"],
        option: "--json",
        kind: Kind::File,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "bench matmul --json",
        args: &["bench", "matmul", "--size", "8", "--json", "@"],
        option: "--json",
        kind: Kind::File,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "bench convert --json",
        args: &["bench", "convert", "--quick", "--json", "@"],
        option: "--json",
        kind: Kind::File,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "bench convert-file --json",
        args: &["bench", "convert-file", "--size", "1K", "--json", "@"],
        option: "--json",
        kind: Kind::File,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "bench convert-file --dir",
        args: &["bench", "convert-file", "--size", "1K", "--dir", "@"],
        option: "--dir",
        kind: Kind::Dir,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "plot --out",
        args: &["plot", "--out", "@"],
        option: "--out",
        kind: Kind::Dir,
        reads_input: false,
        quick: false,
    },
    Writer {
        name: "report --out",
        args: &["report", "--formats", "f16", "--out", "@"],
        option: "--out",
        kind: Kind::Dir,
        reads_input: false,
        quick: false,
    },
];

/// A kind of clash: what is put at the output path, and what lowp must answer.
#[derive(Clone, Copy, Debug)]
enum Clash {
    /// The input itself.
    Input,
    /// The input through `sub/../`.
    InputDotted,
    /// A hard link to the input.
    HardLink,
    /// A symbolic link to the input.
    SymLink,
    /// `/dev/null`.
    Device,
    /// A FIFO (opening it for writing would hang).
    Fifo,
    /// An existing directory where a file is expected (a file where a directory is).
    WrongKind,
    /// An existing directory written with a trailing slash where a file is expected.
    TrailingSlash,
    /// An empty name.
    Empty,
    /// A file in a read-only directory.
    ReadOnlyDir,
    /// A file-size limit of 0 blocks (`ulimit -f 0`, SIGXFSZ ignored): a full disk.
    FullDisk,
}

const CLASHES: &[Clash] = &[
    Clash::Input,
    Clash::InputDotted,
    Clash::HardLink,
    Clash::SymLink,
    Clash::Device,
    Clash::Fifo,
    Clash::WrongKind,
    Clash::TrailingSlash,
    Clash::Empty,
    Clash::ReadOnlyDir,
    Clash::FullDisk,
];

/// What a case expects: the exit code and the words of the message.
struct Expected {
    /// The exit code.
    code: i32,
    /// Substrings the message must hold (the path or option, and the problem).
    words: Vec<String>,
}

/// A fresh scratch directory holding `in.safetensors` (a copy of a test fixture).
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-output-safety-{}-{tag}", std::process::id()));
    let _ = make_writable(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mixed.safetensors");
    std::fs::copy(fixture, dir.join("in.safetensors")).unwrap();
    dir
}

/// Gives back write permission to `dir`'s read-only subdirectory so it can be removed.
fn make_writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("ro"), std::fs::Permissions::from_mode(0o755))
}

/// Every entry under `dir` (not following links): its type and, for a file, its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (String, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.insert(path, (format!("{:?}", meta.file_type()), bytes));
        }
    }
    out
}

/// Whether this process runs as root (which ignores directory permissions).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The command to run `lowp` with: as root, dropped to nobody through `setpriv` where that
/// works (for the read-only directory to mean anything); `None` when it cannot be arranged.
fn unprivileged(dir: &Path) -> Option<Command> {
    use std::os::unix::fs::PermissionsExt;
    let lowp = env!("CARGO_BIN_EXE_lowp");
    if !is_root() {
        return Some(Command::new(lowp));
    }
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", lowp]);
    // nobody must be able to reach the binary and the scratch directory.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).ok()?;
    let probe = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            lowp,
            "--version",
        ])
        .current_dir(dir)
        .output()
        .ok()?;
    probe.status.success().then_some(cmd)
}

/// Runs `cmd` in `dir` with a time limit (a FIFO opened for writing would block forever),
/// and gives the exit code and stderr.
fn run_limited(mut cmd: Command, dir: &Path, what: &str) -> (Option<i32>, String) {
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after 60 s (blocked on the output?)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Sets up `clash` for `writer` in `dir`, and gives the output argument and what lowp must
/// answer; `None` when the case does not apply.
fn setup(writer: &Writer, clash: Clash, dir: &Path) -> Option<(String, Expected)> {
    let refuse = |path: &str, problem: &str| Expected {
        code: 2,
        words: vec![format!("{} {path}", writer.option), problem.to_string()],
    };
    let file = writer.kind == Kind::File;
    Some(match clash {
        Clash::Input | Clash::InputDotted | Clash::HardLink | Clash::SymLink
            if !writer.reads_input =>
        {
            return None;
        }
        Clash::Input => (
            "in.safetensors".into(),
            refuse("in.safetensors", "same file as IN"),
        ),
        Clash::InputDotted => {
            std::fs::create_dir(dir.join("sub")).unwrap();
            let path = "./sub/../in.safetensors";
            (path.into(), refuse(path, "same file as IN"))
        }
        Clash::HardLink => {
            std::fs::hard_link(dir.join("in.safetensors"), dir.join("hard.safetensors")).unwrap();
            (
                "hard.safetensors".into(),
                refuse("hard.safetensors", "same file as IN"),
            )
        }
        Clash::SymLink => {
            std::os::unix::fs::symlink("in.safetensors", dir.join("link.safetensors")).unwrap();
            (
                "link.safetensors".into(),
                refuse("link.safetensors", "same file as IN"),
            )
        }
        Clash::Device => (
            "/dev/null".into(),
            refuse("/dev/null", "is a character device"),
        ),
        Clash::Fifo => {
            let status = Command::new("mkfifo").arg(dir.join("fifo")).status().ok()?;
            if !status.success() {
                return None;
            }
            ("fifo".into(), refuse("fifo", "is a FIFO"))
        }
        Clash::WrongKind if file => {
            std::fs::create_dir(dir.join("existing")).unwrap();
            ("existing".into(), refuse("existing", "is a directory"))
        }
        Clash::WrongKind => {
            std::fs::write(dir.join("plain"), b"someone's file").unwrap();
            ("plain".into(), refuse("plain", "not a directory"))
        }
        Clash::TrailingSlash if file => {
            std::fs::create_dir(dir.join("existing")).unwrap();
            ("existing/".into(), refuse("existing/", "names a directory"))
        }
        Clash::TrailingSlash => return None,
        Clash::Empty => (
            String::new(),
            Expected {
                code: 2,
                words: vec![writer.option.into(), "is empty".into()],
            },
        ),
        Clash::ReadOnlyDir => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::create_dir(dir.join("ro")).unwrap();
            std::fs::set_permissions(dir.join("ro"), std::fs::Permissions::from_mode(0o555))
                .unwrap();
            let path = if file { "ro/out" } else { "ro/sub" };
            (
                path.into(),
                Expected {
                    code: 1,
                    words: vec![
                        format!("{} {path}", writer.option),
                        "Permission denied".into(),
                    ],
                },
            )
        }
        Clash::FullDisk if file && writer.quick => (
            "out.file".into(),
            Expected {
                code: 1,
                words: vec!["out.file".into(), "File too large".into()],
            },
        ),
        Clash::FullDisk => return None,
    })
}

#[test]
fn every_writer_refuses_every_clash_and_leaves_everything_as_it_was() {
    let mut ran = 0;
    let mut skipped = Vec::new();
    for (w, writer) in WRITERS.iter().enumerate() {
        for clash in CLASHES {
            let what = format!("{} x {clash:?}", writer.name);
            let dir = scratch(&format!("{w}-{clash:?}"));
            let Some((out, expected)) = setup(writer, *clash, &dir) else {
                std::fs::remove_dir_all(&dir).unwrap();
                continue;
            };
            let args: Vec<&str> = writer
                .args
                .iter()
                .map(|&a| if a == "@" { out.as_str() } else { a })
                .collect();
            let cmd = match clash {
                Clash::ReadOnlyDir => match unprivileged(&dir) {
                    Some(mut c) => {
                        c.args(&args);
                        c
                    }
                    None => {
                        skipped.push(what);
                        let _ = make_writable(&dir);
                        std::fs::remove_dir_all(&dir).unwrap();
                        continue;
                    }
                },
                Clash::FullDisk => {
                    let mut c = Command::new("sh");
                    c.args([
                        "-c",
                        "trap '' XFSZ; ulimit -f 0 && exec \"$0\" \"$@\"",
                        env!("CARGO_BIN_EXE_lowp"),
                    ])
                    .args(&args);
                    c
                }
                _ => {
                    let mut c = Command::new(env!("CARGO_BIN_EXE_lowp"));
                    c.args(&args);
                    c
                }
            };
            let before = snapshot(&dir);
            let (code, err) = run_limited(cmd, &dir, &what);
            assert_eq!(code, Some(expected.code), "{what}: {err}");
            assert_eq!(err.lines().count(), 1, "{what}: not one line: {err}");
            assert!(err.starts_with("error: "), "{what}: {err}");
            for word in &expected.words {
                assert!(err.contains(word.as_str()), "{what}: no '{word}' in {err}");
            }
            assert_eq!(
                snapshot(&dir),
                before,
                "{what}: the scratch directory changed (an input touched or a file left)"
            );
            if matches!(clash, Clash::Device) {
                use std::os::unix::fs::FileTypeExt;
                let meta = std::fs::metadata("/dev/null").unwrap();
                assert!(
                    meta.file_type().is_char_device(),
                    "{what}: /dev/null replaced"
                );
            }
            let _ = make_writable(&dir);
            std::fs::remove_dir_all(&dir).unwrap();
            ran += 1;
        }
    }
    if !skipped.is_empty() {
        eprintln!(
            "skipped (running as root without a way to drop privileges): {}",
            skipped.join(", ")
        );
    }
    assert!(ran >= 60, "only {ran} cases ran");
}

#[test]
fn outputs_that_are_each_other_are_refused_before_any_work() {
    let dir = scratch("pairs");
    let cases: &[&[&str]] = &[
        &[
            "convert",
            "in.safetensors",
            "o.safetensors",
            "--to",
            "f16",
            "--report",
            "./o.safetensors",
        ],
        &[
            "train", "--epochs", "1", "--json", "x", "--plot", "sub/../x",
        ],
    ];
    std::fs::create_dir(dir.join("sub")).unwrap();
    for args in cases {
        let before = snapshot(&dir);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lowp"));
        cmd.args(*args);
        let (code, err) = run_limited(cmd, &dir, &format!("{args:?}"));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("are the same file"), "{args:?}: {err}");
        assert_eq!(snapshot(&dir), before, "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
