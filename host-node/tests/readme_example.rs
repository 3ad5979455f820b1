//! The crate README's worker service is `examples/service.rs`, which `cargo test`
//! builds: what a user copies from the README compiles.

#[test]
fn the_readme_holds_the_service_example_verbatim() {
    let readme = include_str!("../README.md");
    let example = include_str!("../examples/service.rs");
    assert!(readme.contains(example.trim()), "README.md must hold examples/service.rs verbatim");
}
