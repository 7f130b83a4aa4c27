//! Object names as git's `cat-file` reads them beyond hex: `HEAD`, refs, `rev~N`, `rev:path`, ... resolved by
//! the adapter ([`odb_index_gix::Refs::resolve`]: gix-revision and gix-ref), in the shape of the store's
//! [`PrefixLookup`].

use std::path::Path;

use odb_index::{PrefixLookup, Store};
use odb_index_gix::{Error, Objects, Refs, convert::oid_from_gix};

/// The refs of the repository `store` reads, found from `path` as git finds a repository; `None` when there is
/// none or when the repository found keeps its objects elsewhere (`path` is an objects directory of its own,
/// inside another repository's work tree: that repository's `HEAD` does not name its objects). A system call
/// that failed while looking (`getcwd`, a `readlink`, reading `commondir`) is an error: there may be a
/// repository whose names would all answer `missing` (git dies there).
pub fn refs_for(store: &Store, path: &Path) -> Result<Option<Refs>, Error> {
    let refs = match Refs::discover(path, store.hash_kind()) {
        Ok(refs) => refs,
        // gix-discover takes a git directory whose `HEAD` cannot be read for none: with a `HEAD` beside the
        // objects the store opened, look once more, then it is an error (git dies: not a git repository).
        Err(e @ Error::NotARepository { .. }) if head_beside(store) => {
            match Refs::discover(path, store.hash_kind()) {
                Ok(refs) => refs,
                Err(Error::NotARepository { .. }) => return Err(e),
                Err(again) => return Err(again),
            }
        }
        Err(Error::NotARepository { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let objects = refs.store().common_dir_resolved().join("objects");
    let canonical = odb_index::fault::check(odb_index::fault::Call::Resolve)
        .and_then(|()| objects.canonicalize());
    match canonical {
        Ok(dir) => Ok((dir == store.objects_dir()).then_some(refs)),
        // No `objects` there: this repository's objects are elsewhere.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            path: objects,
            source,
        }),
    }
}

/// Whether the directory above the store's objects has a `HEAD` (or may have: it cannot be looked at): the
/// objects are a repository's, which discovery from their path finds.
fn head_beside(store: &Store) -> bool {
    let Some(git_dir) = store.objects_dir().parent() else {
        return false;
    };
    let stat = odb_index::fault::check(odb_index::fault::Call::Stat)
        .and_then(|()| git_dir.join("HEAD").symlink_metadata());
    !matches!(stat, Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// What `name` names: hex names as before ([`hex_name`]), except that, as git, a ref wins over an
/// abbreviation spelled like it; any other name through `refs` (none: the path given is an objects directory
/// outside a repository, where only hex names are resolved).
pub fn resolve(objects: &Objects, refs: Option<&Refs>, name: &[u8]) -> Result<PrefixLookup, Error> {
    let hex = match std::str::from_utf8(name) {
        Ok(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => Some(hex),
        _ => None,
    };
    let Some(refs) =
        refs.filter(|_| hex.is_none_or(|h| h.len() < objects.hash_kind().len_in_hex()))
    else {
        // No refs (an objects directory outside a repository): only hex names, anything else is no name.
        return hex.map_or(Ok(PrefixLookup::NotFound), |h| hex_name(objects, h));
    };
    if let Some(name) = hex {
        // git's `get_oid_basic`: refs before an abbreviation; the store's answer (with its `ambiguous`) after.
        return match refs.resolve_ref(objects, name)? {
            Some(id) => Ok(PrefixLookup::Unique(oid_from_gix(&id))),
            None => hex_name(objects, name),
        };
    }
    match refs.resolve_bytes(objects, name) {
        Ok(Some(id)) => Ok(PrefixLookup::Unique(oid_from_gix(&id))),
        Ok(None) => Ok(PrefixLookup::NotFound),
        Err(Error::AmbiguousName { .. }) => Ok(PrefixLookup::Ambiguous),
        Err(e) => Err(e),
    }
}

/// What a hex object name means, as `git cat-file` reads it: [`Objects::lookup_name`] in the shape of the store's
/// [`PrefixLookup`], with a name that is not one ([`Error::BadName`]) answered [`PrefixLookup::NotFound`] (git's
/// `missing`).
pub fn hex_name(objects: &Objects, hex: &str) -> Result<PrefixLookup, Error> {
    match objects.lookup_name(hex) {
        Ok(Some(id)) => Ok(PrefixLookup::Unique(oid_from_gix(&id))),
        Ok(None) | Err(Error::BadName { .. }) => Ok(PrefixLookup::NotFound),
        Err(Error::AmbiguousName { .. }) => Ok(PrefixLookup::Ambiguous),
        Err(e) => Err(e),
    }
}
