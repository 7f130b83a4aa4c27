//! The workspace's own programs, as a test runs them.

use std::process::Command;

/// `cargo run -q -p <package> --example <name> --`, in the profile the calling test was built with (found from
/// the test binary's path, `target/<profile>/deps/<binary>`): `cargo test` built the example already, so this
/// only checks that it is up to date. Arguments go after it.
pub fn cargo_example(package: &str, name: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().unwrap().parent().unwrap().file_name().unwrap();
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.args(["run", "-q", "-p", package, "--example", name]);
    if profile == "release" {
        c.arg("--release");
    }
    c.arg("--");
    c
}
