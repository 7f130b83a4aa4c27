//! One ref name looked up as git's `dwim_ref` looks it up: gix-ref's lookup through git's rules (`<name>`,
//! `refs/<name>`, `refs/tags/<name>`, ...), symbolic refs followed up to git's depth, and, as git, a loose ref
//! that cannot be read (`ignoring broken ref`) or a symbolic ref whose target does not resolve (`ignoring
//! dangling symref`) passed over with git's warning for the rules after it.

use gix_hash::ObjectId;
use gix_object::bstr::{BStr, BString, ByteSlice};
use gix_ref::file::ReferenceExt;

use crate::Error;
use crate::names::Resolver;

/// git's limit on the refs read for one name, the name's own included (`SYMREF_MAXDEPTH`): a chain of four
/// symbolic refs resolves, one of five does not.
const SYMREF_MAX_DEPTH: usize = 5;

/// The most warnings kept until [`crate::Refs::take_warnings`] takes them (later ones are dropped).
const MAX_WARNINGS: usize = 1024;

/// What one rule's ref gave.
enum Found {
    /// An object id.
    Id(ObjectId),
    /// No ref there.
    Nothing,
    /// A ref git passes over with a warning, naming it (its full name).
    PassedOver(String),
}

impl Resolver<'_> {
    /// [`Resolver::find_ref`] with the packed refs `packed`: gix-ref's lookup by git's rules, each name read loose
    /// first, then in `packed`; symbolic refs followed the same way. A ref passed over (see the module) warns
    /// and the rules after it are tried, each alone.
    pub(crate) fn find_ref_in(
        &self,
        partial: &gix_ref::PartialNameRef,
        packed: Option<&gix_ref::packed::Buffer>,
    ) -> Result<Option<ObjectId>, Error> {
        let passed = match self.lookup(partial, packed)? {
            Found::Id(id) => return Ok(Some(id)),
            Found::Nothing => return Ok(None),
            Found::PassedOver(name) => name,
        };
        let candidates = candidates(partial.as_bstr());
        let Some(at) = candidates.iter().position(|c| *c == passed.as_bytes()) else {
            return Ok(None);
        };
        for c in &candidates[at + 1..] {
            let Ok(one) = <&gix_ref::PartialNameRef>::try_from(c.as_bstr()) else {
                continue;
            };
            match self.lookup(one, packed)? {
                Found::Id(id) => return Ok(Some(id)),
                Found::Nothing | Found::PassedOver(_) => {}
            }
        }
        Ok(None)
    }

    /// gix-ref's lookup of `partial` and the symbolic refs it leads to.
    fn lookup(
        &self,
        partial: &gix_ref::PartialNameRef,
        packed: Option<&gix_ref::packed::Buffer>,
    ) -> Result<Found, Error> {
        let store = self.refs.store();
        let refs_error = |source| Error::Refs {
            path: store.git_dir().to_owned(),
            source,
        };
        let mut r = match store.try_find_packed(partial, packed) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(Found::Nothing),
            Err(e) => match broken(&e) {
                Some(name) => return Ok(self.warn(Found::PassedOver(name), "broken ref")),
                None => return Err(refs_error(e)),
            },
        };
        let name = r.name.as_bstr().to_string();
        for _ in 1..SYMREF_MAX_DEPTH {
            #[cfg(feature = "test-hooks")]
            if r.target.try_name().is_some() {
                self.refs.hook_point();
            }
            match r.follow_packed(store, packed) {
                None => break,
                Some(Ok(next)) => r = next,
                // A symbolic ref to a ref that does not exist (an unborn branch), or cannot be read.
                Some(Err(e))
                    if e.downcast_any_ref::<gix_ref::file::find::NotFound>()
                        .is_some()
                        || broken(&e).is_some() =>
                {
                    return Ok(self.warn(Found::PassedOver(name), "dangling symref"));
                }
                // Its target could not be read (not "not found"): git's `error:`, never an unborn branch.
                Some(Err(e)) => return Err(refs_error(e)),
            }
        }
        Ok(match r.target.try_id() {
            Some(id) => Found::Id(id.to_owned()),
            // Symbolic still after git's depth.
            None => self.warn(Found::PassedOver(name), "dangling symref"),
        })
    }

    /// `found`, with git's warning about it recorded (`ignoring <what> <name>`) where git prints one: not for
    /// `HEAD` (an unborn branch), not for a broken ref without a `/` in its name.
    fn warn(&self, found: Found, what: &str) -> Found {
        if let Found::PassedOver(name) = &found {
            let quiet = match what {
                "broken ref" => !name.contains('/'),
                _ => name == "HEAD",
            };
            let mut w = self.refs.warnings.lock().expect("not poisoned");
            // Bounded, for a caller that never takes them.
            if !quiet && w.len() < MAX_WARNINGS {
                w.push(format!("ignoring {what} {name}"));
            }
        }
        found
    }
}

/// The full name of the loose ref whose contents could not be decoded that `e` is about, if that is what it is.
fn broken(e: &gix_error::Error) -> Option<String> {
    let d = e.downcast_any_ref::<gix_ref::file::find::ReferenceDecode>()?;
    Some(d.relative_path.to_string_lossy().replace('\\', "/"))
}

/// The full names gix-ref's lookup of `name` tries, in its order (`find_one_with_verified_input`): git's rules.
fn candidates(name: &BStr) -> Vec<BString> {
    let pseudo = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    let full = |name: &BStr, inbetween: &str, consider_pseudo: bool| {
        let looks_full = name.starts_with(b"refs/")
            || name.starts_with(b"main-worktree/")
            || name.starts_with(b"worktrees/")
            || (consider_pseudo && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'));
        let mut out = BString::default();
        if !looks_full {
            out.extend_from_slice(b"refs/");
        }
        if !inbetween.is_empty() {
            out.extend_from_slice(inbetween.as_bytes());
            out.push(b'/');
        }
        out.extend_from_slice(name);
        out
    };
    let mut out = Vec::new();
    for consider_pseudo in [true, false] {
        if !consider_pseudo && !pseudo {
            break;
        }
        for inbetween in ["", "tags", "heads", "remotes"] {
            out.push(full(name, inbetween, consider_pseudo));
            if consider_pseudo && pseudo {
                break;
            }
        }
    }
    if name != "HEAD" {
        let head: BString = [name.as_bytes(), b"/HEAD"].concat().into();
        out.push(full(head.as_bstr(), "remotes", true));
    }
    out
}
