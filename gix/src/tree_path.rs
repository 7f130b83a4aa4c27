//! The `path` of `rev:path` as git reads it: literally, one tree entry per `/`-separated name (git's
//! `get_tree_entry`: `dir/` is the tree `dir`, but `a/`, `dir//b`, `dir/./b`, `/a` and `.` name nothing), except
//! a path that starts with `./` or `../`, which git takes relative to the directory it runs in and normalises
//! (`prefix_path`).

use gix_hash::ObjectId;
use gix_object::Kind;

use crate::{Error, Objects};

/// The entry at `path` in the tree `tree` (git's `get_tree_entry`), or `None`. As git, the entries are searched
/// in order and the search stops at the first entry that sorts after the name (an unsorted tree hides the
/// entries after it, as in git).
pub(crate) fn entry(
    objects: &Objects,
    mut tree: ObjectId,
    mut path: &[u8],
    buf: &mut Vec<u8>,
) -> Result<Option<ObjectId>, Error> {
    let hash = objects.hash_kind();
    loop {
        if objects.read(&tree, buf)?.map(|i| i.kind) != Some(Kind::Tree) {
            return Ok(None);
        }
        if path.is_empty() {
            return Ok(Some(tree));
        }
        let mut next = None;
        for e in gix_object::TreeRefIter::from_bytes(buf, hash) {
            let Ok(e) = e else { return Ok(None) };
            let name: &[u8] = e.filename;
            if name.len() > path.len() {
                continue;
            }
            match path[..name.len()].cmp(name) {
                std::cmp::Ordering::Greater => continue,
                std::cmp::Ordering::Less => return Ok(None),
                std::cmp::Ordering::Equal => {}
            }
            if name.len() == path.len() {
                return Ok(Some(e.oid.to_owned()));
            }
            if path[name.len()] != b'/' {
                continue;
            }
            if !e.mode.is_tree() {
                return Ok(None);
            }
            if name.len() + 1 == path.len() {
                return Ok(Some(e.oid.to_owned()));
            }
            next = Some((e.oid.to_owned(), name.len() + 1));
            break;
        }
        let Some((id, skip)) = next else {
            return Ok(None);
        };
        tree = id;
        path = &path[skip..];
    }
}

/// Whether git reads `path` relative to the directory it runs in (`./...`, `../...`).
pub(crate) fn is_relative(path: &[u8]) -> bool {
    path.starts_with(b"./") || path.starts_with(b"../")
}

/// `path` with `.` and empty components removed and each `..` taking the one before it away (git's
/// `normalize_path_copy`); `None` when a `..` would leave the top.
pub(crate) fn normalize(path: &[u8]) -> Option<Vec<u8>> {
    let at = |i: usize| path.get(i).copied();
    let mut i = 0;
    let mut out = Vec::with_capacity(path.len());
    if at(0) == Some(b'/') {
        out.push(b'/');
    }
    let root = out.len();
    let skip_slashes = |mut i: usize| {
        while at(i) == Some(b'/') {
            i += 1;
        }
        i
    };
    i = skip_slashes(i);
    loop {
        if at(i) == Some(b'.') {
            match (at(i + 1), at(i + 2)) {
                (None, _) => i += 1,
                (Some(b'/'), _) => {
                    i = skip_slashes(i + 2);
                    continue;
                }
                (Some(b'.'), None | Some(b'/')) => {
                    i = skip_slashes(i + 2);
                    // Up one: drop the trailing `/` and the name before it.
                    if out.len() <= root + 1 {
                        return None;
                    }
                    out.pop();
                    while out.len() > root && out.last() != Some(&b'/') {
                        out.pop();
                    }
                    continue;
                }
                _ => {}
            }
        }
        while let Some(c) = at(i).filter(|&c| c != b'/') {
            out.push(c);
            i += 1;
        }
        if at(i).is_none() {
            return Some(out);
        }
        out.push(b'/');
        i = skip_slashes(i);
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    /// git's `normalize_path_copy` on the forms `rev:./path` gives it (prefix "" or "dir/").
    #[test]
    fn normalize_as_git() {
        let n = |p: &str| normalize(p.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        for (path, want) in [
            ("./a", Some("a")),
            ("./", Some("")),
            ("./.", Some("")),
            (".//a", Some("a")),
            ("./dir/./b", Some("dir/b")),
            ("./dir/", Some("dir/")),
            ("./dir//b", Some("dir/b")),
            ("dir/../a", Some("a")),
            ("dir/./../a", Some("a")),
            ("dir/..", Some("")),
            ("../a", None),
            ("./..", None),
            ("dir/../../a", None),
            ("dir/sub/../../b", Some("b")),
            ("./.a", Some(".a")),
            ("./..a", Some("..a")),
        ] {
            assert_eq!(n(path).as_deref(), want, "{path}");
        }
    }
}
