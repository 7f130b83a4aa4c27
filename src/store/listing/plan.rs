//! The slot plan of a listing: which index file each slot of the slot map loads. Per pack directory, its
//! multi-pack-index (or the layers of its incremental chain) first, then the packs none of them covers; the
//! covered packs load last, after every directory's (by then a multi-pack-index has usually answered for them).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::scan::{ListedPack, MidxFiles};
use crate::data::{Data, LoadMode};
use crate::dir::Stamp;
use crate::error::Error;
use crate::midx::MultiPackIndex;
use crate::oid::{HashKind, ObjectId};
use crate::store::problem::Problem;
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: hands a file from the listing to the one load of its slot"
)]
use crate::sync::plain::{Arc, Mutex};

/// What one slot loads.
#[derive(Debug)]
pub(in crate::store) enum SlotSpec {
    /// A pack's `.idx`. `covered_by` is the slot of a multi-pack-index that lists this pack: if that loads, this
    /// slot loads nothing.
    Pack {
        pack: usize,
        covered_by: Option<usize>,
    },
    /// A multi-pack-index; `packs[i]` is the pack (index into `Listing::packs`) for pack-int-id `i`, and
    /// `names` the pack names it listed when the directory was listed (the file loaded later must list the same).
    Midx {
        names: Box<[OsString]>,
        path: PathBuf,
        stamp: Stamp,
        packs: Box<[Option<usize>]>,
        /// For a layer of an incremental chain: the checksum it is named after (and must end with).
        layer: Option<ObjectId>,
        /// The file as the listing opened it, for the slot's load to take (the file is opened once per
        /// listing; `None` once taken).
        #[expect(
            clippy::disallowed_types,
            reason = "sync::plain: handed once from the listing to the one load of its slot"
        )]
        opened: Mutex<Option<Box<OpenedMidx>>>,
    },
}

/// A multi-pack-index as the listing opened it.
#[derive(Debug)]
pub(in crate::store) enum OpenedMidx {
    /// Mapped ([`LoadMode::Mmap`]): its pack names were read; the rest is checked when the slot loads.
    Mapped(Data),
    /// Read whole and checked ([`LoadMode::Read`]: no mapping at all, even a short-lived one, since a file
    /// truncated in place would raise SIGBUS).
    Read(Box<MultiPackIndex>),
}

impl OpenedMidx {
    /// The first 8 bytes of the file's checksum (its trailer; read from the mapping, no system call), as
    /// [`Stamp::listed`] takes it. A file too short to have one was refused when its names were read.
    fn checksum_prefix(&self, kind: HashKind) -> u64 {
        match self {
            OpenedMidx::Mapped(d) => prefix_u64(
                d.get(d.len().saturating_sub(kind.len())..)
                    .unwrap_or_default(),
            ),
            OpenedMidx::Read(m) => prefix_u64(m.checksum().as_bytes()),
        }
    }
}

/// The first 8 bytes of `b` as a big-endian number (0-padded).
fn prefix_u64(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    let n = b.len().min(8);
    x[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(x)
}

/// The slots planned so far.
pub(in crate::store) struct Plan {
    kind: HashKind,
    /// How multi-pack-indices are read; `None`: they are not used (`Options::multi_pack_index` off).
    midx: Option<LoadMode>,
    slots: Vec<SlotSpec>,
    /// Packs a multi-pack-index covers: they go after every other slot ([`finish`](Self::finish)).
    covered: Vec<SlotSpec>,
    /// The multi-pack-index files of the pack directory being listed, opened by
    /// [`open_dir_midx`](Self::open_dir_midx) before its packs are `stat`ed, planned by
    /// [`pack_dir`](Self::pack_dir).
    pending: Vec<PendingMidx>,
}

/// A multi-pack-index opened, its slot not planned yet.
struct PendingMidx {
    path: PathBuf,
    layer: Option<ObjectId>,
    opened: OpenedMidx,
    names: Vec<OsString>,
    stamp: Stamp,
    /// The first 8 bytes of its checksum (its trailer), for the [`Stamp::listed`] of the packs it lists.
    checksum: u64,
}

/// One pack directory being planned: its packs are `packs[first..]`; `covered` maps each one a multi-pack-index
/// lists to that index's slot; `by_name` maps each pack's `.idx` file name to its index into `packs`, built once
/// per directory (not once per multi-pack-index: a chain of a thousand layers over a thousand packs made it a
/// million insertions).
struct DirPlan<'a> {
    covered: HashMap<usize, usize>,
    by_name: Option<HashMap<&'a OsStr, usize>>,
    packs: &'a [ListedPack],
    first: usize,
}

