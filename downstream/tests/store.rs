//! A plain test of a dependent crate: open a store on a small repository made by git and locate one packed object.
//! It must pass with and without `RUSTFLAGS="--cfg loom"` (see the crate's documentation).

use odb_index::{Location, ObjectId, Options, Store};
use odb_index_testkit::{all_objects, fast_import_blobs, init_repo};

#[test]
fn store_locates_a_packed_object() {
    let repo = init_repo("sha1", false);
    fast_import_blobs(repo.path(), 3, 1, "main");
    let id: ObjectId = all_objects(repo.path())[0]
        .parse()
        .expect("git's id parses");
    let store = Store::open(repo.path(), Options::default()).expect("store opens");
    let mut handle = store.handle();
    match handle.locate(&id).expect("lookup succeeds") {
        Some(Location::Packed { pack, offset }) => {
            assert!(offset >= 12, "an offset past the pack header, got {offset}");
            assert!(store.pack_path(pack).expect("pack is current").exists());
        }
        other => panic!("{id}: expected a packed object, got {other:?}"),
    }
    let absent: ObjectId = "0123456789012345678901234567890123456789"
        .parse()
        .expect("hex id");
    assert_eq!(handle.locate(&absent).expect("lookup succeeds"), None);
}
