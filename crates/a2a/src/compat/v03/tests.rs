//! What the generated tables add beyond the hand-written ones they replaced: the members
//! 0.3 requires, discriminators other than `kind`, the no-params request.

use serde_json::json;

use super::engine::convert;
use super::{method, to_v03, to_v1, Direction, Type};
use crate::generated::v03 as g;

#[test]
fn a_member_0_3_requires_is_written_when_1_0_leaves_it_out() {
    // 1.0 lets a push config's task id be empty; 0.3 requires `taskId`.
    let v1 = json!({"id": "c", "url": "https://example.com/hook"});
    let v03 = to_v03(Type::TaskPushNotificationConfig, &v1).unwrap();
    assert_eq!(v03, json!({"taskId": "", "pushNotificationConfig": {"id": "c", "url": "https://example.com/hook"}}));
    // Optional members stay absent.
    let task = to_v03(Type::Task, &json!({"id": "t", "status": {"state": "TASK_STATE_WORKING"}})).unwrap();
    assert_eq!(task, json!({"kind": "task", "id": "t", "contextId": "", "status": {"state": "working"}}));
}

#[test]
fn every_security_scheme_gets_its_type_and_a_wrong_one_is_refused() {
    let cases = [
        (json!({"apiKeySecurityScheme": {"location": "header", "name": "k"}}), "apiKey"),
        (json!({"httpAuthSecurityScheme": {"scheme": "bearer"}}), "http"),
        (
            json!({"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://example.com/t", "scopes": {}}}}}),
            "oauth2",
        ),
        (json!({"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://example.com"}}), "openIdConnect"),
        (json!({"mtlsSecurityScheme": {}}), "mutualTLS"),
    ];
    for (v1, tag) in cases {
        let v03 = convert(&g::SECURITY_SCHEME, Direction::ToV03, &v1, "$").unwrap();
        assert_eq!(v03["type"], tag);
        assert_eq!(convert(&g::SECURITY_SCHEME, Direction::ToV1, &v03, "$").unwrap(), v1);
    }
    let unknown = json!({"oauth2SecuritySchemes": {}});
    assert!(convert(&g::SECURITY_SCHEME, Direction::ToV03, &unknown, "$").is_err());
    let err = convert(&g::SECURITY_SCHEME, Direction::ToV1, &json!({"type": "bearer"}), "$.s").unwrap_err();
    assert!(err.to_string().contains("$.s.type"), "{err}");
}

#[test]
fn the_extended_card_method_has_no_0_3_params() {
    let m = method("agent/getAuthenticatedExtendedCard").unwrap();
    assert_eq!(m.params_to_v1(&json!(null)).unwrap(), json!({}));
    assert_eq!(m.params_to_v03(&json!({"tenant": "t"})).unwrap(), json!({}));
}

#[test]
fn a_wrong_kind_is_refused_with_its_path() {
    let err =
        to_v1(Type::Message, &json!({"kind": "task", "messageId": "m", "role": "user", "parts": []})).unwrap_err();
    assert!(err.to_string().contains("$.kind"), "{err}");
}
