//! `rev^{/text}` and `:/text`: the first commit whose message matches a regular expression, walked as git 2.47's
//! `get_oid_oneline` walks: a list of the starting commits in the order given, taken from the front, each
//! commit's parents queued by committer date (before the first of an older date), each commit once. (Later git
//! keeps the starting commits in a queue by date too, which changes `:/text` where a ref's commit is newer
//! than `HEAD`'s.)

use gix_hash::ObjectId;
use gix_object::Kind;
use gix_object::bstr::ByteSlice;
use regex_automata::meta::Regex;
use regex_automata::util::syntax;

use gix_object::bstr::BStr;

use crate::names::Resolver;
use crate::{Error, Objects};

/// A commit waiting in the walk: its committer date, id and contents.
struct Queued {
    date: i64,
    id: ObjectId,
    data: Vec<u8>,
}

/// The regular expression of `pattern` as git compiles it (`REG_EXTENDED`, no `REG_NEWLINE`: `.` matches a
/// newline, `^` and `$` the whole message's ends); `None` where it does not compile (git: no match).
fn compile(pattern: &[u8]) -> Option<Regex> {
    let pattern = std::str::from_utf8(pattern).ok()?;
    Regex::builder()
        .syntax(syntax::Config::new().dot_matches_new_line(true).utf8(false))
        .build(pattern)
        .ok()
}

/// The first commit of the walk from `starts`, in that order (each peeled from tags; what is not a commit is
/// left out), whose
/// message (what follows the headers' blank line) matches `pattern`, or with `negated` does not; `None` if
/// none does or `pattern` is no regular expression.
pub(crate) fn youngest_match(
    objects: &Objects,
    starts: &[ObjectId],
    pattern: &[u8],
    negated: bool,
) -> Result<Option<ObjectId>, Error> {
    let Some(re) = compile(pattern) else {
        return Ok(None);
    };
    let mut seen = gix_hashtable::HashSet::default();
    let mut queue: std::collections::VecDeque<Queued> = std::collections::VecDeque::new();
    for id in starts {
        if let Some(q) = read_commit(objects, *id, true)? {
            seen.insert(q.id);
            queue.push_back(q);
        }
    }
    let hash = objects.hash_kind();
    while let Some(q) = queue.pop_front() {
        let message = q.data.find(b"\n\n").map(|at| &q.data[at + 2..]);
        if negated ^ message.is_some_and(|m| re.is_match(m)) {
            return Ok(Some(q.id));
        }
        for parent in gix_object::CommitRefIter::from_bytes(&q.data, hash).parent_ids() {
            if seen.contains(&parent) {
                continue;
            }
            if let Some(p) = read_commit(objects, parent, false)? {
                seen.insert(parent);
                let at = queue.iter().position(|e| e.date < p.date);
                queue.insert(at.unwrap_or(queue.len()), p);
            }
        }
    }
    Ok(None)
}

/// The commit `id`, its tags peeled first when `peel` is set; `None` if it is absent or no commit.
fn read_commit(objects: &Objects, mut id: ObjectId, peel: bool) -> Result<Option<Queued>, Error> {
    let hash = objects.hash_kind();
    let mut data = Vec::new();
    loop {
        match objects.read(&id, &mut data)?.map(|i| i.kind) {
            Some(Kind::Commit) => break,
            Some(Kind::Tag) if peel => {
                id = gix_object::TagRefIter::from_bytes(&data, hash).target_id()?;
            }
            _ => return Ok(None),
        }
    }
    let date = gix_object::CommitRefIter::from_bytes(&data, hash)
        .committer()
        .map_or(0, |c| c.seconds());
    Ok(Some(Queued { date, id, data }))
}

impl Resolver<'_> {
    /// `rev^{/regex}` (from the current object, peeled to a commit; `rev^{/}` is that commit) or `:/regex` (no
    /// current object: from every ref and `HEAD`), as git searches ([`crate::message_search`]).
    pub(crate) fn search(
        &mut self,
        regex: &BStr,
        negated: bool,
    ) -> Result<Option<ObjectId>, Error> {
        let starts = if self.current.is_some() {
            let Some(commit) = self.peel_to(Some(Kind::Commit))? else {
                return Ok(None);
            };
            if regex.is_empty() {
                return Ok(Some(commit));
            }
            vec![commit]
        } else {
            self.every_ref()?
        };
        crate::message_search::youngest_match(self.objects, &starts, regex, negated)
    }

    /// What `HEAD` and every ref (symbolic refs followed) name, in the order git 2.47 walks them for `:/text`:
    /// `HEAD`, then the refs by name from the last (its `for_each_ref` and `head_ref` each put theirs first).
    fn every_ref(&self) -> Result<Vec<ObjectId>, Error> {
        let store = self.refs.store();
        let platform = store.iter().map_err(|source| Error::Refs {
            path: store.git_dir().to_owned(),
            source,
        })?;
        let all = platform.all().map_err(|source| Error::Io {
            path: store.git_dir().to_owned(),
            source,
        })?;
        // A ref that cannot be read is passed over, as git's iteration warns and passes it over.
        let names: Vec<gix_ref::FullName> = all.flatten().map(|r| r.name).collect();
        let mut ids = Vec::with_capacity(names.len() + 1);
        let head = [b"HEAD".as_bstr()];
        for name in head
            .into_iter()
            .chain(names.iter().rev().map(|n| n.as_bstr()))
        {
            if let Some(id) = Resolver::find_ref(self, name)? {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}
