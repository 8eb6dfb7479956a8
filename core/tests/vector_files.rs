//! Every file of `tests/vectors/` has a Rust runner: here, or (for the
//! wire's layout, which the core does not know) in `bindings/wire/tests`. A
//! new rule's vectors cannot be added without the Rust side reading them.

use std::path::Path;

#[test]
fn every_vector_file_is_read_by_a_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wire_runners = root.join("../bindings/wire/tests");
    let runners: String = std::fs::read_dir(root.join("tests"))
        .expect("core/tests")
        .chain(std::fs::read_dir(&wire_runners).expect("bindings/wire/tests"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .map(|path| std::fs::read_to_string(path).expect("a runner"))
        .collect();
    let mut files = 0;
    for entry in std::fs::read_dir(root.join("../tests/vectors")).expect("tests/vectors") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_str().expect("a UTF-8 name");
        if !name.ends_with(".json") {
            continue;
        }
        files += 1;
        let call = format!("common::vectors(\"{name}\")");
        let wire_read = format!("/tests/vectors/{name}\")");
        assert!(
            runners.contains(&call) || runners.contains(&wire_read),
            "no runner in core/tests or bindings/wire/tests reads {name}"
        );
    }
    assert!(files >= 9, "only {files} vector files found");
}
