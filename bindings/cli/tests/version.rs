//! `mintid --version` names the tool's version and its core's: one version for every package.

use std::process::Command;

#[test]
fn version_names_the_tool_and_its_core() {
    let output = Command::new(env!("CARGO_BIN_EXE_mintid"))
        .arg("--version")
        .output()
        .expect("run mintid");
    assert!(output.status.success());
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("mintid {version} (core {version})\n")
    );
}
