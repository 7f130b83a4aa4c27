//! Replace refs as git's `cat-file` honours them: `refs/replace/<id>` (loose, or in `packed-refs`) names the
//! object to answer `<id>` with (its type, size and contents; the printed name stays `<id>`), up to 5
//! replacements deep (git's `MAXREPLACEDEPTH`). Off when `GIT_NO_REPLACE_OBJECTS` is set or the repository's
//! `config` says `core.useReplaceRefs = false`, and for `--batch-all-objects` (git disables them there).
//! `GIT_REPLACE_REF_BASE` moves `refs/replace/`. Not read: global and system config, config includes, and the
//! reftable ref format (its replace refs are ignored).

use std::collections::HashMap;
use std::path::Path;

use odb_index::{HashKind, ObjectId};

use crate::stop::GitFatal;

/// git's `MAXREPLACEDEPTH`.
const MAX_DEPTH: usize = 5;
/// The most a ref file or `packed-refs` may hold here (a ref file is one line; `packed-refs` is read whole).
const REF_FILE_LIMIT: u64 = 1 << 30;

/// The replacements of a repository: original id → replacement id.
#[derive(Clone, Debug, Default)]
pub struct Replacements(HashMap<ObjectId, ObjectId>);

impl Replacements {
    /// The replace refs of the repository whose git directory is `git_dir`, unless disabled. A file that is not
    /// there is no replace ref; one that cannot be read (anything but "not found": `packed-refs`, a loose replace
    /// ref, the directory of them, `config`) is git's fatal error, naming it: without it an object would be
    /// answered unreplaced, silently.
    pub fn read(git_dir: &Path, kind: HashKind) -> Result<Replacements, GitFatal> {
        let mut map = HashMap::new();
        if std::env::var_os("GIT_NO_REPLACE_OBJECTS").is_some() || disabled_in_config(git_dir)? {
            return Ok(Replacements(map));
        }
        let base = std::env::var("GIT_REPLACE_REF_BASE").unwrap_or_else(|_| "refs/replace/".into());
        let base = base.trim_end_matches('/').to_owned() + "/";
        let parse = |hex: &str| ObjectId::from_hex_kind(hex.trim().as_bytes(), kind).ok();
        // Packed first: a loose ref of the same name overrides it.
        if let Some(data) = read_if_there(&git_dir.join("packed-refs"))? {
            for line in String::from_utf8_lossy(&data).lines() {
                let Some((target, name)) = line.split_once(' ') else {
                    continue;
                };
                if let Some(rest) = name.strip_prefix(&base)
                    && let (Some(from), Some(to)) = (parse(last_part(rest)), parse(target))
                {
                    map.insert(from, to);
                }
            }
        }
        let mut todo = vec![git_dir.join(&base)];
        while let Some(dir) = todo.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(unreadable(&dir, &e)),
            };
            for e in entries {
                let e = e.map_err(|e| unreadable(&dir, &e))?;
                let path = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    todo.push(path);
                    continue;
                }
                let from = e.file_name().to_str().and_then(parse);
                let to = read_if_there(&path)?.and_then(|d| parse(std::str::from_utf8(&d).ok()?));
                if let (Some(from), Some(to)) = (from, to) {
                    map.insert(from, to);
                }
            }
        }
        Ok(Replacements(map))
    }

    /// None at all (`--batch-all-objects`).
    pub fn none() -> Replacements {
        Replacements::default()
    }

    /// What to read for `id`: its replacement's replacement ..., or `id` itself; git's `fatal: replace depth
    /// too high for object <id>` past 5.
    pub fn resolve(&self, id: &ObjectId) -> Result<ObjectId, GitFatal> {
        let mut cur = *id;
        for _ in 0..MAX_DEPTH {
            match self.0.get(&cur) {
                Some(next) => cur = *next,
                None => return Ok(cur),
            }
        }
        // As git: five replacements in a row are too deep, whether or not the fifth is replaced again.
        let _ = cur;
        Err(GitFatal(format!("replace depth too high for object {id}")))
    }
}

/// The part of a ref name after its last `/` (git takes the id from there).
fn last_part(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The contents of the file at `path`, `None` if it is not there; read once more after any other error (it may
/// not last), then git's fatal error.
fn read_if_there(path: &Path) -> Result<Option<Vec<u8>>, GitFatal> {
    let mut tried = false;
    loop {
        match odb_index::data::read_bounded(path, REF_FILE_LIMIT) {
            Ok(data) => return Ok(Some(data)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if tried => return Err(unreadable(path, &e)),
            Err(_) => tried = true,
        }
    }
}

/// git's message for a ref file it cannot read.
fn unreadable(path: &Path, e: &std::io::Error) -> GitFatal {
    GitFatal(format!("unable to read {}: {e}", path.display()))
}

/// `core.useReplaceRefs` set false in the repository's own `config` (the last setting wins, as in git).
fn disabled_in_config(git_dir: &Path) -> Result<bool, GitFatal> {
    let Some(data) = read_if_there(&git_dir.join("config"))? else {
        return Ok(false);
    };
    let mut in_core = false;
    let mut off = false;
    for line in String::from_utf8_lossy(&data).lines() {
        let line = line.trim();
        if let Some(section) = line.strip_prefix('[') {
            in_core = section
                .trim_end_matches(']')
                .trim()
                .eq_ignore_ascii_case("core");
        } else if in_core
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("usereplacerefs")
        {
            let v = value
                .split(['#', ';'])
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            off = matches!(v.as_str(), "false" | "no" | "off" | "0");
        }
    }
    Ok(off)
}