impl Plan {
    /// An empty plan; `midx`: how to read multi-pack-indices, if they are used.
    pub(in crate::store) fn new(kind: HashKind, midx: Option<LoadMode>) -> Plan {
        Plan {
            kind,
            midx,
            slots: Vec::new(),
            covered: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Open the multi-pack-index files `midx` of the pack directory `pack_dir` (the multi-pack-index or, if there
    /// is none, the layers of an incremental chain, as git does) and read their pack names, before the directory's
    /// packs are `stat`ed: returns the `.idx` names they list (the packs that need no `stat`), each with the
    /// first 8 bytes of the checksum of the file that lists it: a covered pack's id is kept while the same
    /// multi-pack-index lists the same `.idx` inode ([`Stamp::listed`]), so a pack deleted and made again under its
    /// name with other contents (and the freed inode number) gets a new id once a multi-pack-index lists it
    /// again. A file that cannot be read is a [`Problem`] and covers nothing. [`pack_dir`](Self::pack_dir) plans
    /// their slots.
    pub(in crate::store) fn open_dir_midx(
        &mut self,
        pack_dir: &Path,
        midx: MidxFiles,
        problems: &mut Vec<Problem>,
    ) -> HashMap<OsString, u64> {
        self.pending.clear();
        match (self.midx, midx) {
            (None, _) | (_, MidxFiles::None) => {}
            (Some(_), MidxFiles::Single) => {
                self.open_pending(pack_dir.join("multi-pack-index"), None, false, problems)
            }
            (Some(_), MidxFiles::Chain) => {
                match crate::midx::chain::read_chain(pack_dir, self.kind) {
                    Ok(Some(layers)) => {
                        // The layers the chain's directory lists as regular files are opened without a `stat`
                        // of their path first (one directory read instead of a `stat` per layer); the others
                        // (links, unknown types, a directory that cannot be read) are `stat`ed as before.
                        let seen = crate::dir::regular_entries(
                            &pack_dir.join(crate::midx::chain::CHAIN_DIR),
                        )
                        .unwrap_or_default();
                        for l in layers {
                            let listed = l
                                .path
                                .file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| seen.contains(n));
                            self.open_pending(l.path, Some(l.checksum), listed, problems);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => problems.push(Problem::MultiPackIndexIgnored {
                        path: crate::midx::chain::chain_path(pack_dir),
                        error: Arc::new(e),
                    }),
                }
            }
        }
        let mut covered = HashMap::new();
        for m in &self.pending {
            for n in &m.names {
                covered.entry(idx_name(n)).or_insert(m.checksum);
            }
        }
        covered
    }

    /// Plan the slots of the pack directory whose packs are `packs[first..]`: the multi-pack-index files
    /// [`open_dir_midx`](Self::open_dir_midx) opened, matched to the packs by name, then a slot per pack.
    pub(in crate::store) fn pack_dir(&mut self, packs: &[ListedPack], first: usize) {
        let mut dir = DirPlan {
            covered: HashMap::new(),
            by_name: None,
            packs,
            first,
        };
        for m in std::mem::take(&mut self.pending) {
            let map = dir.packs_named(&m.names);
            let slot = self.slots.len();
            for p in map.iter().flatten() {
                dir.covered.insert(*p, slot);
            }
            self.slots.push(SlotSpec::Midx {
                names: m.names.into(),
                path: m.path,
                stamp: m.stamp,
                packs: map,
                layer: m.layer,
                #[expect(clippy::disallowed_types, reason = "sync::plain: see the field")]
                opened: Mutex::new(Some(Box::new(m.opened))),
            });
        }
        for p in first..packs.len() {
            match dir.covered.get(&p) {
                Some(&m) => self.covered.push(SlotSpec::Pack {
                    pack: p,
                    covered_by: Some(m),
                }),
                None => self.slots.push(SlotSpec::Pack {
                    pack: p,
                    covered_by: None,
                }),
            }
        }
    }

    /// Open the multi-pack-index at `midx_path` (a pack directory's `multi-pack-index`, or a `layer` of its
    /// incremental chain) and read its pack names, for [`pack_dir`](Self::pack_dir). A file that cannot be read
    /// is a [`Problem`] and covers nothing; a `multi-pack-index` (not a chain layer) gone since the directory was
    /// read is not (git removed it).
    fn open_pending(
        &mut self,
        midx_path: PathBuf,
        layer: Option<ObjectId>,
        listed_regular: bool,
        problems: &mut Vec<Problem>,
    ) {
        match self.open_midx(&midx_path, listed_regular) {
            Ok((opened, names, stamp)) => self.pending.push(PendingMidx {
                path: midx_path,
                layer,
                // A layer is named after its checksum (a layer whose trailer says otherwise is refused when it
                // loads): no page of it is touched for that.
                checksum: match &layer {
                    Some(c) => prefix_u64(c.as_bytes()),
                    None => opened.checksum_prefix(self.kind),
                },
                opened,
                names,
                stamp,
            }),
            // A `multi-pack-index` removed since the directory was read (a gc or repack): as if it were not there,
            // as git has it. A layer the chain file names but that is not there stays a problem (git warns).
            Err(e) if layer.is_none() && e.is_vanished() => {}
            Err(e) => problems.push(Problem::MultiPackIndexIgnored {
                path: midx_path,
                error: Arc::new(e),
            }),
        }
    }

    /// Open the multi-pack-index at `path` once: the file (for its slot's load), its pack names and its stamp
    /// (from the descriptor opened: no second `stat`). `listed_regular`: its directory's listing said it is a
    /// regular file (then its path is not `stat`ed before it is opened).
    fn open_midx(
        &self,
        path: &Path,
        listed_regular: bool,
    ) -> Result<(OpenedMidx, Vec<OsString>, Stamp), Error> {
        let mode = self.midx.unwrap_or(LoadMode::Mmap);
        // Its bytes are read into memory whatever `mode` says (which only says when it is checked): a file
        // truncated in place under a mapping (same inode) would make the next lookup die of SIGBUS.
        let opened = if listed_regular {
            Data::open_seen_with_metadata(path, LoadMode::Read)
        } else {
            Data::open_with_metadata(path, LoadMode::Read)
        };
        let (data, md) = opened.map_err(|e| Error::io(path, e))?;
        let stamp = Stamp::from_metadata(&md);
        if mode == LoadMode::Read {
            let m = MultiPackIndex::from_data(data, path.to_path_buf(), self.kind)?;
            let names = m.pack_names().to_vec();
            return Ok((OpenedMidx::Read(Box::new(m)), names, stamp));
        }
        let names = crate::midx::pack_names_in(&data, path, self.kind)?;
        Ok((OpenedMidx::Mapped(data), names, stamp))
    }

    /// The slots in load order: multi-pack-indices and uncovered packs as planned, then the covered packs.
    pub(in crate::store) fn finish(mut self) -> Vec<SlotSpec> {
        self.slots.extend(self.covered);
        self.slots
    }
}

impl DirPlan<'_> {
    /// The pack (index into the listing's packs) of each of a multi-pack-index's pack `names`, among this
    /// directory's.
    fn packs_named(&mut self, names: &[OsString]) -> Box<[Option<usize>]> {
        let (packs, first) = (self.packs, self.first);
        let by_name = self.by_name.get_or_insert_with(|| {
            packs[first..]
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some((p.idx_path.file_name()?, first + i)))
                .collect()
        });
        names
            .iter()
            .map(|n| by_name.get(idx_name(n).as_os_str()).copied())
            .collect()
    }
}

/// The `.idx` file a multi-pack-index's pack name `n` stands for: `n` itself (`PNAM` names the `.idx`, what git
/// writes), or `<stem>.idx` for a `<stem>.pack` (git's `cmp_idx_or_pack_name` matches either). File names as
/// bytes, whatever they hold: a name that is not UTF-8 names its pack as git reads it.
pub(in crate::store) fn idx_name(n: &OsStr) -> OsString {
    let path = Path::new(n);
    match path.extension() {
        Some(ext) if ext == "pack" => path.with_extension("idx").into_os_string(),
        _ => n.to_owned(),
    }
}
