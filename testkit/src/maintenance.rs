//! Real git maintenance for the stress tests of the library and the command: a repository whose base objects
//! stay reachable throughout, and git's maintenance run one step at a time underneath the lookups.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::git::{all_objects, fast_import_blobs, git, git_stdin, init_repo};

/// How long a stress test runs, in seconds: `ODB_STRESS_SECS` if set (for long runs), else `default` (small
/// enough for CI on two shared cores).
pub fn stress_secs(default: u64) -> u64 {
    std::env::var("ODB_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Sets the flag when dropped, so the threads of a stress test stop even if the one running the maintenance
/// panics (no hung test).
pub struct StopOnDrop<'a>(pub &'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The first failures a stress test met (at most 20 are kept), for its assertion message; shared by its threads.
#[derive(Default)]
pub struct FirstFailures(Mutex<Vec<String>>);

impl FirstFailures {
    /// Keep `what` if fewer than 20 were kept.
    pub fn push(&self, what: String) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() < 20 {
            v.push(what);
        }
    }

    /// The failures kept, in the order met.
    pub fn list(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A bare SHA-1 repository whose base objects stay reachable (so no gc or prune removes them): four imported
/// packs and twenty loose blobs tied into a commit (loose until the first repack packs them and prunes the
/// loose copies, git's loose-to-packed move).
pub fn maintenance_repo() -> tempfile::TempDir {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    for b in 0..4 {
        fast_import_blobs(p, 50, b, &format!("base{b}"));
    }
    let mut tree = String::new();
    for i in 0..20 {
        let id = git_stdin(
            p,
            &["hash-object", "-w", "--stdin"],
            format!("loose base {i}\n").as_bytes(),
        );
        tree.push_str(&format!("100644 blob {}\tl{i}\n", id.trim()));
    }
    let tree = git_stdin(p, &["mktree"], tree.as_bytes());
    let commit = git(p, &["commit-tree", tree.trim(), "-m", "loose base"]);
    git(p, &["update-ref", "refs/heads/loose", commit.trim()]);
    repo
}

/// git's maintenance of a [`maintenance_repo`], a cycle of eight steps: `repack -adf`; a push (a new
/// fast-import pack on a temporary branch and an unreachable loose blob); `multi-pack-index write`;
/// `gc --prune=now`; the pushed branches deleted and `prune --expire=now`; `repack -d --write-midx`; another
/// push; the deletion and prune again. The base objects are reachable throughout; pushed objects come and go.
pub struct Maintenance {
    repo: PathBuf,
    steps: u64,
    repacks: u64,
    pushed: Vec<String>,
    seen: BTreeSet<String>,
}

impl Maintenance {
    /// Maintenance of `repo` (a [`maintenance_repo`]); [`seen`](Self::seen) starts with its objects now.
    pub fn new(repo: &Path) -> Maintenance {
        Maintenance {
            repo: repo.to_path_buf(),
            steps: 0,
            repacks: 0,
            pushed: Vec::new(),
            seen: all_objects(repo).into_iter().collect(),
        }
    }

    /// Run the next step of the cycle, then add the repository's objects to [`seen`](Self::seen) (no step
    /// creates an object that the same step removes, so `seen` holds every object that existed).
    pub fn step(&mut self) {
        let p = self.repo.as_path();
        let steps = self.steps;
        match steps % 8 {
            0 => {
                git(p, &["repack", "-adfq"]);
                self.repacks += 1;
            }
            1 | 5 => {
                let branch = format!("tmp{steps}");
                fast_import_blobs(p, 20, 10_000 + steps, &branch);
                git_stdin(
                    p,
                    &["hash-object", "-w", "--stdin"],
                    format!("unreachable {steps}\n").as_bytes(),
                );
                self.pushed.push(branch);
            }
            2 => {
                git(p, &["multi-pack-index", "write"]);
            }
            3 => {
                git(p, &["gc", "--prune=now", "-q"]);
                self.repacks += 1;
            }
            4 | 7 => self.unpush(),
            _ => {
                git(p, &["repack", "-dq", "--write-midx"]);
                self.repacks += 1;
            }
        }
        self.steps += 1;
        self.seen.extend(all_objects(&self.repo));
    }

    /// The pushed objects become unreachable; loose unreachable ones are pruned now, packed ones by the next
    /// `repack -ad` or gc.
    fn unpush(&mut self) {
        let p = self.repo.as_path();
        for b in self.pushed.drain(..) {
            git(p, &["update-ref", "-d", &format!("refs/heads/{b}")]);
        }
        git(p, &["prune", "--expire=now"]);
    }

    /// Run steps until `deadline` or `max_steps` steps in all, calling `after_each` after each step.
    pub fn run_until(&mut self, deadline: Instant, max_steps: u64, mut after_each: impl FnMut()) {
        while Instant::now() < deadline && self.steps < max_steps {
            self.step();
            after_each();
        }
    }

    /// End quietly: the pushed branches deleted, unreachable objects pruned and packs consolidated (`gc
    /// --prune=now`): the repository holds the base objects, reachable, and nothing changes any more.
    pub fn finish(&mut self) {
        self.unpush();
        git(&self.repo, &["gc", "--prune=now", "-q"]);
        self.seen.extend(all_objects(&self.repo));
    }

    /// Steps run so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Repacks and gcs run so far.
    pub fn repacks(&self) -> u64 {
        self.repacks
    }

    /// Every object id (hex) the repository held at the start or after any step: every object that existed.
    pub fn seen(&self) -> &BTreeSet<String> {
        &self.seen
    }
}
