//! The A2A guide's agent (`docs/a2a.md`) is `examples/echo-server.rs`, compiled by cargo;
//! this keeps the two the same text.

#[test]
fn the_guide_shows_the_compiled_example() {
    let example = include_str!("../examples/echo-server.rs");
    let guide = include_str!("../../../docs/a2a.md");
    let block = format!("```rust,ignore\n{example}```");
    assert!(
        guide.contains(&block),
        "docs/a2a.md must show crates/a2a/examples/echo-server.rs verbatim in a ```rust,ignore block"
    );
}
