//! The README's A2A agent is `examples/echo-server.rs`, compiled by cargo; this keeps
//! the two the same text.

#[test]
fn the_readme_shows_the_compiled_example() {
    let example = include_str!("../examples/echo-server.rs");
    let readme = include_str!("../../../README.md");
    let block = format!("```rust,ignore\n{example}```");
    assert!(
        readme.contains(&block),
        "README.md must show crates/a2a/examples/echo-server.rs verbatim in a ```rust,ignore block"
    );
}
