//! Every rule has a script that triggers it (and nothing else) and a clean
//! script that triggers nothing at all: `tests/rules/<CODE>.txt`.

mod common;

use agentproto_inspect::RULES;
use common::Script;

fn describe(findings: &[agentproto_inspect::Finding]) -> String {
    findings.iter().map(|f| f.to_text(false)).collect::<Vec<_>>().join("\n")
}

#[test]
fn every_rule_has_a_trigger_and_a_clean_script() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules");
    let mut failures = Vec::new();
    for rule in RULES {
        let path = dir.join(format!("{}.txt", rule.code));
        let Ok(text) = std::fs::read_to_string(&path) else {
            failures.push(format!("{}: missing {}", rule.code, path.display()));
            continue;
        };
        let trigger = Script::section(&text, "trigger").findings();
        if trigger.is_empty() || trigger.iter().any(|f| f.rule.code != rule.code) {
            failures.push(format!("{}: the trigger script found:\n{}", rule.code, describe(&trigger)));
        }
        let clean = Script::section(&text, "clean").findings();
        if !clean.is_empty() {
            failures.push(format!("{}: the clean script found:\n{}", rule.code, describe(&clean)));
        }
    }
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, RULES.len(), "a script in tests/rules has no rule");
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
