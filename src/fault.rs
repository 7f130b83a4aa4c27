//! Fault injection at the crate's system calls, SQLite's way: a test makes the `n`th call of a kind fail with a
//! chosen `errno`, in process and deterministically, and checks that the answer is still right or an error is
//! reported for it (never a silent "missing", never a panic). docs/RELIABILITY.md has the policy and the matrix.
//!
//! Every call site of the library that asks the file system something (open, `stat`, read, map, list a
//! directory, resolve a path) calls [`check`] with its [`Call`] kind just before the system call, and returns
//! its error as the system call's own; so do the front ends' own (the gix adapter's repository discovery, the
//! command's threads: [`Call`] and [`check`] are public for them). Without the feature `fault-injection` the
//! check is an inlined `Ok(())`: the shipped code is unchanged.
//!
//! With the feature (this workspace's tests only; not semver), a plan is armed in one of two ways:
//! - `on_this_thread`: for the calls the current thread makes while a closure runs (in-process tests, which
//!   cargo runs on many threads at once: each sees only its own plan);
//! - the environment variable `ODB_INDEX_FAULT`, read once by the first check of the process (for a command
//!   built with the feature: the cli's tests run the built binary with it), as `CALL:N:ERRNO` or
//!   `CALL:N:ERRNO:always` (`stat:3:EIO`: the third `stat` fails; with `:always`, it and every later one).
//!   When the fault fires, one line starting with `FIRED_PREFIX` goes to stderr, so that a test walking call
//!   positions knows when `N` is past the last call of the run.
//!
//! ```
//! # #[cfg(feature = "fault-injection")] {
//! use odb_index::data::open_regular;
//! use odb_index::fault::{self, Call, Fault};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("HEAD");
//! std::fs::write(&path, "ref: refs/heads/main\n").unwrap();
//! // How many calls of each kind one open makes, then the first `stat` failing once with EIO.
//! let (ok, seen) = fault::count_on_this_thread(|| open_regular(&path).is_ok());
//! assert!(ok && seen.calls(Call::Stat) >= 1 && seen.fired == 0);
//! let fault = Fault::once(Call::Stat, 1, fault::errno::EIO);
//! let (result, report) = fault::on_this_thread(fault, || open_regular(&path));
//! assert_eq!(result.unwrap_err().raw_os_error(), Some(fault::errno::EIO));
//! assert_eq!(report.fired, 1);
//! assert!(open_regular(&path).is_ok()); // outside the closure nothing is planned
//! # }
//! ```
#![cfg_attr(not(feature = "fault-injection"), allow(dead_code))]

use std::io;

/// The kinds of system call a fault can be injected at (each call site names one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// `open`/`openat` of a file or directory.
    Open,
    /// `stat`/`fstatat`/`fstat`/`statx` (also `metadata` and `symlink_metadata`).
    Stat,
    /// `read` of an open file.
    Read,
    /// `mmap` of an open file.
    Map,
    /// Reading a directory's entries (`getdents`), including the open of the directory for it.
    List,
    /// Resolving a path: `readlink`, `realpath`/`canonicalize`, `getcwd`.
    Resolve,
    /// Spawning a thread.
    Spawn,
}

impl Call {
    /// Every kind, in the order `Report::counts` (with the feature) holds them.
    pub const ALL: [Call; 7] = [
        Call::Open,
        Call::Stat,
        Call::Read,
        Call::Map,
        Call::List,
        Call::Resolve,
        Call::Spawn,
    ];

