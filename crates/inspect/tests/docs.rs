//! `docs/findings.md` carries the rule table generated from the code.

use agentproto_inspect::rules::markdown_table;

const BEGIN: &str = "<!-- rules:begin -->\n";
const END: &str = "<!-- rules:end -->";

#[test]
fn the_findings_doc_lists_every_rule() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/findings.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(BEGIN).expect("begin marker") + BEGIN.len();
    let end = text.find(END).expect("end marker");
    let expected = markdown_table();
    if text[start..end] == expected {
        return;
    }
    if std::env::var_os("AGENTPROTO_BLESS").is_some() {
        std::fs::write(&path, format!("{}{expected}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    panic!(
        "docs/findings.md is out of date with crates/inspect/src/rules.rs; \
         run `AGENTPROTO_BLESS=1 cargo test -p agentproto-inspect --test docs`"
    );
}