    /// The kind's name as `ODB_INDEX_FAULT` spells it (`open`, `stat`, `read`, `map`, `list`, `resolve`,
    /// `spawn`).
    pub const fn name(self) -> &'static str {
        match self {
            Call::Open => "open",
            Call::Stat => "stat",
            Call::Read => "read",
            Call::Map => "map",
            Call::List => "list",
            Call::Resolve => "resolve",
            Call::Spawn => "spawn",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// Whether a failed system call may pass, the fault policy's one definition (docs/RELIABILITY.md, "Faults"):
/// EINTR, EAGAIN, EMFILE, ENFILE, ENOMEM, EIO, or EACCES/EPERM. Such a failure is never evidence that an object
/// or its file is gone: a lookup that would answer "missing" after one looks again, and if it persists the
/// answer is an error, never "missing" (also under `IncompleteMode::Miss`, which answers git's `missing` only for
/// files that are there but cannot be used, and for failures that do not pass, such as ELOOP).
///
/// ```
/// use std::io::{Error, ErrorKind};
/// assert!(odb_index::fault::is_transient(&Error::from(ErrorKind::Interrupted)));
/// assert!(!odb_index::fault::is_transient(&Error::from(ErrorKind::NotFound)));
/// ```
pub fn is_transient(e: &io::Error) -> bool {
    use io::ErrorKind as K;
    #[cfg(unix)]
    let raw = |errno: rustix::io::Errno| e.raw_os_error() == Some(errno.raw_os_error());
    #[cfg(unix)]
    let listed = raw(rustix::io::Errno::IO)
        || raw(rustix::io::Errno::NFILE)
        || raw(rustix::io::Errno::MFILE);
    #[cfg(not(unix))]
    let listed = false;
    listed
        || matches!(
            e.kind(),
            K::Interrupted | K::WouldBlock | K::OutOfMemory | K::PermissionDenied
        )
}

/// The check before a system call of kind `call`: `Err` with the planned `errno` when the plan says this call
/// fails, else `Ok(())` (always, without the feature). Public for the front ends' own system calls (the gix
/// adapter's discovery, the command's threads), so that one plan counts theirs with the library's.
#[inline(always)]
pub fn check(call: Call) -> io::Result<()> {
    #[cfg(feature = "fault-injection")]
    {
        imp::check(call)
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = call;
        Ok(())
    }
}

/// [`check`] for a call made through rustix (its error type).
#[cfg(unix)]
#[inline(always)]
pub(crate) fn check_rustix(call: Call) -> rustix::io::Result<()> {
    #[cfg(feature = "fault-injection")]
    {
        imp::check(call).map_err(|e| {
            rustix::io::Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc_eio()))
        })
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = call;
        Ok(())
    }
}

#[cfg(all(unix, feature = "fault-injection"))]
const fn libc_eio() -> i32 {
    imp::errno::EIO
}

#[cfg(feature = "fault-injection")]
pub use imp::{FIRED_PREFIX, Fault, Report, count_on_this_thread, errno, on_this_thread};

// The plan's counters are std atomics (sync::plain): no answer reads them and no model sees them (tests only).
#[cfg(feature = "fault-injection")]
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: fault-injection counters, tests only"
)]
mod imp {
    use std::cell::RefCell;
    use std::io;

    use super::Call;
    use crate::sync::plain::atomic::AtomicU64;
    use crate::sync::plain::atomic::Ordering;
    use crate::sync::plain::{Arc, OnceLock};

    /// The `errno` values the fault matrix uses (Linux's numbers), so tests need no libc.
    pub mod errno {
        /// Interrupted system call.
        pub const EINTR: i32 = 4;
        /// I/O error.
        pub const EIO: i32 = 5;
        /// Resource temporarily unavailable.
        pub const EAGAIN: i32 = 11;
        /// Out of memory.
        pub const ENOMEM: i32 = 12;
        /// Permission denied.
        pub const EACCES: i32 = 13;
        /// Too many open files in the system.
        pub const ENFILE: i32 = 23;
        /// Too many open files in the process.
        pub const EMFILE: i32 = 24;
        /// No such file or directory (not transient: what a gone file says).
        pub const ENOENT: i32 = 2;

        /// Every value above, with its name.
        pub const ALL: [(&str, i32); 8] = [
            ("EINTR", EINTR),
            ("EIO", EIO),
            ("EAGAIN", EAGAIN),
            ("ENOMEM", ENOMEM),
            ("EACCES", EACCES),
            ("ENFILE", ENFILE),
            ("EMFILE", EMFILE),
            ("ENOENT", ENOENT),
        ];

        /// The value named `name` (`EIO`, ...).
        pub fn by_name(name: &str) -> Option<i32> {
            ALL.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
        }
    }

    /// The start of the line written to stderr when a fault planned by `ODB_INDEX_FAULT` fires.
    pub const FIRED_PREFIX: &str = "odb-index fault-injection:";

    /// One planned fault: the `nth` call (from 1) of kind `call` fails with `errno`, and with `persist` every
    /// later call of that kind too.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Fault {
        /// The kind of call that fails.
        pub call: Call,
        /// Which call of that kind fails first, counted from 1 in the plan's scope.
        pub nth: u64,
        /// The error it fails with (an `errno` value: [`errno`]).
        pub errno: i32,
        /// Whether every later call of that kind fails too (a lasting fault), not only the `nth`.
        pub persist: bool,
    }

    impl Fault {
        /// The `nth` call of kind `call` fails once with `errno`.
        pub const fn once(call: Call, nth: u64, errno: i32) -> Fault {
            Fault {
                call,
                nth,
                errno,
                persist: false,
            }
        }

        /// The `nth` call of kind `call` and every later one fail with `errno`.
        pub const fn from_then_on(call: Call, nth: u64, errno: i32) -> Fault {
            Fault {
                call,
                nth,
                errno,
                persist: true,
            }
        }

        /// Parse `CALL:N:ERRNO[:always]` (`stat:3:EIO`).
        pub fn parse(text: &str) -> Option<Fault> {
            let mut parts = text.trim().split(':');
            let call = parts.next()?;
            let call = Call::ALL.into_iter().find(|c| c.name() == call)?;
            let nth = parts.next()?.parse().ok().filter(|&n| n >= 1)?;
            let errno = parts.next()?;
            let errno = errno::by_name(errno).or_else(|| errno.parse().ok())?;
            let persist = match parts.next() {
                None => false,
                Some("always") => true,
                Some(_) => return None,
            };
            parts.next().is_none().then_some(Fault {
                call,
                nth,
                errno,
                persist,
            })
        }
    }

    /// What a plan saw: how many calls of each kind were checked, and how many of them failed.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Report {
        /// Calls checked, by kind, in the order of [`Call::ALL`].
        pub counts: [u64; 7],
        /// Calls made to fail.
        pub fired: u64,
    }

    impl Report {
        /// Calls of kind `call` checked.
        pub fn calls(&self, call: Call) -> u64 {
            self.counts[call.index()]
        }
    }

    #[derive(Debug)]
    struct Plan {
        fault: Option<Fault>,
        announce: bool,
        counts: [AtomicU64; 7],
        fired: AtomicU64,
    }

    impl Plan {
        fn new(fault: Option<Fault>, announce: bool) -> Plan {
            Plan {
                fault,
                announce,
                counts: Default::default(),
                fired: AtomicU64::new(0),
            }
        }

        fn check(&self, call: Call) -> io::Result<()> {
            // Relaxed: a count per kind; with several threads in one plan (the command's workers), which
            // thread's call is the `n`th is the order the counter's modifications take, nothing more.
            let n = self.counts[call.index()].fetch_add(1, Ordering::Relaxed) + 1;
            let Some(f) = self.fault.filter(|f| f.call == call) else {
                return Ok(());
            };
            if n == f.nth || (f.persist && n > f.nth) {
                self.fired.fetch_add(1, Ordering::Relaxed);
                if self.announce {
                    eprintln!(
                        "{FIRED_PREFIX} {} #{n} failed with errno {}",
                        call.name(),
                        f.errno
                    );
                }
                return Err(io::Error::from_raw_os_error(f.errno));
            }
            Ok(())
        }

        fn report(&self) -> Report {
            let mut r = Report {
                fired: self.fired.load(Ordering::Relaxed),
                ..Report::default()
            };
            for (c, n) in r.counts.iter_mut().zip(&self.counts) {
                *c = n.load(Ordering::Relaxed);
            }
            r
        }
    }

    thread_local! {
        static LOCAL: RefCell<Option<Arc<Plan>>> = const { RefCell::new(None) };
    }

    /// The plan of `ODB_INDEX_FAULT`, read at the first check of the process (`None`: not set, or not a fault
    /// (then a warning once)).
    fn from_env() -> Option<&'static Plan> {
        static GLOBAL: OnceLock<Option<Plan>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let text = std::env::var("ODB_INDEX_FAULT").ok()?;
                match Fault::parse(&text) {
                    Some(f) => Some(Plan::new(Some(f), true)),
                    None => {
                        eprintln!(
                            "{FIRED_PREFIX} ODB_INDEX_FAULT={text:?} is not CALL:N:ERRNO[:always]"
                        );
                        None
                    }
                }
            })
            .as_ref()
    }

    pub(crate) fn check(call: Call) -> io::Result<()> {
        let local = LOCAL.with(|l| l.borrow().as_ref().map(Arc::clone));
        match local {
            Some(plan) => plan.check(call),
            None => from_env().map_or(Ok(()), |p| p.check(call)),
        }
    }

    /// Run `f` with `fault` planned for the calls this thread makes meanwhile (counted from 1 at the start), and
    /// say what the plan saw. Calls made on other threads are not counted (nor failed).
    pub fn on_this_thread<R>(fault: Fault, f: impl FnOnce() -> R) -> (R, Report) {
        scoped(Some(fault), f)
    }

    /// Run `f` counting the calls this thread makes meanwhile, by kind, failing none: how many positions a fault
    /// matrix walks for `f`.
    pub fn count_on_this_thread<R>(f: impl FnOnce() -> R) -> (R, Report) {
        scoped(None, f)
    }

    fn scoped<R>(fault: Option<Fault>, f: impl FnOnce() -> R) -> (R, Report) {
        let plan = Arc::new(Plan::new(fault, false));
        let before = LOCAL.with(|l| l.borrow_mut().replace(Arc::clone(&plan)));
        struct Restore(Option<Arc<Plan>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = self.0.take();
                LOCAL.with(|l| *l.borrow_mut() = before);
            }
        }
        let restore = Restore(before);
        let r = f();
        drop(restore);
        (r, plan.report())
    }
}
